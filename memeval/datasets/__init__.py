"""The generic plumbing for published benchmark files (each benchmark's own reader, mapping,
graders and tables are its subpackage under :mod:`memeval.benchmarks`; verifying, selecting and
importing a file are :mod:`memeval.benchmarks.source` and :mod:`memeval.benchmarks.importer`).

- :mod:`.stream`: a bounded-memory JSON array reader that hashes the file as it reads it.
- :mod:`.fields`: field access at the JSON edge, with one-line errors naming file and field.
- :mod:`.yamlout`: the helpers an import writes ordinary memeval YAML with.
- :mod:`.generate`: synthetic needle-in-a-haystack files of any size (``memeval generate``).
"""
