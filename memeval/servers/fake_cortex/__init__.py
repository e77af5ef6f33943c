"""memeval's fake CortexDB: the documented wire semantics on a loopback port (:mod:`.server` starts it; :mod:`.routes`, :mod:`.store`, … implement it; :mod:`.hosted` is the TinyHumans-style hosted front).

``python -m memeval.servers.fake_cortex`` runs :func:`.server.main`."""
