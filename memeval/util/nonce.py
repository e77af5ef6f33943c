"""The handshake between memeval and the servers it starts: a server started with
``MEMEVAL_SERVER_NONCE`` in its environment sends it back in the ``X-Memeval-Nonce`` header on
every answer, so whoever started it can tell it from another server on the same port. Kept in
a module of its own so the launcher and the servers share it without importing each other."""

NONCE_ENV = "MEMEVAL_SERVER_NONCE"
NONCE_HEADER = "X-Memeval-Nonce"
