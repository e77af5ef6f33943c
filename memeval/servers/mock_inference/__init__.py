"""The mock inference server: an OpenAI-compatible endpoint with deterministic hashed embeddings, empty extraction and extractive answers (:mod:`.server`; the models in :mod:`.models`).

``python -m memeval.servers.mock_inference`` runs :func:`.server.main`."""
