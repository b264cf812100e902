"""The Ray engine of the LOCUS build (``neurips26 build locus --engine ray [--address ADDR]``).

Jurisdictions are parsed (their PDFs OCR'd) as Ray tasks, on a local Ray instance or on any Ray cluster: a
task takes a run of consecutive jurisdictions (at most :data:`MAX_CODES_PER_TASK`, fewer when there are not
at least 8 tasks per CPU), so that Ray's cost per task (a few milliseconds of scheduling and transfer) stays
small beside the parsing. The driver takes the results back in jurisdiction order and writes the shards with
the same writer as the local engine, so both engines give byte-identical folders. At most ``2 x`` the
cluster's CPUs tasks are in flight, so the driver holds a bounded number of parsed codes whatever the corpus
size.

On a cluster, every node needs this package installed and the raw folder at the same path (a shared file
system); only the parsed sections travel back to the driver.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .raw import in_order, keep_freed_memory, parse_code
from .records import CodeResult, Jurisdiction

ENGINES = ("local", "ray")
MAX_CODES_PER_TASK = 16


def _parse(jobs: list[tuple[Path, Jurisdiction]]) -> list[CodeResult]:
    keep_freed_memory()  # once per Ray worker process
    return [parse_code(raw, jurisdiction) for raw, jurisdiction in jobs]


def codes_per_task(jobs: int, cpus: int) -> int:
    """Jurisdictions per task: up to :data:`MAX_CODES_PER_TASK`, keeping at least 8 tasks per CPU."""
    return max(1, min(MAX_CODES_PER_TASK, jobs // (8 * max(1, cpus))))


def run(jobs: list[tuple[Path, Jurisdiction]], workers: int, address: str | None = None) -> Iterator[CodeResult]:
    """Parse the jurisdictions as Ray tasks; yield their results in ``jobs`` order.

    Joins the cluster at ``address`` (``auto``: the one this machine belongs to), else an already started Ray,
    else starts a local instance with ``workers`` CPUs, which it shuts down at the end.
    """
    import ray  # heavy; only the Ray engine needs it

    started = not ray.is_initialized()
    if started:
        options = {"address": address} if address else {"num_cpus": max(1, workers)}
        ray.init(**options, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        task = ray.remote(num_cpus=1, max_retries=2)(_parse)
        cpus = int(ray.cluster_resources().get("CPU", 1))
        size = codes_per_task(len(jobs), cpus)
        runs = [jobs[i:i + size] for i in range(0, len(jobs), size)]
        for handle in in_order(runs, task.remote, max(2, 2 * cpus)):
            yield from ray.get(handle)
    finally:
        if started:
            ray.shutdown()
