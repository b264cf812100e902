"""Leaderboard timings: validate and store a submission, rank 10,000 stored submissions, render the page.

Every submission is derived from one real lm-eval run of locus_domain and locus_catchline (by default written here
by a real run of the embedded model with ``--limit 2``; ``--results`` reuses one, its samples files beside it):
complete runs of ``--docs-per-task`` documents whose samples agree with their scores (``tests/board_fixtures.py``:
``fabricate``), distinct model ids and responses, as other models' runs would be. The store accepts the LOCUS tasks
with protocols (``protocol_tasks``), so every submission is recomputed from its samples as a real one is.

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
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from neurips26.leaderboard import compare, ranking
from neurips26.leaderboard.store import Store
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: its test fixtures build the runs
from tests.board_fixtures import fabricate, protocol_tasks, real_run  # noqa: E402

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
    """A results file from a real run of the embedded model on locus_domain and locus_catchline (``--limit 2``),
    its samples files beside it."""
    run = real_run(workdir / "real")
    return next(run["samples"]["locus_domain"].parent.glob("results_*.json"))


def derive(folder: Path, base: dict[str, Any], base_samples: dict[str, Path], i: int, rng: np.random.Generator,
           docs: int) -> tuple[Path, list[Path]]:
    """Submission ``i``: a complete run of ``docs`` documents per task with random right and wrong answers."""
    correct = {task: (rng.random(docs) < rng.uniform(0.2, 0.9)).tolist() for task in base_samples}
    return fabricate(folder / f"{i:05d}", base, base_samples, correct, run=i)


def meta(base: dict[str, Any], i: int) -> dict[str, Any]:
    return {"model_id": f"bench-org/model-{i:05d}", "revision": REVISION, "precision": "float32",
            "params": base["config"]["model_num_parameters"], "license": "apache-2.0",
            "model_type": "pretrained", "submitter": f"user{i % 97}"}


def render_page(store: Store) -> tuple[str, Callable[[Store], Any], Callable[[], Any] | None]:
    """(what is timed, the tables step given a store, the plot step or None): the Space's own functions when it is
    importable and they work, else every leaderboard table converted to records, as a UI table takes them."""
    def tables_only(store: Store) -> Any:
        return [ranking.leaderboard(store, task=name).to_pandas().to_dict("records")
                for name in [None, *store.tasks]]

    fallback = "every leaderboard table -> pandas records"
    try:
        from neurips26.space import boards

        groups = boards.task_groups(store.tasks)
        state: dict[str, Any] = {}

        def tables(store: Store) -> Any:
            loaded, _ = boards.load_boards(store, groups)
            state["boards"] = loaded
            parts = {boards.OVERALL: list(groups), **groups}
            shown = [boards.OVERALL, *groups, next(iter(store.tasks))]
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
    parser.add_argument("--docs-per-task", type=int, default=20, help="documents per task of every submission")
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
        base_samples = {task: next(args.results.parent.glob(f"samples_{task}_*.jsonl"))
                        for task in ("locus_catchline", "locus_domain")}
        base = json.loads(args.results.read_text())
        rng = np.random.default_rng(0)
        incoming = workdir / "incoming"
        store = Store(workdir / "store", tasks_dir=protocol_tasks(workdir / "tasks"))
        if any(store.root.iterdir()) and (store.root / "leaderboard.duckdb").exists():
            raise SystemExit(f"{store.root} already holds a store; pass an empty --workdir")

        def seed() -> None:
            for start in range(0, args.n, args.chunk):
                stop = min(args.n, start + args.chunk)
                chunk = []
                for i in range(start, stop):
                    results, samples = derive(incoming, base, base_samples, i, rng, args.docs_per_task)
                    chunk.append((results, meta(base, i), samples))
                entries = store.submit_many(chunk)
                assert all(e.status == "VALID" for e in entries), next(e.reason for e in entries if e.reason)

        _, seed_s = timed(seed)
        rows.append((f"seed {args.n:,} submissions (submit_many, chunks of {args.chunk:,})", "1",
                     f"{seed_s[0]:.1f} s ({seed_s[0] / args.n * 1000:.2f} ms each)"))

        news = [(*derive(incoming, base, base_samples, args.n + i, rng, args.docs_per_task), meta(base, args.n + i))
                for i in range(args.repeats)]
        queue = iter((results, info, samples) for results, samples, info in news)
        entries, submit_s = timed(lambda: store.submit(*next(queue)), args.repeats)
        assert entries.status == "VALID", entries.reason
        rows.append((f"validate + store one submission (store holds {args.n:,})", str(args.repeats),
                     ms(submit_s)))
        queue = iter((results, info, samples) for results, samples, info in news)
        duplicate, dup_s = timed(lambda: store.submit(*next(queue)), args.repeats)
        assert duplicate.duplicate_of is not None
        rows.append(("answer a duplicate submission", str(args.repeats), ms(dup_s)))

        total = args.n + args.repeats
        table, read_s = timed(lambda: store.scores(fresh=True), 5)
        rows.append((f"read the scores table from DuckDB ({table.num_rows:,} rows)", "5", ms(read_s)))
        board, rank_s = timed(lambda: ranking.leaderboard(Store(store.root, tasks_dir=store.tasks_dir)), 5)
        assert board.num_rows == total
        rows.append((f"rank {total:,} submissions overall, cold (read + CI + rank ranges)", "5", ms(rank_s)))
        for task in sorted(set(store.tasks) & set(base["results"])):
            _, task_s = timed(lambda task=task: ranking.leaderboard(Store(store.root, tasks_dir=store.tasks_dir),
                                                                    task=task), 5)
            rows.append((f"rank {total:,} submissions on {task}, cold", "5", ms(task_s)))
        store.scores()
        _, warm_s = timed(lambda: ranking.leaderboard(store), 5)
        rows.append((f"rank {total:,} submissions overall, scores cached (store unchanged)", "5", ms(warm_s)))

        what, tables, plot = render_page(store)
        _, cold_s = timed(lambda: tables(Store(store.root, tasks_dir=store.tasks_dir)), 5)
        rows.append((f"render the leaderboard page, cold: {what}", "5", ms(cold_s)))
        _, warm_s = timed(lambda: tables(store), 5)
        rows.append(("render the leaderboard page, scores cached (store unchanged)", "5", ms(warm_s)))
        if plot is not None:
            _, plot_s = timed(plot, 3)
            rows.append(("render the leaderboard page: the Overall score plot (matplotlib -> PNG)", "3", ms(plot_s)))

        values = rng.random((2, args.docs)) < [[0.7], [0.6]]
        pair = []
        for k, row in enumerate(values):  # other data (another digest): the seeded runs' gold does not apply
            results, samples = fabricate(workdir / f"pair{k}", base, base_samples, {"locus_domain": row.tolist()},
                                         run=total + k, digest="1" * 64)
            entry = store.submit(results, meta(base, total + k), samples)
            assert entry.status == "VALID", entry.reason
            pair.append(entry.id)
        result, boot_s = timed(lambda: compare.paired_bootstrap(store, pair[0], pair[1], "locus_domain"), 3)
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
