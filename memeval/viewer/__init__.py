"""``memeval view``: a local web app over a runs folder.

- :mod:`memeval.viewer.index`: the SQLite index beside the runs (one row per run and per KPI),
  rebuilt from the run.json files that changed; the records stay the only source of truth.
- :mod:`memeval.viewer.pages`: the view models of the run list, a run, a comparison, a
  leaderboard and a trend, rendered with the report's sandboxed, autoescaped Jinja environment.
- :mod:`memeval.viewer.server`: the HTTP server (stdlib ``ThreadingHTTPServer``) on loopback,
  which answers a run only by its key in the index, so no path from a URL is ever opened.
"""
