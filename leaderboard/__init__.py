"""The leaderboard: validated lm-eval submissions, ranked with uncertainty.

* ``catalog`` - the tasks accepted, read from the shipped task YAMLs: versions, metric ranges, primary metric.
* ``schema`` - what a submission must be: model metadata (pydantic), results file and samples files checks.
* ``store`` - the DuckDB store: submissions, their status history, scores; raw files kept content-addressed.
* ``ranking`` - scores with 95% intervals, rank ranges, paired bootstrap comparisons.
* ``cli`` - ``neurips26 submit`` and ``neurips26 leaderboard``.
"""
