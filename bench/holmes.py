"""HOLMES against uniform frames on the generated CLoVR release: accuracy per level, slots, bindings, certificates.

Builds the generator's default release (seed 0: 3 sets of 3 videos, 33 questions) into a temporary
folder and answers every question with ``holmes`` and with ``uniform`` (the same perception and graph
readout from evenly spaced frames) at each frame budget, with the ``oracle`` (ground-truth scene
records: the upper bound) and ``descriptor`` (colour blobs on thumbnails) perception backends.
Prints markdown tables: accuracy per CLoVR level, then overall accuracy, the share answered through
open gates and their accuracy, slot F1 and binding accuracy, then the certificates' calibration.

    python bench/holmes.py                         # budgets 8,16,32; ~5 min on 2 busy cores
    python bench/holmes.py --budgets 16 --perception oracle
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from neurips26.corpora.clovr.build import build, default_raw
from neurips26.methods.holmes.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--budgets", default="8,16,32")
    p.add_argument("--perception", default="oracle,descriptor")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "holmes.json")
    return p.parse_args(argv)


def markdown(rows: list[dict], budgets: list[int], perceptions: list[str]) -> str:
    runs = [(p, m) for p in perceptions for m in ("holmes", "uniform")]
    head = "| | " + " | ".join(f"{m} ({p}) @{b}" for p, m in runs for b in budgets) + " |"
    lines = [head, "|---" * (1 + len(runs) * len(budgets)) + "|"]

    def value(p: str, m: str, b: int, scope: str, name: str, metric: str) -> str:
        hit = [r for r in rows if (r["perception"], r["method"], r["budget"], r["scope"], r["name"], r["metric"])
               == (p, m, b, scope, name, metric)]
        return f"{hit[0]['value']:.2f}" if hit else "-"

    levels = sorted({r["name"] for r in rows if r["scope"] == "level"})
    for name in levels:
        n = max(r["n"] for r in rows if r["name"] == name)
        lines.append(f"| {name} (n={n}) | " + " | ".join(value(p, m, b, "level", name, "acc") for p, m in runs
                                                          for b in budgets) + " |")
    for metric in ("acc", "answered_open", "acc_open", "slot_f1", "binding_acc"):
        lines.append(f"| {'all' if metric == 'acc' else metric} | " + " | ".join(
            value(p, m, b, "all", "all", metric) for p, m in runs for b in budgets) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    perceptions = [p for p in args.perception.split(",") if p]
    raw = default_raw(seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        build(raw=raw, out=Path(tmp) / "clovr")
        rows, _ = evaluate(Path(tmp) / "clovr", perceptions, budgets, scenes=raw / "scenes", limit=args.limit,
                           cache=Path(tmp) / "cache")
    print(markdown(rows, budgets, perceptions))
    print("\n| perception @budget | confidence band | certificates (searched, not found) | mean confidence | "
          "truly absent |\n|---|---|---|---|---|")
    for r in rows:
        if r["scope"] == "calibration" and r["method"] == "holmes":
            print(f"| {r['perception']} @{r['budget']} | {r['name']} | {r['n']} | {r['confidence']:.2f} | "
                  f"{r['value']:.2f} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
