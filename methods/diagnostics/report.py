"""The signature table of a run (``neurips26 diagnose RESULTS_DIR``), its file, comparisons and the bar plot.

:func:`diagnose` runs every registered signature over every task of a run that has a samples file and returns
one row per (task, signature) that applies; :func:`write` puts them beside the results as
``signatures_<results stem>.json`` (what the leaderboard stores with a submission and the Space shows);
:func:`compare` sets two runs side by side, signature by signature, with the difference of rates and its 95%
interval (Newcombe's method from the two Wilson intervals).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from neurips26.output import save_figure
from neurips26.results import Run
from neurips26.stats import wilson

from .signatures import SIGNATURES
from .views import task_view

EXAMPLES = 3  # example documents kept per row
FILE_PREFIX = "signatures_"


def _example(doc: Any) -> dict[str, Any]:
    answer = doc.text if doc.text is not None else (doc.choices[doc.chosen] if doc.choices and doc.chosen is not None
                                                     else None)
    return {"doc_id": doc.doc_id, "answer": (answer or "")[:200], "target": (doc.target or "")[:200]}


def diagnose(run: Run, count_tokens: Callable[[str], int] | None = None) -> list[dict[str, Any]]:
    """One row per (task, applicable signature) of ``run``: counts, rate with its Wilson 95% interval, whether it
    fires, the detail line and up to :data:`EXAMPLES` example documents."""
    rows = []
    for name, task in sorted(run.tasks.items()):
        if task.samples is None:
            continue
        view = task_view(task, count_tokens)
        by_id = {d.doc_id: d for d in view.docs}
        for signature in SIGNATURES.names():
            finding = SIGNATURES.get(signature)(view)
            if finding is None:
                continue
            info = SIGNATURES.info(signature)
            low, high = finding.interval()
            rows.append({"model": run.model_name, "task": name, "signature": signature, "family": info["family"],
                         "intervention": info["intervention"], "n": finding.n, "failures": len(view.failures),
                         "count": finding.count, "rate": finding.rate, "low": low, "high": high,
                         "fires": finding.fires, "detail": finding.detail,
                         "examples": [_example(by_id[i]) for i in finding.doc_ids[:EXAMPLES]]})
    return rows


def write(rows: Sequence[dict[str, Any]], folder: Path, run: Run) -> Path:
    """Write the rows beside the run's results file; the file's path."""
    results = sorted(folder.rglob("results_*.json"), key=lambda p: p.name)[-1] if folder.is_dir() else folder
    path = results.with_name(FILE_PREFIX + results.stem.removeprefix("results_") + ".json")
    path.write_text(json.dumps({"model": run.model_name, "signatures": list(rows)}, indent=1), encoding="utf-8")
    return path


def totals(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per signature over all tasks: tasks where it fires, documents showing it / documents considered."""
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        item = out.setdefault(row["signature"], {"signature": row["signature"], "family": row["family"],
                                                 "intervention": row["intervention"], "fires_in": [], "count": 0,
                                                 "n": 0})
        item["count"] += row["count"]
        item["n"] += row["n"]
        if row["fires"]:
            item["fires_in"].append(row["task"])
    return list(out.values())


def _newcombe(a: tuple[int, int], b: tuple[int, int]) -> tuple[float, float, float]:
    """Difference of two proportions (count, n) with Newcombe's hybrid Wilson 95% interval."""
    (ka, na), (kb, nb) = a, b
    pa, pb = ka / na if na else 0.0, kb / nb if nb else 0.0
    la, ha = (float(v) for v in wilson(pa, na))
    lb, hb = (float(v) for v in wilson(pb, nb))
    diff = pa - pb
    return diff, diff - math.hypot(pa - la, hb - pb), diff + math.hypot(ha - pa, pb - lb)


def compare(first: Sequence[dict[str, Any]], second: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Two runs' rows matched by (task, signature): both rates and their difference with its 95% interval."""
    other = {(r["task"], r["signature"]): r for r in second}
    rows = []
    for row in first:
        match = other.get((row["task"], row["signature"]))
        if match is None:
            continue
        diff, low, high = _newcombe((row["count"], row["n"]), (match["count"], match["n"]))
        rows.append({"task": row["task"], "signature": row["signature"], "a": row["rate"], "b": match["rate"],
                     "a_fires": row["fires"], "b_fires": match["fires"], "difference": diff, "low": low,
                     "high": high, "significant": low > 0 or high < 0})
    return rows


def plot(rows: Sequence[dict[str, Any]], path: Path, title: str = "") -> Path:
    """Bars: the share of documents showing each signature over all tasks, with 95% intervals; firing ones dark."""
    import matplotlib  # lazy: plotting only

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    items = sorted(totals(rows), key=lambda t: (t["family"], t["signature"]))
    rates = [t["count"] / t["n"] if t["n"] else 0.0 for t in items]
    lows, highs = zip(*[(float(a), float(b)) for a, b in (wilson(r, t["n"]) for r, t in zip(rates, items,
                                                                                             strict=True))],
                      strict=True) if items else ((), ())
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(items) + 1.2))
    y = range(len(items))
    ax.barh(list(y), rates, xerr=[[r - lo for r, lo in zip(rates, lows, strict=True)],
                                  [hi - r for r, hi in zip(rates, highs, strict=True)]],
            color=["#b03a2e" if t["fires_in"] else "#aab7b8" for t in items], capsize=3)
    ax.set_yticks(list(y), [f"{t['signature']} ({t['intervention']})" for t in items])
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of documents (95% interval); dark: fires in at least one task")
    ax.set_title(title or "failure signatures")
    ax.invert_yaxis()
    return save_figure(fig, path)
