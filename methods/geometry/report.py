"""Geometry runs as lm-eval-shaped files, tables with 95% intervals, and the plots.

Each baseline's run on a family's standard set is written by :func:`neurips26.runfiles.write_run` under the
family's task (``geometry_<family>``); set-level scores (the motion family's collapse ratio, specificity,
pairwise diversity) go under the results' ``geometry`` key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from neurips26 import runfiles
from neurips26.output import save_figure
from neurips26.protocol import PROTOCOLS

from .core import mean_ci
from .protocol import VERSION

TABLE_METRICS = {
    "segmentation": ("boundary_iou", "dice", "hd95", "assd", "nsd", "boundary_f"),
    "contours": ("ef_abs_error", "edv_rel_error", "esv_rel_error", "hausdorff", "mean_distance"),
    "motion": ("motion_skill", "motion_rmse", "rmse_population_mean"),
    "surfaces": ("fscore", "chamfer_l1", "accuracy", "completeness", "normal_consistency"),
}
SET_METRICS = ("collapse_ratio", "specificity", "pairwise_ratio", "pairwise_r", "identification")


def write(folder: Path, family: str, name: str, rows: Sequence[Mapping[str, Any]], data: Mapping[str, Any],
          settings: Mapping[str, Any]) -> Path:
    """Write one baseline's run of ``family``; the results file's path."""
    task = f"geometry_{family}"
    metrics = list(PROTOCOLS.info(task)["metrics"])
    set_scores = next((r["set_scores"] for r in rows if "set_scores" in r), None)
    clean = [{k: v for k, v in r.items() if k != "set_scores"} for r in rows]
    return runfiles.write_run(folder, task, clean, metrics=metrics, model_name=f"geometry-{name}",
                              model_args={"baseline": name}, data=data, version=VERSION, model="geometry",
                              settings=dict(settings), sections={"geometry": {"set_scores": set_scores}}
                              if set_scores else None)


def summary(family: str, runs: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Per baseline: each table metric's mean and 95% bootstrap interval, and the set-level scores."""
    out = []
    for name, rows in runs.items():
        row: dict[str, Any] = {"baseline": name, "n": len(rows)}
        for metric in TABLE_METRICS[family]:
            row[metric] = mean_ci([r[metric] for r in rows])
        scores = next((r["set_scores"] for r in rows if "set_scores" in r), {})
        row.update({k: scores[k] for k in SET_METRICS if k in scores})
        out.append(row)
    return out


def by_doc_key(family: str, runs: Mapping[str, Sequence[Mapping[str, Any]]], key: str) -> list[dict[str, Any]]:
    """:func:`summary` per value of the documents' ``key`` (the segmentation grid scale, the surface input kind):
    rows named ``<baseline> @ <value>``."""
    split = {f"{name} @ {value}": [r for r in rows if r["doc"][key] == value]
             for name, rows in runs.items() for value in sorted({r["doc"][key] for r in rows})}
    return summary(family, split)


def markdown(family: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """A markdown table: each metric as ``mean [low, high]``."""
    extra = [k for k in SET_METRICS if any(k in r for r in rows)]
    head = ["baseline", "n", *TABLE_METRICS[family], *extra]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["baseline"], str(r["n"])]
        cells += [f"{r[m][0]:.3f} [{r[m][1]:.3f}, {r[m][2]:.3f}]" for m in TABLE_METRICS[family]]
        cells += [f"{r[k]:.3f}" for k in extra]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_by(family: str, runs: Mapping[str, Sequence[Mapping[str, Any]]], path: Path) -> Path:
    """contours: errors against K; segmentation: Boundary IoU and HD95 against the grid scale; else by baseline."""
    import matplotlib  # lazy: plotting is only needed by `neurips26 geometry bench`

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: as above

    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    if family == "contours":
        ks = {name: int(name.removeprefix("efd_k")) for name in runs if name.startswith("efd_k")}
        for axis, metric in zip(axes, ("ef_abs_error", "mean_distance"), strict=True):
            stats = [mean_ci([r[metric] for r in runs[n]]) for n in ks]
            axis.errorbar(list(ks.values()), [s[0] for s in stats], yerr=[[s[0] - s[1] for s in stats],
                                                                           [s[2] - s[0] for s in stats]],
                          marker="o", label="elliptic Fourier fit")
            if "polygon" in runs:
                axis.axhline(mean_ci([r[metric] for r in runs["polygon"]])[0], color="grey", ls="--",
                             label="polygon (no fit)")
            axis.set_xlabel("harmonics K")
            axis.set_ylabel(metric)
            axis.legend()
    elif family == "segmentation":
        for axis, metric in zip(axes, ("boundary_iou", "hd95"), strict=True):
            for name, rows in runs.items():
                scales = sorted({r["doc"]["scale"] for r in rows})
                axis.plot(scales, [mean_ci([r[metric] for r in rows if r["doc"]["scale"] == s])[0] for s in scales],
                          marker="o", label=name)
            axis.set_xscale("log", base=2)
            axis.set_xlabel("grid scale (x native)")
            axis.set_ylabel(metric)
            axis.legend()
    else:
        for axis, metric in zip(axes, TABLE_METRICS[family][:2], strict=True):
            names = list(runs)
            stats = [mean_ci([r[metric] for r in runs[n]]) for n in names]
            axis.bar(names, [s[0] for s in stats], yerr=[[s[0] - s[1] for s in stats], [s[2] - s[0] for s in stats]])
            axis.set_ylabel(metric)
    figure.suptitle(f"geometry {family}: baselines with 95% intervals")
    return save_figure(figure, path, dpi=110)
