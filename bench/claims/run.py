"""Run the papers' claims against their baselines and write the claims documents from the results.

    python bench/claims/run.py --list                         # registered claims, one per line
    python bench/claims/run.py labelshift --scale tiny        # one claim -> bench/results/labelshift.json
    python bench/claims/run.py --all --scale default          # every claim, then a table
    python bench/claims/run.py --report                       # docs/claims.md and the README's claims table
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path.pop(0)  # run as a script: the claim modules are imported as claims.<name>, never at top level
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from claims import report  # noqa: E402
from claims.core import CLAIMS, RESULTS, ROOT, SCALES, load_all, run_claim  # noqa: E402
from neurips26.errors import UserError  # noqa: E402


def parser() -> argparse.ArgumentParser:
    """The command line: a claim name, or --list, --all, --report."""
    cli = argparse.ArgumentParser(prog="python bench/claims/run.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(line.strip() for line in __doc__.split("\n\n")[1].splitlines()))
    cli.add_argument("name", nargs="?", help="the claim to run (see --list)")
    cli.add_argument("--list", action="store_true", help="print the registered claims, one name per line")
    cli.add_argument("--all", action="store_true", help="run every registered claim")
    cli.add_argument("--report", action="store_true",
                        help="write --docs and the README's claims block from the results files in --out")
    cli.add_argument("--scale", choices=SCALES, default="default",
                        help="tiny: seconds, proves it runs; default: minutes on a CPU; large: a GPU")
    cli.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (at least 3)")
    cli.add_argument("--out", type=Path, default=RESULTS, help="folder of the results files (<name>.json)")
    cli.add_argument("--docs", type=Path, default=ROOT / "docs" / "claims.md", help="the claims page --report writes")
    cli.add_argument("--readme", type=Path, default=ROOT / "README.md",
                        help="the README whose claims block --report rewrites")
    return cli


def summary(res: dict) -> str:
    return f"{report.effect_text(res['effect'], res['ci95'])}  {res['verdict']}"


def run_one(name: str, args: argparse.Namespace, console: Console) -> dict:
    """Run one claim and print its line."""
    res = run_claim(name, scale=args.scale, seeds=args.seeds, out=args.out)
    console.print(f"{name}: {report.cell(res['metric'])} effect {summary(res)}  ({res['seconds']:.1f} s) "
                  f"-> {args.out / f'{name}.json'}", highlight=False)
    return res


def run_all(args: argparse.Namespace, console: Console) -> int:
    """Every claim in turn (a claim that fails is reported and the rest still run), then a table."""
    names = CLAIMS.names()
    table = Table(title=f"claims at scale {args.scale}, {args.seeds} seeds")
    for col in ("claim", "effect [95% CI]", "verdict", "seconds"):
        table.add_column(col, justify="right" if col == "seconds" else "left")
    failed = 0
    for i, name in enumerate(names, 1):
        start = time.perf_counter()
        with console.status(f"[{i}/{len(names)}] {name}: running at scale {args.scale}, {args.seeds} seeds"):
            try:
                res = run_claim(name, scale=args.scale, seeds=args.seeds, out=args.out)
            except Exception as err:  # one broken claim must not hide the others' results
                failed += 1
                seconds = time.perf_counter() - start
                console.print(f"[{i}/{len(names)}] {name}: failed after {seconds:.1f} s: "
                              f"{type(err).__name__}: {err}", highlight=False, markup=False)
                table.add_row(name, "—", f"failed: {type(err).__name__}", f"{seconds:.1f}")
                continue
        console.print(f"[{i}/{len(names)}] {name}: {summary(res)} ({res['seconds']:.1f} s)", highlight=False,
                      markup=False)
        table.add_row(name, report.effect_text(res["effect"], res["ci95"]), res["verdict"], f"{res['seconds']:.1f}")
    console.print(table)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    cli = parser()
    args = cli.parse_args(argv)
    console = Console(soft_wrap=True)
    if not (args.list or args.all or args.report or args.name):
        cli.error("name a claim, or give --list, --all or --report")
    if args.name and args.all:
        cli.error("name one claim or give --all, not both")
    try:
        if args.list or args.name or args.all:  # --report alone reads results files only
            load_all()
        if args.list:
            for name in CLAIMS.names():
                print(name)
            return 0
        code = 0
        if args.name:
            CLAIMS.get(args.name)  # an unknown name: one line listing the known ones
            run_one(args.name, args, console)
        elif args.all:
            code = run_all(args, console)
        if args.report:
            for path in report.write_report(args.out, args.docs, args.readme):
                console.print(f"wrote {path}", highlight=False)
        return code
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
