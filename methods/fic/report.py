"""FiC evaluations as files: transcripts, lm-eval-shaped runs per task type, a P/A/U table and the plot.

An evaluation folder holds ``transcripts_<task_type>.jsonl`` (one record per simulation: the messages, what each
assistant turn was, the final answer, its score), ``<task_type>/results_*.json`` + ``samples_fic_<type>_*.jsonl``
(one row per instruction with every simulation's score per setting; :func:`neurips26.results.read_run` and the
leaderboard read them) and ``summary.json`` (P, A, U with 95% intervals per task type and setting, and the
degradation).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from neurips26 import runfiles
from neurips26.output import save_figure

from . import pau
from .protocol import METRICS, TASK_VERSION, task_name
from .simulator import SETTINGS


def summary(scores: Mapping[str, Mapping[str, Sequence[float]]]) -> dict[str, Any]:
    """Per setting P, A, U and intervals, and the degradation full -> sharded, of one task type."""
    out: dict[str, Any] = {setting: pau.summarise(scores[setting]) for setting in SETTINGS if setting in scores}
    if "full" in scores and "sharded" in scores:
        out.update(pau.degradation(scores["full"], scores["sharded"]))
    return out


def instruction_rows(rows: Sequence[Mapping[str, Any]], scores: Mapping[str, Mapping[str, Sequence[float]]],
                     records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One samples row per instruction: its per-setting simulation scores, P/A/U values and final answers."""
    answers: dict[str, dict[str, list]] = {}
    for record in records:
        answers.setdefault(record["task_id"], {}).setdefault(record["setting"], []).append(record["answer"])
    out = []
    for i, row in enumerate(rows):
        per_setting = {s: list(scores[s][row["task_id"]]) for s in SETTINGS if s in scores}
        values = {f"fic_{m.lower()}_{s}": fn(v)
                  for s, v in per_setting.items() for m, fn in pau.PER_INSTRUCTION.items()}
        main = answers.get(row["task_id"], {}).get("sharded") or [None]
        out.append({"doc_id": i, "doc": {"task_id": row["task_id"], "task_type": row["task_type"],
                                         "shards": list(row["shards"]), "full_prompt": row["full_prompt"]},
                    "target": row["reference"], "response": main[0] or "", "simulation_scores": per_setting,
                    "answers": answers.get(row["task_id"], {}), **values})
    return out


def write_run(folder: Path, task_type: str, rows: Sequence[Mapping[str, Any]],
              records: Sequence[Mapping[str, Any]], scores: Mapping[str, Mapping[str, Sequence[float]]], *,
              model_name: str, model_args: Mapping[str, Any], data: Mapping[str, Any],
              settings: Mapping[str, Any], chat_template: str) -> Path:
    """Write one task type's run (results + samples, lm-eval's shape) into ``folder``; the results file.
    ``chat_template``: the template the backend applied turn by turn (recorded as lm-eval records it)."""
    metrics = [m for m in METRICS if m.rsplit("_", 1)[1] in scores]
    return runfiles.write_run(
        folder, task_name(task_type), instruction_rows(rows, scores, records), metrics=metrics,
        model_name=model_name, model_args=model_args, data=data, version=TASK_VERSION, model="fic",
        settings=settings, task_config={"generation_kwargs": {"max_gen_toks": settings["max_gen_toks"],
                                                              "temperature": settings["temperature"]}},
        chat_template=chat_template, sections={"fic": summary(scores)})


def write_transcripts(path: Path, records: Sequence[Mapping[str, Any]]) -> Path:
    """Every simulation's transcript, one JSON line each."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def _cell(block: Mapping[str, Any], key: str) -> str:
    low, high = block[f"{key}_ci"]
    return f"{block[key]:.3f} [{low:.2f}, {high:.2f}]"


def table(summaries: Mapping[str, Mapping[str, Any]]) -> str:
    """A markdown table: per task type and setting, P, A, U with 95% intervals; the degradation per task."""
    lines = ["| task | setting | n | P | A | U |", "|---|---|---:|---|---|---|"]
    for label, block in summaries.items():
        for setting in SETTINGS:
            if setting in block:
                s = block[setting]
                lines.append(f"| {label} | {setting} | {int(s['instructions'])} | {_cell(s, 'P')} | "
                             f"{_cell(s, 'A')} | {_cell(s, 'U')} |")
        if block.get("degradation") is not None:
            low, high = block["degradation_ci"]
            lines.append(f"| {label} | degradation (P_full-P_sharded)/P_full | | {block['degradation']:+.3f} "
                         f"[{low:+.2f}, {high:+.2f}] | | |")
    return "\n".join(lines)


def plot(summaries: Mapping[str, Mapping[str, Any]], path: Path, title: str = "") -> Path:
    """P, A and U per setting (one panel each), one bar group per label (e.g. ``code before``, ``code after``)."""
    import matplotlib  # lazy: plotting only when a command writes a figure

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: as above
    import numpy as np

    figure, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=False)
    labels = list(summaries)
    shown = [s for s in SETTINGS if any(s in summaries[label] for label in labels)]
    width = 0.8 / max(len(labels), 1)
    for axis, metric in zip(axes, ("P", "A", "U"), strict=True):
        for j, label in enumerate(labels):
            settings = [s for s in shown if s in summaries[label]]
            x = np.array([shown.index(s) for s in settings]) + j * width
            values = [summaries[label][s][metric] for s in settings]
            errors = np.array([[v - summaries[label][s][f"{metric}_ci"][0], summaries[label][s][f"{metric}_ci"][1] - v]
                               for s, v in zip(settings, values, strict=True)]).T
            axis.bar(x, values, width, yerr=errors, capsize=2, label=label)
        axis.set_xticks(np.arange(len(shown)) + 0.4 - width / 2, shown)
        axis.set_title({"P": "performance P (mean)", "A": "aptitude A (90th pct)",
                        "U": "unreliability U (90th-10th)"}[metric])
        axis.set_ylim(0, 1)
        axis.grid(axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    figure.suptitle(title or "Found in Conversation: P, A, U per setting (95% bootstrap intervals)")
    return save_figure(figure, path)
