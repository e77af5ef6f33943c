"""``python -m memeval.servers.fake_cortex``: the server in the foreground (see :mod:`.server`)."""

import sys

from memeval.servers.fake_cortex.server import main

sys.exit(main(prog="python -m memeval.servers.fake_cortex"))
