"""The field's published memory benchmarks (LongMemEval, LoCoMo) as memeval inputs.

- :mod:`.stream`: a bounded-memory JSON array reader that hashes the file as it reads it.
- :mod:`.longmemeval`, :mod:`.locomo`: the files' fields to typed values (:mod:`.model`),
  with one-line errors naming the file and the field.
- :mod:`.source`: verify a whole file (format, sha256, variant), select questions, stream units.
- :mod:`.importer`: write a selection as ordinary memeval YAML (``memeval import``).
- :mod:`.graders`, :mod:`.judge`: the benchmarks' official scoring as pure functions.
- the headline tables are in :mod:`memeval.score.tables`, the report section in :mod:`memeval.report.benchmark`.
- :mod:`.generate`: synthetic needle-in-a-haystack files of any size (``memeval generate``).
"""
