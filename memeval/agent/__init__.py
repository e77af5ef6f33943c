"""The agent-memory lifecycle on top of any engine (:mod:`.lifecycle`), the pack it assembles
(:mod:`.pack`) and which of two values is the fresher (:mod:`.freshness`)."""
