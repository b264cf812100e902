"""The leaderboard: lm-eval submissions checked against the task protocols, scores recomputed from their samples,
ranked with uncertainty.

* ``metrics`` - the metric registry: range, direction, how each is recomputed from a samples row.
* ``catalog`` - the tasks accepted, read from the task YAMLs: versions, protocols, metrics.
* ``modelinfo`` - what a submission says about its model (pydantic), text cleaned of markup.
* ``validate`` - results file and samples checks (read by ``neurips26.results``), scores recomputed.
* ``intake`` - a submission on its way in: parsed, checked, its rows prepared.
* ``tables`` - the DuckDB layout: tables, statuses, rows written, entries read back.
* ``store`` - the store: connections under a file lock, submissions, scores; raw files kept content-addressed.
* ``ranking`` - scores with 95% intervals, rank ranges, the normalised overall, paired bootstrap comparisons.
* ``cli`` - ``neurips26 submit`` and ``neurips26 leaderboard``.
"""
