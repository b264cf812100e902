"""The output of a run: a Hub-ready dataset folder (ranked components, validation, outcome along the path) and a plot.

    <out>/
      README.md, manifest.json
      data/components/train-*.parquet   one row per component, ranked by IPG
      data/validation/train-*.parquet   ablation and amplification conditions
      data/path/train-*.parquet         mean outcome at each alpha (and the endpoints), per path
      ipg.png
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from neurips26 import hubfolder
from neurips26.output import save_figure

COMPONENTS = pa.schema([
    ("rank", pa.int32()), ("component", pa.string()), ("site", pa.string()), ("layer", pa.int32()),
    ("index", pa.int32()), ("kind", pa.string()), ("ipg", pa.float64()), ("stderr", pa.float64()),
    ("activation", pa.float64()), ("grad_x_act", pa.float64()), ("integrated_gradients", pa.float64()),
])
VALIDATION = pa.schema([
    ("condition", pa.string()), ("ranking", pa.string()), ("k", pa.int32()), ("factor", pa.float64()),
    ("seed", pa.int32()), ("outcome", pa.float64()), ("outcome_low", pa.float64()), ("outcome_high", pa.float64()),
    ("delta", pa.float64()), ("delta_low", pa.float64()), ("delta_high", pa.float64()),
])
PATH = pa.schema([("path", pa.string()), ("alpha", pa.float64()), ("outcome", pa.float64()),
                  ("endpoint", pa.bool_())])


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    def cell(v: Any) -> str:
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def write_report(folder: Path, components: list[dict], validation: list[dict], path: list[dict],
                 meta: Mapping[str, Any], inputs: Mapping[str, str]) -> None:
    """Write the dataset folder and ``ipg.png``; ``meta`` holds model, task, command, settings and counts.

    Written into a hidden sibling that replaces ``folder`` once complete."""
    with hubfolder.building(folder) as stage:
        _write_report(stage, components, validation, path, meta, inputs)


def _write_report(folder: Path, components: list[dict], validation: list[dict], path: list[dict],
                  meta: Mapping[str, Any], inputs: Mapping[str, str]) -> None:
    specs = [hubfolder.ConfigSpec("components", COMPONENTS, "Components ranked by Integrated Policy Gradient, "
                                  "with baseline attributions.", default=True),
             hubfolder.ConfigSpec("validation", VALIDATION, "Outcome under ablation and amplification of the "
                                  "top-k components and of random k-sets."),
             hubfolder.ConfigSpec("path", PATH, "Mean outcome along each scaling path.")]
    for spec, rows in zip(specs, (components, validation, path), strict=True):
        hubfolder.write_table(folder, spec, rows)
    card = {"pretty_name": f"IPG attributions: {meta['model_name']} on {meta['task']}", "license": "apache-2.0",
            "task_categories": ["text-generation"],
            "tags": ["interpretability", "attribution", "integrated-policy-gradient"]}
    hubfolder.write_card(folder, specs, card, card_body(components, validation, meta))
    plot(folder / "ipg.png", components, validation, path, title=card["pretty_name"])
    hubfolder.write_manifest(folder, specs, meta, inputs)  # last: the folder is complete


def card_body(components: list[dict], validation: list[dict], meta: Mapping[str, Any]) -> str:
    columns = ["rank", "component", "ipg", "stderr", "activation", "grad_x_act", "integrated_gradients"]
    checks = "\n".join(f"- {name}: sum IPG = {c['sum_ipg']:.4g}, J(1) - J(0) = {c['j_gap']}"
                       for name, c in meta.get("completeness", {}).items())
    valid = ""
    if validation:
        where = (f"{meta['validation_problems']} held-out problems" if meta.get("validation_heldout")
                 else "the attributed problems (in-sample)")
        valid = ("\n\n## Validation\n\nMean outcome with the top-k components ablated (multiplier 0, or their mean "
                 "for mean ablation) or amplified, against random k-sets; 95% t-intervals (over prompts, or over "
                 f"seeds for the random mean); on {where}.\n\n" + markdown_table(
                     validation, ["condition", "ranking", "k", "factor", "seed", "outcome", "delta", "delta_low",
                                  "delta_high"]))
    return f"""# IPG attributions: {meta['model_name']} on {meta['task']}

Integrated Policy Gradient: for each component i (an MLP neuron, or an SAE feature), the integral over
alpha from 0 to 1 of d/ds_i E[R] at s = alpha 1, where the components of a path are scaled by s and
R is the outcome ({meta['outcome']}) of completions sampled from the scaled model. Midpoint Riemann sum
over {meta['steps']} steps, {meta['samples']} samples per step and prompt, {meta['problems']} prompts,
score-function estimator with a leave-one-out baseline.

Command: `{meta['command']}`

## Top components

{markdown_table(components[:20], columns)}

## Completeness (per path)

{checks or '- endpoints not sampled'}{valid}

`ipg.png` plots the top components, the outcome along each path and the validation.
"""


def plot(file: Path, components: list[dict], validation: list[dict], path: list[dict], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    top = components[:20][::-1]
    axes[0].barh([r["component"] for r in top], [r["ipg"] for r in top], xerr=[r["stderr"] for r in top],
                 color="tab:blue")
    axes[0].set_title("top components (IPG +- s.e.)")
    for name in dict.fromkeys(r["path"] for r in path):
        pts = [r for r in path if r["path"] == name and not r["endpoint"]]
        ends = [r for r in path if r["path"] == name and r["endpoint"]]
        line = axes[1].plot([r["alpha"] for r in pts], [r["outcome"] for r in pts], "o-", label=name)[0]
        axes[1].plot([r["alpha"] for r in ends], [r["outcome"] for r in ends], "s", color=line.get_color())
    axes[1].set(title="mean outcome along the path", xlabel="alpha", ylabel="outcome", xlim=(-0.05, 1.05))
    axes[1].legend(fontsize=8)
    rows = [r for r in validation if r["condition"] != "base" and r["seed"] == -1]
    labels = [f"{r['condition']} {r['ranking']}" for r in rows]
    deltas = [r["delta"] for r in rows]
    err = [[r["delta"] - r["delta_low"] for r in rows], [r["delta_high"] - r["delta"] for r in rows]]
    axes[2].barh(labels, deltas, xerr=err, color=["tab:gray" if r["ranking"] == "random" else "tab:red" for r in rows])
    axes[2].axvline(0, color="black", lw=0.8)
    axes[2].set_title("change in outcome (95% interval)")
    fig.suptitle(title)
    save_figure(fig, file, dpi=100)
