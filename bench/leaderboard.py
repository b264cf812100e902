"""Leaderboard timings: validate and store a submission, rank 10,000 stored submissions, render the page.

Every submission is derived from one real lm-eval results file of our tasks (by default written here by a real run
of the embedded model with ``--limit 2``; ``--results`` reuses one): distinct model ids, perturbed scores, and a
date that differs, as another run's would.

1. Seed a fresh store with ``--n`` submissions through ``Store.submit_many`` (the same validation as ``submit``,
   one transaction per chunk instead of one per submission).
2. Time ``Store.submit`` (read, hash, keep, validate, dedupe check, store) on ``--repeats`` new submissions
   against the seeded store, and the answer to ``--repeats`` duplicates.
3. Time ``ranking.leaderboard`` overall and per task (store read included), and the store read alone.
4. Time the leaderboard page: what the Space does on load and render (``neurips26.space.boards.load_boards``,
   then ``format_board`` + ``select_columns`` of the shown tables, then the Overall score plot drawn to PNG), or,
   when the Space's functions are not usable, every leaderboard table converted to records, as a UI table takes
   them.
5. Time a paired bootstrap (10,000 resamples) between two submissions with ``--docs``-document samples files.

    python bench/leaderboard.py                          # 10,000 submissions, 50 timed submits
    python bench/leaderboard.py --n 2000 --repeats 20 --results results/.../results_2026-...json
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from neurips26.leaderboard import ranking
from neurips26.leaderboard.catalog import shipped_tasks
from neurips26.leaderboard.store import Store
from rich.console import Console
from rich.table import Table

console = Console()
REVISION = "0123456789abcdef0123456789abcdef01234567"


def timed(fn: Callable[[], Any], repeats: int = 1) -> tuple[Any, list[float]]:
    """``(last result, seconds of each call)``."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, times


def real_results(workdir: Path) -> Path:
    """A results file from a real run of the embedded model on our tasks (``--limit 2``)."""
    from neurips26.corpora.locus.build import build

    from neurips26 import evaluation

    build(out=workdir / "data" / "locus")
    run = evaluation.run(["neurips26"], limit=2, output=workdir / "results", data=workdir / "data")
    assert run.results_file is not None
    return run.results_file


def derive(base: dict[str, Any], i: int, rng: np.random.Generator) -> bytes:
    """Submission ``i``: the real results with perturbed primary scores, as another run would write them."""
    data = copy.deepcopy(base)
    data["date"] = base["date"] + i
    for task, spec in shipped_tasks().items():
        if task in data["results"]:
            n = int(rng.integers(50, 2000))
            data["n-samples"][task] = {"original": n, "effective": n}
            for metric in spec.metrics:
                value = float(np.clip(rng.normal(0.5, 0.15), 0.0, 1.0))
                data["results"][task][f"{metric},none"] = value
                data["results"][task][f"{metric}_stderr,none"] = float(np.sqrt(value * (1 - value) / n))
    return json.dumps(data).encode()


def meta(base: dict[str, Any], i: int) -> dict[str, Any]:
    return {"model_id": f"bench-org/model-{i:05d}", "revision": REVISION, "precision": "float32",
            "params": base["config"]["model_num_parameters"], "license": "apache-2.0",
            "model_type": "pretrained", "submitter": f"user{i % 97}"}


def samples(folder: Path, base_samples: Path, values: np.ndarray) -> Path:
    """A locus_domain samples file with one row per value (the real first row as template)."""
    template = json.loads(base_samples.read_text().splitlines()[0])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "samples_locus_domain_2026-01-01T00-00-00.000000.jsonl"
    with path.open("w") as out:
        for i, value in enumerate(values):
            out.write(json.dumps({**template, "doc_id": i, "doc_hash": f"doc{i}", "acc": float(value),
                                  "acc_norm": float(value)}) + "\n")
    return path


def render_page(store: Store) -> tuple[str, Callable[[Store], Any], Callable[[], Any] | None]:
    """(what is timed, the tables step given a store, the plot step or None): the Space's own functions when it is
    importable and they work, else every leaderboard table converted to records, as a UI table takes them."""
    def tables_only(store: Store) -> Any:
        return [ranking.leaderboard(store, task=name).to_pandas().to_dict("records")
                for name in [None, *shipped_tasks()]]

    fallback = "every leaderboard table -> pandas records"
    try:
        from neurips26.space import boards

        groups = boards.task_groups(shipped_tasks())
        state: dict[str, Any] = {}

        def tables(store: Store) -> Any:
            loaded, _ = boards.load_boards(store, groups)
            state["boards"] = loaded
            parts = {boards.OVERALL: list(groups), **groups}
            shown = [boards.OVERALL, *groups, next(iter(shipped_tasks()))]
            return [boards.select_columns(boards.format_board(loaded[name],
                                                              {p: loaded[p] for p in parts.get(name, [])}),
                                          boards.DEFAULT_COLUMNS) for name in shown]

        def plot() -> Any:
            boards.score_plot(state["boards"][boards.OVERALL], boards.OVERALL).savefig(io.BytesIO(), format="png")

        tables(store)
        plot()
    except Exception as exc:  # the Space is written alongside; time what it needs when its API moved
        return f"{fallback} (Space not usable: {type(exc).__name__}: {exc})", tables_only, None
    return ("Space's boards.load_boards (Overall, every benchmark and task) + format_board + select_columns of "
            "the shown tables"), tables, plot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="stored submissions to rank")
    parser.add_argument("--repeats", type=int, default=50, help="timed submits (median reported)")
    parser.add_argument("--chunk", type=int, default=1000, help="submissions per submit_many call when seeding")
    parser.add_argument("--docs", type=int, default=2000, help="documents in the bootstrap's samples files")
    parser.add_argument("--results", type=Path, help="a real results_<date>.json (default: run the embedded model)")
    parser.add_argument("--samples", type=Path, help="its samples_locus_domain_<date>.jsonl (default: next to it)")
    parser.add_argument("--workdir", type=Path, help="where the store goes (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the work dir")
    args = parser.parse_args()

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="neurips26-leaderboard-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str, str]] = []
    try:
        if args.results is None:
            console.print("running the embedded model on our tasks (--limit 2) for a real results file ...")
            args.results, run_s = timed(lambda: real_results(workdir))
            rows.append(("real lm-eval run (embedded model, --limit 2)", "1", f"{run_s[0]:.1f} s"))
        base_samples = args.samples or next(args.results.parent.glob("samples_locus_domain_*.jsonl"))
        base = json.loads(args.results.read_text())
        rng = np.random.default_rng(0)
        store = Store(workdir / "store")
        if any(store.root.iterdir()) and (store.root / "leaderboard.duckdb").exists():
            raise SystemExit(f"{store.root} already holds a store; pass an empty --workdir")

        def seed() -> None:
            for start in range(0, args.n, args.chunk):
                stop = min(args.n, start + args.chunk)
                chunk = [(derive(base, i, rng), meta(base, i), []) for i in range(start, stop)]
                entries = store.submit_many(chunk)
                assert all(e.status == "VALID" for e in entries), next(e.reason for e in entries if e.reason)

        _, seed_s = timed(seed)
        rows.append((f"seed {args.n:,} submissions (submit_many, chunks of {args.chunk:,})", "1",
                     f"{seed_s[0]:.1f} s ({seed_s[0] / args.n * 1000:.2f} ms each)"))

        news = [(derive(base, args.n + i, rng), meta(base, args.n + i)) for i in range(args.repeats)]
        files = []
        for i, (data, _) in enumerate(news):
            path = workdir / "incoming" / f"results_{i}.json"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(data)
            files.append(path)
        queue = iter(zip(files, (m for _, m in news), strict=True))
        entries, submit_s = timed(lambda: store.submit(*next(queue)), args.repeats)
        assert entries.status == "VALID", entries.reason
        rows.append((f"validate + store one submission (store holds {args.n:,})", str(args.repeats),
                     ms(submit_s)))
        queue = iter(zip(files, (m for _, m in news), strict=True))
        duplicate, dup_s = timed(lambda: store.submit(*next(queue)), args.repeats)
        assert duplicate.duplicate_of is not None
        rows.append(("answer a duplicate submission", str(args.repeats), ms(dup_s)))

        total = args.n + args.repeats
        table, read_s = timed(lambda: store.scores(fresh=True), 5)
        rows.append((f"read the scores table from DuckDB ({table.num_rows:,} rows)", "5", ms(read_s)))
        board, rank_s = timed(lambda: ranking.leaderboard(Store(store.root)), 5)
        assert board.num_rows == total
        rows.append((f"rank {total:,} submissions overall, cold (read + CI + rank ranges)", "5", ms(rank_s)))
        for task in sorted(set(shipped_tasks()) & set(base["results"])):
            _, task_s = timed(lambda task=task: ranking.leaderboard(Store(store.root), task=task), 5)
            rows.append((f"rank {total:,} submissions on {task}, cold", "5", ms(task_s)))
        store.scores()
        _, warm_s = timed(lambda: ranking.leaderboard(store), 5)
        rows.append((f"rank {total:,} submissions overall, scores cached (store unchanged)", "5", ms(warm_s)))

        what, tables, plot = render_page(store)
        _, cold_s = timed(lambda: tables(Store(store.root)), 5)
        rows.append((f"render the leaderboard page, cold: {what}", "5", ms(cold_s)))
        _, warm_s = timed(lambda: tables(store), 5)
        rows.append(("render the leaderboard page, scores cached (store unchanged)", "5", ms(warm_s)))
        if plot is not None:
            _, plot_s = timed(plot, 3)
            rows.append(("render the leaderboard page: the Overall score plot (matplotlib -> PNG)", "3", ms(plot_s)))

        values = (rng.random((2, args.docs)) < [[0.7], [0.6]]).astype(float)
        pair = []
        for k, row in enumerate(values):
            path = samples(workdir / f"pair{k}", base_samples, row)
            data = json.loads(derive(base, total + k, rng))
            n = args.docs
            data["n-samples"]["locus_domain"] = {"original": n, "effective": n}
            for metric in ("acc", "acc_norm"):
                data["results"]["locus_domain"][f"{metric},none"] = float(row.mean())
                data["results"]["locus_domain"][f"{metric}_stderr,none"] = float(row.std(ddof=1) / np.sqrt(n))
            entry = store.submit(json.dumps(data).encode(), meta(base, total + k), [path])
            assert entry.status == "VALID", entry.reason
            pair.append(entry.id)
        result, boot_s = timed(lambda: ranking.paired_bootstrap(store, pair[0], pair[1], "locus_domain"), 3)
        rows.append((f"paired bootstrap, 10,000 resamples of {args.docs:,} documents "
                     f"(diff {result.mean_diff:+.3f} [{result.ci_low:+.3f}, {result.ci_high:+.3f}])", "3",
                     ms(boot_s)))
        size = sum(p.stat().st_size for p in store.root.rglob("*") if p.is_file())
        report(rows, store, size)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


def ms(seconds: list[float]) -> str:
    """Median (min-max) in ms."""
    values = [s * 1000 for s in seconds]
    if len(values) == 1:
        return f"{values[0]:.1f} ms"
    return f"{statistics.median(values):.1f} ms ({min(values):.1f}-{max(values):.1f})"


def report(rows: list[tuple[str, str, str]], store: Store, size: int) -> None:
    table = Table(title="leaderboard timings", caption=f"store {store.root}: {size / 2**20:.0f} MiB on disk "
                  f"(DuckDB + raw files); {os.cpu_count()} CPUs; times: median (min-max)", caption_justify="left")
    table.add_column("step")
    table.add_column("runs", justify="right")
    table.add_column("time", justify="right")
    for row in rows:
        table.add_row(*row)
    console.print(table)


if __name__ == "__main__":
    main()
