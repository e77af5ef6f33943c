"""``python -m memeval.servers.mock_inference``: the server in the foreground (see :mod:`.server`)."""

import sys

from memeval.servers.mock_inference.server import main

sys.exit(main(prog="python -m memeval.servers.mock_inference"))
