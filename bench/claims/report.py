"""The claims' documents, generated from the results files alone: ``docs/claims.md`` and the README's block.

Nothing here measures or types a figure: every number comes from a ``bench/results/<name>.json`` that
:func:`claims.core.run_claim` wrote. The same files give byte-identical documents (claims sorted by name, fixed
number formats, no dates), so a test can regenerate them and compare.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

BEGIN, END = "<!-- claims:begin -->", "<!-- claims:end -->"
GENERATED = "python bench/claims/run.py --report"
STANDARD = {"name", "method", "claim", "metric", "direction", "baseline", "method_arm", "baseline_arm", "arms",
            "effect", "ci95", "verdict", "seeds", "scale", "command", "needs", "conditions", "seconds", "grid"}
SUMMARY_HEAD = ("| method | claim | baseline | effect [95% CI] | verdict | results |\n"
                "|---|---|---|---|---|---|\n")


def load_results(folder: Path) -> list[dict[str, Any]]:
    """Every claim results file in ``folder`` (JSON with a claim, arms and a verdict), sorted by claim name."""
    found = []
    for path in sorted(Path(folder).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and {"name", "claim", "verdict", "arms"} <= set(data):
            found.append(data)
    return sorted(found, key=lambda r: r["name"])


def number(x: Any, digits: int = 4) -> str:
    """``x`` with ``digits`` significant digits ('—' for none, 'inf' for infinities)."""
    if x is None:
        return "—"
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def effect_text(effect: float | None, ci95: list[float] | None) -> str:
    """``+0.123 [+0.045, +0.201]``: decimals set by the interval's half-width (two significant digits of it)."""
    if effect is None:
        return "—"
    values = [float(effect), *(float(v) for v in ci95 or [])]
    finite = [v for v in values if math.isfinite(v)]
    half = (values[2] - values[1]) / 2 if len(values) == 3 and all(map(math.isfinite, values)) else 0.0
    scale = half if half > 0 else max((abs(v) for v in finite), default=0.0)
    decimals = 3 if scale == 0 else min(6, max(0, 1 - math.floor(math.log10(scale))))

    def signed(v: float) -> str:
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "+inf" if v > 0 else "-inf"
        v = 0.0 if round(v, decimals) == 0 else v
        return f"{v:+.{decimals}f}"

    text = signed(values[0])
    return f"{text} [{signed(values[1])}, {signed(values[2])}]" if len(values) == 3 else text


def cell(text: Any) -> str:
    """Text made safe for one Markdown table cell."""
    return str(text).replace("\n", " ").replace("|", "\\|")


def verdict_text(res: dict[str, Any]) -> str:
    return f"**{res['verdict']}**"


def link(target: Path, page: Path) -> str:
    """``target``'s path relative to the folder of ``page``, with forward slashes."""
    return Path(os.path.relpath(target, page.parent)).as_posix()


def summary_rows(results: list[dict[str, Any]], page: Path, doc: Path, results_dir: Path) -> str:
    """The summary table's rows: one per claim, its method linked to its section of ``doc``."""
    if not results:
        return "| — | no claim has a results file yet | — | — | — | — |\n"
    rows = []
    for res in results:
        section = f"{link(doc, page)}#{res['name']}" if doc != page else f"#{res['name']}"
        path = results_dir / f"{res['name']}.json"
        rows.append(f"| [{cell(res['method'])}]({section}) | {cell(res['claim'])} | {cell(res['baseline'])} | "
                    f"{effect_text(res['effect'], res['ci95'])} | {verdict_text(res)} | "
                    f"[{res['name']}.json]({link(path, page)}) |")
    return "\n".join(rows) + "\n"


def _compute(compute: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v if isinstance(v, int | float | str) else json.dumps(v, sort_keys=True)}"
                     for k, v in compute.items())


def arms_table(arms: dict[str, Any], res: dict[str, Any]) -> str:
    """Mean, per-seed values, items per seed and compute of every arm (method and baseline first)."""
    order = [a for a in (res["method_arm"], res["baseline_arm"]) if a in arms]
    order += [a for a in arms if a not in order]
    role = {res["method_arm"]: " (method)", res["baseline_arm"]: " (baseline)"}
    lines = ["| arm | mean | per seed | items per seed | compute |", "|---|---|---|---|---|"]
    for name in order:
        arm = arms[name]
        items = ", ".join(str(n) for n in arm["n_items"]) if "n_items" in arm else "—"
        lines.append(f"| `{name}`{role.get(name, '')} | {number(arm['mean'])} | "
                     f"{', '.join(number(v) for v in arm['values'])} | {items} | {cell(_compute(arm['compute']))} |")
    return "\n".join(lines) + "\n"


def conditions_table(conditions: dict[str, Any], res: dict[str, Any]) -> str:
    """Each condition's effect, interval, verdict and arm means."""
    arms = list(dict.fromkeys(a for c in conditions.values() for a in c["arms"]))
    head = "| condition | effect [95% CI] | verdict | " + " | ".join(f"`{a}` mean" for a in arms) + " |"
    lines = [head, "|---" * (3 + len(arms)) + "|"]
    for name, c in conditions.items():
        means = " | ".join(number(c["arms"][a]["mean"]) if a in c["arms"] else "—" for a in arms)
        lines.append(f"| {cell(name)} | {effect_text(c['effect'], c['ci95'])} | **{c['verdict']}** | {means} |")
    return "\n".join(lines) + "\n"


def grid_table(res: dict[str, Any]) -> str:
    """The headline and conditions laid out as the claim's ``grid`` asks: ``{"rows": "frames", "columns":
    "perception", "cells": {condition or "headline": [row, column]}}``; per column, both arms' means and the
    effect [95% CI] with its verdict (the harness's figures, nothing recomputed)."""
    grid = res["grid"]
    found = {"headline": {"arms": res["arms"], "effect": res["effect"], "ci95": res["ci95"], "verdict": res["verdict"]},
             **res.get("conditions", {})}
    cells = {tuple(rc): found[name] for name, rc in grid["cells"].items() if name in found}
    rows = sorted({r for r, _ in cells}, key=lambda r: (isinstance(r, str), r))
    columns = list(dict.fromkeys(c for _, c in cells))
    m, b = res["method_arm"], res["baseline_arm"]
    head = f"| {grid['rows']} | " + " | ".join(f"{c}: `{m}` | {c}: `{b}` | {c}: effect [95% CI]" for c in columns)
    lines = [head + " |", "|---" * (1 + 3 * len(columns)) + "|"]
    for r in rows:
        out = []
        for c in columns:
            got = cells.get((r, c))
            if got is None:
                out += ["—"] * 3
                continue
            out += [number(got["arms"][a]["mean"]) if a in got["arms"] else "—" for a in (m, b)]
            out.append(f"{effect_text(got['effect'], got['ci95'])} **{got['verdict']}**")
        lines.append(f"| {cell(r)} | " + " | ".join(out) + " |")
    return "\n".join(lines) + "\n"


def _extra_value(value: Any) -> str:
    if value is None or isinstance(value, bool | str):
        return cell(value)
    if isinstance(value, int | float):
        return number(value)
    if isinstance(value, dict) and all(v is None or isinstance(v, int | float | str | bool) for v in value.values()):
        return ", ".join(f"{cell(k)} {_extra_value(v)}" for k, v in value.items())
    if isinstance(value, list):
        return f"a list of {len(value)} entries (in the results file)"
    return "in the results file"


def extra_lines(res: dict[str, Any]) -> str:
    """The results file's further keys (``extra``): scalars and flat mappings shown, the rest named."""
    keys = [k for k in res if k not in STANDARD]
    return "".join(f"- `{k}`: {_extra_value(res[k])}\n" for k in keys)


def section(res: dict[str, Any], doc: Path, results_dir: Path) -> str:
    """One claim's section of ``docs/claims.md``."""
    name = res["name"]
    path = results_dir / f"{name}.json"
    seeds = ", ".join(str(s) for s in res["seeds"])
    rows = [("method", res["method"]),
            ("metric", f"{res['metric']} ({res['direction']} is better)"),
            ("baseline", f"{res['baseline']} (arm `{res['baseline_arm']}`)"),
            ("method arm", f"`{res['method_arm']}`"),
            ("effect (method − baseline) [95% CI]", effect_text(res["effect"], res["ci95"])),
            ("verdict", verdict_text(res))]
    if res.get("needs"):
        rows.append(("needs", res["needs"]))
    rows += [("scale", res["scale"]), ("seeds", seeds),
             ("wall time", f"{number(res['seconds'], 3)} s" if "seconds" in res else "—"),
             ("command", f"`{res['command']}`"),
             ("results file", f"[{name}.json]({link(path, doc)})")]
    out = [f"## {name}\n", f"> {res['claim']}\n", "| | |\n|---|---|\n"
           + "".join(f"| {k} | {cell(v)} |\n" for k, v in rows)]
    if res["arms"]:
        out.append("Arms:\n\n" + arms_table(res["arms"], res))
    if res.get("conditions"):
        out.append("Conditions (the same comparison under further settings, each with its own interval):\n\n"
                   + conditions_table(res["conditions"], res))
    if res.get("grid"):
        out.append(f"Per {res['grid']['rows']} and {res['grid']['columns']} (the headline and the conditions "
                   "above, laid out as a grid):\n\n" + grid_table(res))
    more = extra_lines(res)
    if more:
        out.append("Further measurements in the results file:\n\n" + more)
    return "\n".join(out)


def claims_doc(results: list[dict[str, Any]], doc: Path, results_dir: Path) -> str:
    """The whole text of ``docs/claims.md``."""
    intro = (
        "# Claims\n\n"
        f"<!-- generated by `{GENERATED}` from the results files: edit the claims, not this file -->\n\n"
        "Each method's central claim, in our words, measured on this machine against the baseline it claims to "
        "beat. A claim is one module in `bench/claims/` that trains and scores a method arm and a baseline arm "
        "for each seed at equal training steps (`train_steps` counts every optimiser step an arm's model "
        "received); the harness (`bench/claims/core.py`), not the claim, computes the effect (the method arm's "
        "mean minus the baseline arm's, over seeds), its 95% interval (a two-level bootstrap over seeds and "
        "paired items when the metric is a mean over items, else a t interval over the per-seed differences) "
        "and the verdict: **reproduced** when the interval excludes zero in the claimed direction, else **not "
        "reproduced**; **untestable here** when the claim needs what this machine lacks (said under `needs`). "
        f"This page and the README's claims table are written by `{GENERATED}` from "
        f"[the results files]({link(results_dir, doc)}/); nothing in them is typed by hand.\n\n")
    body = "\n".join(section(res, doc, results_dir) for res in results)
    return intro + SUMMARY_HEAD + summary_rows(results, doc, doc, results_dir) + ("\n" + body if body else "")


def readme_block(results: list[dict[str, Any]], readme: Path, doc: Path, results_dir: Path) -> str:
    """The README's claims block, markers included."""
    return (f"{BEGIN}\n## Claims\n\n"
            "Each method's central claim, measured here against the baseline it claims to beat at equal training "
            f"steps, with a 95% interval; [{link(doc, readme)}]({link(doc, readme)}) has every arm, "
            f"seed, condition and command. This table is generated by `{GENERATED}` from the results files.\n\n"
            + SUMMARY_HEAD + summary_rows(results, readme, doc, results_dir) + f"\n{END}")


def splice(text: str, block: str) -> str:
    """``text`` with its claims block replaced by ``block`` (inserted before the first ``## `` heading if absent)."""
    if BEGIN in text and END in text:
        start, stop = text.index(BEGIN), text.index(END) + len(END)
        return text[:start] + block + text[stop:]
    lines = text.splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
    return "".join(lines[:at]) + block + "\n\n" + "".join(lines[at:])


def write_report(results_dir: Path, doc: Path, readme: Path) -> list[Path]:
    """Write ``doc`` and the claims block of ``readme`` from the results files in ``results_dir``."""
    results = load_results(results_dir)
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(claims_doc(results, doc, results_dir), encoding="utf-8")
    readme.write_text(splice(readme.read_text(encoding="utf-8"), readme_block(results, readme, doc, results_dir)),
                      encoding="utf-8")
    return [doc, readme]
