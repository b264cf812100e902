"""Measure the scorers against the LOCUS gold set's ``dev`` part, next to the annotators' own agreement.

The gold folder's ``dev.jsonl`` (``corpora/locus/goldset.py``): 90 real sections labelled in three independent
passes with the LOCUS-v1 codebook (majority labels, vote counts, every annotator's labels). Per field:

- function, topic (on the sections the majority calls substantive), is_substantive: accuracy and macro-F1
  against the majority; the ceiling is the mean over annotator pairs of the same metric, with Fleiss' kappa;
- opacity, paternalism: Spearman correlation with the annotators' mean; the ceiling is the mean pairwise
  Spearman between annotators;
- max_fine_usd, max_jail_days: exact match over all sections (none = none counts); the annotators' passes
  agree exactly (gold README).

The default backend's heads are evaluated out of fold (5-fold cross-validation on ``dev``; a built corpus's
weak labels join every fold's training when given), never with the shipped heads, which have seen all of
``dev``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from neurips26.corpora.locus.goldset import read_gold

from neurips26 import settings
from neurips26.output import save_figure

from . import fines, heads, opacity

__all__ = ["read_gold", "default_gold_dir", "evaluate", "ceilings", "default_predictions", "plot"]
ANNOTATORS = (1, 2, 3)


def default_gold_dir() -> Path:
    """The gold folder: ``settings.locus_gold_dir()`` (``$NEURIPS26_LOCUS_GOLD``)."""
    return settings.locus_gold_dir()


def fleiss_kappa(ratings: Sequence[Sequence]) -> float:
    """Fleiss' kappa of items rated by the same number of raters (``ratings[i]`` = the raters' labels)."""
    categories = sorted({str(v) for item in ratings for v in item})
    counts = np.array([[sum(str(v) == c for v in item) for c in categories] for item in ratings], dtype=float)
    n = counts.sum(1)[0]
    p_item = ((counts**2).sum(1) - n) / (n * (n - 1))
    p_cat = counts.sum(0) / counts.sum()
    expected = (p_cat**2).sum()
    return float((p_item.mean() - expected) / (1 - expected)) if expected < 1 else 1.0


def accuracy_f1(truth: Sequence, pred: Sequence) -> tuple[float, float]:
    from sklearn.metrics import accuracy_score, f1_score

    t, p = [str(v) for v in truth], [str(v) for v in pred]
    return float(accuracy_score(t, p)), float(f1_score(t, p, average="macro", labels=sorted(set(t)),
                                                       zero_division=0))


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic)


@dataclass
class Line:
    field: str
    metric: str
    value: float
    ceiling: float | None
    baseline: float | None
    n: int
    note: str = ""


def ceilings(gold: list[dict]) -> dict[str, dict]:
    """Annotator agreement per field: mean pairwise accuracy / macro-F1 / Spearman, Fleiss' kappa."""
    pairs = list(itertools.combinations(ANNOTATORS, 2))
    out: dict[str, dict] = {}
    for name in ("function", "is_substantive", "topic"):
        rows = [r for r in gold if r["is_substantive"]] if name == "topic" else gold
        if not all(f"annotator{a}_{name}" in r for r in rows for a in ANNOTATORS):
            continue
        labels = [[r[f"annotator{a}_{name}"] for a in ANNOTATORS] for r in rows]
        scores = [accuracy_f1([x[i - 1] for x in labels], [x[j - 1] for x in labels]) for i, j in pairs]
        out[name] = {"accuracy": float(np.mean([s[0] for s in scores])),
                     "macro_f1": float(np.mean([s[1] for s in scores])), "kappa": fleiss_kappa(labels)}
    for name in ("opacity", "paternalism"):
        if all(f"annotator{a}_{name}" in r for r in gold for a in ANNOTATORS):
            out[name] = {"spearman": float(np.mean([spearman([r[f"annotator{i}_{name}"] for r in gold],
                                                             [r[f"annotator{j}_{name}"] for r in gold])
                                                    for i, j in pairs]))}
    return out


def majority_baseline(values: Sequence) -> tuple[float, float]:
    most = max(set(map(str, values)), key=[str(v) for v in values].count)
    return accuracy_f1(values, [most] * len(values))


def evaluate(gold: list[dict], pred: dict[str, list]) -> list[Line]:
    """Lines of the gold table for one backend's predictions (keys as in the ``scores`` config)."""
    ceil = ceilings(gold)
    lines = []
    for name, truth_key in (("function", "function_majority"), ("is_substantive", "is_substantive"),
                            ("topic", "topic_majority")):
        if pred.get(name) is None:
            continue
        idx = [i for i, r in enumerate(gold) if r["is_substantive"]] if name == "topic" else range(len(gold))
        truth = [gold[i][truth_key] for i in idx]
        acc, f1 = accuracy_f1(truth, [pred[name][i] for i in idx])
        base = majority_baseline(truth)
        c = ceil.get(name, {})
        note = f"Fleiss kappa {c['kappa']:.2f}" if c else ""
        lines += [Line(name, "accuracy", acc, c.get("accuracy"), base[0], len(truth), note),
                  Line(name, "macro-F1", f1, c.get("macro_f1"), base[1], len(truth), note)]
    for name in ("opacity", "paternalism"):
        if pred.get(name) is not None:
            lines.append(Line(name, "Spearman", spearman([r[f"{name}_mean"] for r in gold], pred[name]),
                              ceil.get(name, {}).get("spearman"), None, len(gold), "vs mean of 3; ceiling pairwise"))
    for name in ("max_fine_usd", "max_jail_days"):
        if pred.get(name) is not None:
            hits = [_same(r[name], p) for r, p in zip(gold, pred[name], strict=True)]
            stated = [h for r, h in zip(gold, hits, strict=True) if r[name] is not None]
            lines.append(Line(name, "exact match", float(np.mean(hits)), 1.0,
                              float(np.mean([r[name] is None for r in gold])), len(gold),
                              f"{sum(stated)}/{len(stated)} of the sections that state one"))
    return lines


def _same(a: float | None, b: float | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(float(a) - float(b)) < 0.005)


def default_predictions(gold: list[dict], weak_folder: Path | None = None, folds: int = 5) -> dict[str, list]:
    """The default backend on the gold texts: heads out of fold (plus ``weak_folder``'s weak labels when
    given), opacity and fines by rule."""
    headings, texts = [r["heading"] for r in gold], [r["text"] for r in gold]
    weak = heads.weak_rows(weak_folder) if weak_folder is not None else []
    weak_x = heads.embed([r["heading"] for r in weak], [r["text"] for r in weak]) if weak else None
    pred = heads.cross_validate(heads.embed(headings, texts), gold, weak_x, weak, folds=folds)
    pred["opacity"] = [opacity.measure(t).opacity for t in texts]
    extracted = [fines.extract(t) for t in texts]
    pred["max_fine_usd"] = [e.max_fine_usd for e in extracted]
    pred["max_jail_days"] = [e.max_jail_days for e in extracted]
    return pred


def plot(lines: list[Line], path: Path, title: str) -> None:
    """Bar chart of the table: backend, annotator ceiling and majority baseline per field and metric."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [f"{line.field}\n{line.metric}" for line in lines]
    x = np.arange(len(lines))
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(lines)), 4))
    for offset, label, values in ((-0.27, "backend", [line.value for line in lines]),
                                  (0.0, "annotators (ceiling)", [line.ceiling or 0 for line in lines]),
                                  (0.27, "majority baseline", [line.baseline or 0 for line in lines])):
        ax.bar(x + offset, values, width=0.27, label=label)
    ax.set_xticks(x, names, fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.legend(fontsize=8)
    save_figure(fig, path)
