"""Rollout runs as lm-eval-shaped files, the comparison table and the success/smoothness plot.

One run (a policy at one control rate over a set of seeds) is written by :func:`neurips26.runfiles.write_run`:
one samples row per seed whose response is the rollout as JSON (``rate_hz``, the coverage after every step, the
commanded actions), from which the leaderboard recomputes every metric (``leaderboard/metrics.py``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from neurips26 import runfiles
from neurips26.output import save_figure

from .evaluate import Rollout
from .protocol import METRICS, TASK, TASK_VERSION

COLUMNS = (("method", "method", "{}"), ("rate_hz", "Hz", "{:g}"), ("n", "seeds", "{}"),
           ("rollout_success", "success", "{:.2f}"), ("success_interval", "95% interval", "{}"),
           ("max_coverage", "coverage", "{:.3f}"), ("mean_sq_jerk", "jerk (log10)", "{}"),
           ("high_freq_energy", "HF energy", "{:.3f}"), ("diff_energy", "diff energy", "{:.1f}"))


def rollout_rows(runs: Sequence[Rollout], max_seconds: float) -> list[dict[str, Any]]:
    """One samples row per rollout: the seed as the document, the rollout as the response, its metric values."""
    return [{"doc_id": i, "doc": {"seed": run.seed},  # the document is the initial state; rate etc. are settings
             "target": {"success_coverage": 0.95},
             "response": json.dumps({"rate_hz": run.rate_hz, "max_seconds": max_seconds, "coverage": run.coverage,
                                     "actions": run.actions}),
             **run.metrics()} for i, run in enumerate(runs)]


def write_run(folder: Path, runs: Sequence[Rollout], *, model_name: str, model_args: Mapping[str, Any],
              data: Mapping[str, Any], settings: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> Path:
    """Write the results and samples files of one rollout run into ``folder``; the results file's path."""
    return runfiles.write_run(folder, TASK, rollout_rows(runs, float(settings["max_seconds"])), metrics=list(METRICS),
                              model_name=model_name, model_args=model_args, data=data, version=TASK_VERSION,
                              model="neurips26-actions", settings=settings, extra=extra)


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text table of run summaries (each an :func:`~.evaluate.summary` dict plus method, rate_hz, n)."""
    def cell(row: Mapping[str, Any], key: str, fmt: str) -> str:
        if key == "success_interval":
            return f"[{row['success_low']:.2f}, {row['success_high']:.2f}]"
        if key == "mean_sq_jerk":
            return f"{math.log10(max(row[key], 1e-12)):.2f}"
        return fmt.format(row[key])

    cells = [[title for _, title, _ in COLUMNS]] + [[cell(row, k, f) for k, _, f in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join([lines[0], "-" * len(lines[0]), *lines[1:]])


def plot(rows: Sequence[Mapping[str, Any]], path: Path) -> Path:
    """Coverage and success (with 95% intervals) and smoothness (log10 jerk) per method, at each rate."""
    import matplotlib  # lazy: plotting is only needed by `neurips26 actions compare`

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: as above

    figure, (quality, smooth) = plt.subplots(1, 2, figsize=(max(10, 1.1 * len(rows)), 5))
    labels = [f"{r['method']} {r['rate_hz']:g} Hz" for r in rows]
    x = range(len(rows))
    quality.bar([i - 0.2 for i in x], [r["max_coverage"] for r in rows], 0.4, label="mean max coverage")
    quality.bar([i + 0.2 for i in x], [r["rollout_success"] for r in rows], 0.4, label="success rate",
                yerr=[[r["rollout_success"] - r["success_low"] for r in rows],
                      [r["success_high"] - r["rollout_success"] for r in rows]], capsize=3)
    quality.set_ylim(0, 1)
    quality.legend()
    smooth.bar(list(x), [math.log10(max(r["mean_sq_jerk"], 1e-12)) for r in rows], color="tab:green")
    smooth.set_ylabel("log10 mean squared jerk (lower is smoother)")
    for axis in (quality, smooth):
        axis.set_xticks(list(x), labels, fontsize=8, rotation=40, ha="right")
        axis.grid(alpha=0.3, axis="y")
    figure.suptitle("PushT rollouts: success and smoothness per method")
    return save_figure(figure, path)
