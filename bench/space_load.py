"""The Space under load: p50/p95 latency of page, board, SQL and submit, with and without a hostile slow query.

1. Build LOCUS from the embedded sample into a temporary data folder, start the Space (``neurips26.space.app``)
   on 127.0.0.1 in its own process with an empty store, and wait until it answers.
2. Quiet phase: ``--workers`` client threads (bounded concurrency; one Gradio client each) send ``--requests``
   requests of each kind, interleaved:
   - page: ``GET /`` (the HTML page);
   - board: ``/load_fresh`` then ``/render`` in one session (read the store, rank, format every table, plot);
   - SQL: ``/query_1`` (the Run button) with ``SELECT state, count(*) FROM locus.sections GROUP BY state``;
   - submit: ``/submit_locally`` with a small results file (validated, stored, rejected: no samples).
3. Hostile phase: the same, while another client keeps a slow query running (``SELECT sum(range) FROM
   range(1e11)``, stopped by the Space's 10 s statement timeout, sent again at once).
4. A table: per kind, p50/p95 in both phases and the p95 ratio (hostile / quiet: the baseline is the quiet
   phase); the hostile query's own latency and answer; the server's peak RSS (psutil, sampled every 0.1 s).

    python bench/space_load.py                         # 8 workers, 24 requests of each kind per phase
    python bench/space_load.py --workers 4 --requests 12
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psutil
from gradio_client import Client, handle_file
from rich.console import Console
from rich.table import Table

console = Console()
KINDS = ("page", "board", "sql", "submit")
HOSTILE_SQL = "SELECT sum(range) FROM range(100000000000)"
SQL = "SELECT state, count(*) AS n FROM locus.sections GROUP BY state"
FILTERS = dict(task_name=None, text="", low=None, high=None, precision_values=[], type_values=[], license_values=[],
               chosen=[])
SERVER = """
import sys
from pathlib import Path
from neurips26.space.app import launch
launch("127.0.0.1", int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_space(workdir: Path) -> tuple[subprocess.Popen, str]:
    """Build the data folder, start the Space; its process and URL once it answers."""
    subprocess.run([sys.executable, "-m", "neurips26.cli", "build", "locus", "--out", str(workdir / "data" / "locus")],
                   check=True, capture_output=True)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(workdir / "store"), str(workdir / "data")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if proc.poll() is not None:
            raise SystemExit(f"the Space stopped: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("the Space did not answer within 5 minutes")


def requests_of(kind: str, url: str, results: Path, n: int) -> Callable[[Client, int], Any]:
    def page(client: Client, i: int) -> Any:
        return httpx.get(url, timeout=120).raise_for_status()

    def board(client: Client, i: int) -> Any:
        client.predict(api_name="/load_fresh")
        return client.predict(**FILTERS, api_name="/render")

    def sql(client: Client, i: int) -> Any:
        status, _ = client.predict(SQL, api_name="/query_1")
        assert status.endswith("row(s)"), status
        return status

    def submit(client: Client, i: int) -> Any:
        verdict, _ = client.predict(handle_file(str(results)), [], "org/bench-model", "0123456789abcdef", "float32",
                                    "135M", "pretrained", "apache-2.0", f"bench-{kind}-{i}-{time.time_ns()}",
                                    api_name="/submit_locally")
        return verdict

    return {"page": page, "board": board, "sql": sql, "submit": submit}[kind]


def phase(url: str, results: Path, workers: int, n: int) -> dict[str, list[float]]:
    """Seconds per request of each kind, ``workers`` threads sending ``n`` requests of each kind in all."""
    jobs = [(kind, i) for i in range(n) for kind in KINDS]
    lock = threading.Lock()
    times: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []

    def worker() -> None:
        client = Client(url, verbose=False)
        while True:
            with lock:
                if not jobs:
                    return
                kind, i = jobs.pop(0)
            start = time.perf_counter()
            try:
                requests_of(kind, url, results, n)(client, i)
            except Exception as exc:  # reported below, never hidden
                errors.append(f"{kind}: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            with lock:
                times[kind].append(time.perf_counter() - start)

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors[:5]:
        console.print(f"[red]error[/red] {e}", highlight=False)
    return times


def hostile_loop(url: str, stop: threading.Event, seen: list[tuple[float, str]]) -> None:
    client = Client(url, verbose=False)
    while not stop.is_set():
        start = time.perf_counter()
        status, _ = client.predict(HOSTILE_SQL, api_name="/query_1")
        seen.append((time.perf_counter() - start, status))


def peak_rss(proc: psutil.Process, stop: threading.Event, peak: list[int]) -> None:
    while not stop.is_set():
        try:
            peak[0] = max(peak[0], proc.memory_info().rss)
        except psutil.Error:
            return
        time.sleep(0.1)


def pct(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=8, help="Concurrent clients (bounded concurrency).")
    parser.add_argument("--requests", type=int, default=24, help="Requests of each kind per phase.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="space-load-") as tmp:
        workdir = Path(tmp)
        results = workdir / "results_2026-01-01T00-00-00.json"
        results.write_text(json.dumps({"results": {"locus_domain": {"acc,none": 0.5}}, "config": {"model": "hf"},
                                       "versions": {"locus_domain": 1.0}, "lm_eval_version": "0.4.13"}))
        console.print("starting the Space ...")
        proc, url = start_space(workdir)
        stop_rss, peak = threading.Event(), [0]
        threading.Thread(target=peak_rss, args=(psutil.Process(proc.pid), stop_rss, peak), daemon=True).start()
        try:
            phase(url, results, min(args.workers, 4), len(KINDS))  # warm-up: first imports, first board
            console.print("quiet phase ...")
            quiet = phase(url, results, args.workers, args.requests)
            console.print("hostile phase ...")
            stop, seen = threading.Event(), []
            hostile = threading.Thread(target=hostile_loop, args=(url, stop, seen))
            hostile.start()
            time.sleep(1.0)  # the slow query is running
            loaded = phase(url, results, args.workers, args.requests)
            stop.set()
            hostile.join()
        finally:
            stop_rss.set()
            proc.terminate()
            proc.wait(timeout=30)
    table = Table(title=f"Space latency, {args.workers} concurrent clients, {args.requests} requests of each kind "
                        "(baseline: the quiet phase)")
    for column in ("request", "n", "quiet p50 s", "quiet p95 s", "hostile p50 s", "hostile p95 s", "p95 ratio"):
        table.add_column(column, justify="right" if column != "request" else "left")
    for kind in KINDS:
        q, h = quiet.get(kind, []), loaded.get(kind, [])
        table.add_row(kind, f"{len(q)}/{len(h)}", f"{pct(q, 50):.3f}", f"{pct(q, 95):.3f}", f"{pct(h, 50):.3f}",
                      f"{pct(h, 95):.3f}", f"{pct(h, 95) / pct(q, 95):.2f}x")
    console.print(table)
    statuses = sorted({s for _, s in seen})
    console.print(f"hostile query: {len(seen)} run(s), {statistics.median(t for t, _ in seen):.1f} s median each, "
                  f"answer: {'; '.join(statuses)}", highlight=False)
    console.print(f"server peak RSS: {peak[0] / 2**20:.0f} MiB", highlight=False)


if __name__ == "__main__":
    main()
