"""The generic plumbing for published benchmark files (each benchmark's own reader, mapping,
graders and tables are its subpackage under :mod:`memeval.benchmarks`).

- :mod:`.stream`: a bounded-memory JSON array reader that hashes the file as it reads it.
- :mod:`.fields`: field access at the JSON edge, with one-line errors naming file and field.
- :mod:`.source`: verify a whole file (format, sha256, variant), select questions, stream units.
- :mod:`.importer`: write a selection as ordinary memeval YAML (``memeval import``), with the
  helpers of :mod:`.yamlout`.
- :mod:`.generate`: synthetic needle-in-a-haystack files of any size (``memeval generate``).
"""
