"""Statistics: exact rates with Wilson intervals, percentiles, means and paired tests
(:mod:`.basic`), and uncertainty over clusters (:mod:`.clustered`). No "no data" ever becomes a
number."""
