"""memeval's own loopback test servers: real processes on 127.0.0.1, standard library only.

- :mod:`memeval.servers.fake_cortex.server`: a fake CortexDB following the documented wire semantics
  (``reference/cortexdb-wire.md``), optionally in the hosted TinyHumans shape;
- :mod:`memeval.servers.mock_inference.server`: an OpenAI-compatible mock model endpoint;
- :mod:`memeval.servers.launch`: start either as a subprocess and learn its URL.

They are test doubles for memeval's HTTP adapters and for flag sweeps, never engines to
evaluate: ranking is by keyword counts and models are extractive stand-ins.
"""
