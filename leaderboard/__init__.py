"""The leaderboard: lm-eval submissions checked against the task protocols, scores recomputed from their samples,
ranked with uncertainty.

* ``metrics`` - the metric registry: range, direction, how each is recomputed from a samples row.
* ``catalog`` - the tasks accepted, read from the task YAMLs: versions, protocols, metrics.
* ``modelinfo`` - what a submission says about its model (pydantic), text cleaned of markup.
* ``validate`` - results file checks (read by ``neurips26.results``) and how a run differs from its protocols.
* ``recompute`` - samples checks: every score recomputed from the samples, targets against the gold ones.
* ``intake`` - a submission on its way in: parsed, checked, its rows prepared.
* ``tables`` - the DuckDB layout: tables, statuses, rows written, entries read back.
* ``store`` - the store: connections under a file lock, submissions, scores; raw files kept content-addressed.
* ``ranking`` - scores with 95% intervals, rank ranges, the normalised overall mean.
* ``compare`` - paired bootstrap comparisons of two submissions, document by document.
* ``cli`` - ``neurips26 submit`` and ``neurips26 leaderboard``.
"""
