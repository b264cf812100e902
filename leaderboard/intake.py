"""A submission on its way into the store: its files parsed, its results and samples checked, its rows prepared.

Everything here runs outside the store's lock, except :func:`finish`, which only fills a :class:`.tables.Writes`.

Nothing a submitter sends raises: sizes and JSON nesting are checked before parsing (:mod:`.jsonlimits`), and
any other failure of a check becomes a problem of the submission (:func:`guarded`), so every submission ends
with a status and a reason, and every file kept belongs to a stored submission.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from neurips26.results import ResultsError, Sample, parse_run, parse_samples, responses_digest, samples_task

from . import jsonlimits
from .catalog import TaskSpec
from .modelinfo import Limits, ModelInfo, SubmissionRejected, check_model_info, display_fields, too_big
from .recompute import TaskSamples, validate_samples
from .tables import REJECTED, UNRANKED, VALID, Writes
from .tables import reason as problems_text
from .validate import ValidatedResults, validate_results


@dataclass
class Submission:
    """One submission on its way in: read, hashed, validated as far as it goes."""

    fields: dict[str, Any]
    meta: ModelInfo | None = None
    results_sha256: str = ""
    raw_results: bytes | None = None
    samples: list[tuple[str, str, bytes | None]] = field(default_factory=list)  # (name, sha256, bytes when kept)
    results: ValidatedResults | None = None
    problems: list[tuple[str, str]] = field(default_factory=list)
    task_samples: list[TaskSamples] = field(default_factory=list)
    parsed: dict[str, tuple[str, list[Sample]]] = field(default_factory=dict)  # task -> (file name, samples)
    responses: str | None = None  # sha256 of the responses (see neurips26.results.responses_digest)

    @property
    def unranked(self) -> str | None:
        """Why the run is not ranked (it differs from a task's protocol), None when it is."""
        if self.results is None or not self.results.unranked:
            return None
        return "; ".join(f"{task}: {', '.join(reasons)}" for task, reasons in sorted(self.results.unranked.items()))

    @property
    def key(self) -> tuple[str, str, str, str] | None:
        """(model key, precision, task versions, config hash); the revision is matched by prefix."""
        if self.problems or self.meta is None or self.results is None:
            return None
        return (self.meta.model_id.lower(), self.meta.precision, json.dumps(self.results.task_versions),
                self.results.config_hash)



def read_submission(results: Path | bytes, meta: ModelInfo | Mapping[str, Any], samples: Sequence[Path],
                    limits: Limits, keep: Callable[[bytes], str]) -> Submission:
    """Read the files and ``keep`` them (content-addressed: it returns their sha256), check the metadata;
    raises only for unusable arguments (a missing file, wrong types)."""
    if not isinstance(meta, ModelInfo | Mapping):
        raise TypeError(f"meta must be a ModelInfo or a mapping of its fields, not {type(meta).__name__}")
    if isinstance(samples, str | Path):
        raise TypeError("samples must be a list of paths")
    missing = [str(p) for p in [*([results] if isinstance(results, str | Path) else []), *samples]
               if not Path(p).is_file()]
    if missing:  # before anything is kept: no file is stored for a submission that is not
        raise FileNotFoundError(f"file(s) not found: {', '.join(missing)}")
    sub = Submission(display_fields(meta))
    try:
        sub.meta = check_model_info(meta)
        sub.fields = display_fields(sub.meta)
    except SubmissionRejected as exc:
        sub.problems += exc.problems
    if isinstance(results, str | Path):
        if not Path(results).is_file():
            raise FileNotFoundError(f"results file {results} not found")
        size = Path(results).stat().st_size
    elif isinstance(results, bytes | bytearray):
        size = len(results)
    else:
        raise TypeError(f"results must be a path or bytes, not {type(results).__name__}")
    if size > limits.results_bytes:
        sub.problems.append(("results", too_big(size, limits.results_bytes)))
    else:
        sub.raw_results = Path(results).read_bytes() if isinstance(results, str | Path) else bytes(results)
        sub.results_sha256 = keep(sub.raw_results)
    for path in map(Path, samples):
        if not path.is_file():
            raise FileNotFoundError(f"samples file {path} not found")
        size = path.stat().st_size
        if size > limits.samples_bytes:
            sub.problems.append((f"samples.{path.name}", too_big(size, limits.samples_bytes)))
            sub.samples.append((path.name, "", None))
            continue
        data = path.read_bytes()
        sub.samples.append((path.name, keep(data), data))
    return sub



def check_results(sub: Submission, tasks: Mapping[str, TaskSpec], groups: Mapping[str, list[str]]) -> None:
    """Parse the results and samples files, check the results; every task needs its samples file."""
    if sub.raw_results is None:
        return
    with guarded(sub, "results"):
        _check_results(sub, tasks, groups)


@contextmanager
def guarded(sub: Submission, where: str) -> Iterator[None]:
    """Run a check of ``sub``: a failure the check did not foresee becomes a problem at ``where``, not an
    exception that would leave the submission without a final status."""
    try:
        yield
    except (SubmissionRejected, ResultsError) as exc:
        sub.problems += exc.problems
    except RecursionError:
        sub.problems.append((where, "nested too deeply to read"))
    except Exception as exc:  # any unforeseen failure is the submission's, with its reason
        sub.problems.append((where, f"could not be checked: {type(exc).__name__}: {str(exc)[:200]}"))


def _check_results(sub: Submission, tasks: Mapping[str, TaskSpec], groups: Mapping[str, list[str]]) -> None:
    assert sub.raw_results is not None
    try:
        data = jsonlimits.loads(sub.raw_results, "results")
        if not isinstance(data, dict):
            raise SubmissionRejected([("results", "not an lm-eval results object but a JSON "
                                       f"{type(data).__name__}")])
        run = parse_run(data)
        names = list(run.tasks)
        for name, _, raw in sub.samples:
            task = samples_task(name, names)
            if task is None:
                sub.problems.append((f"samples.{name}", "not named samples_TASK_DATE.jsonl for a task in the "
                                     f"results file ({', '.join(sorted(names))})"))
            elif task in sub.parsed:
                sub.problems.append((f"samples.{name}", f"a second samples file for {task}"))
            elif raw is not None:
                jsonlimits.check_jsonl(raw, f"samples.{name}")
                sub.parsed[task] = (name, parse_samples(raw, f"samples.{name}"))
        run = parse_run(data, {task: rows for task, (_, rows) in sub.parsed.items()})
        sub.results = validate_results(run, tasks, meta=sub.meta, groups=groups)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        sub.problems.append(("results", f"not a JSON file: {exc}"))
        return
    except (SubmissionRejected, ResultsError) as exc:
        sub.problems += exc.problems
        return
    for task in sorted(set(sub.results.tasks) - set(sub.parsed)):
        if not any(where.startswith("samples.") for where, _ in sub.problems):
            sub.problems.append((f"samples.{task}", "missing: every task needs its samples file "
                                 "(lm-eval --log_samples): the board recomputes the scores from it"))
    sub.responses = responses_digest(sub.results.run) if sub.results.run else None



def stored_submission(entry: Any, names: Sequence[str], shas: Sequence[str],
                      file_path: Callable[[str], Path]) -> Submission:
    """A stored submission (its entry and kept files) read back to be checked again."""
    meta = {k: getattr(entry, k) for k in ("model_id", "revision", "precision", "params", "license",
                                           "model_type", "submitter")}
    sub = Submission(display_fields(meta))
    try:
        sub.meta = check_model_info(meta)
    except SubmissionRejected as exc:
        sub.problems += exc.problems
    with guarded(sub, "files"):
        sub.raw_results = file_path(entry.results_sha256).read_bytes()
        sub.samples = [(name, sha, file_path(sha).read_bytes()) for name, sha in zip(names, shas, strict=True)]
    return sub


def check_samples(sub: Submission, tasks: Mapping[str, TaskSpec], gold: Mapping[str, Mapping[str, str]]) -> None:
    """Recompute each task's scores from its samples (against the gold targets held for its data)."""
    assert sub.results is not None
    for task, (name, rows) in sub.parsed.items():
        with guarded(sub, f"samples.{name}"):
            sub.task_samples.append(validate_samples(name, rows, sub.results, tasks[task], gold.get(task)))


def finish(done: list[tuple[int, Submission]], writes: Writes) -> None:
    """Scores recomputed from the samples, the gold targets of the first ranked run of a data digest, the
    final status of all (VALID, UNRANKED with the reason, or REJECTED)."""
    now = datetime.now(UTC).replace(tzinfo=None)
    for entry_id, sub in done:
        if sub.problems or sub.results is None:
            writes.status(entry_id, REJECTED, problems_text(sub.problems) or "not validated", now)
            continue
        digests = sub.results.data_digest
        for ts in sub.task_samples:
            result = sub.results.tasks[ts.task]
            for metric, values in ts.values.items():
                if metric not in result.metrics:
                    continue
                n = len(values)
                if metric in ts.corpus_level:  # macro-F1, perplexity...: no per-document mean; a bootstrap stderr
                    writes.scores.append({"submission_id": entry_id, "task": ts.task, "version": result.version,
                                          "metric": metric, "value": ts.corpus_level[metric],
                                          "stderr": ts.corpus_stderr.get(metric), "n": n, "baseline": ts.baseline})
                    continue
                mean = math.fsum(values) / n
                stderr = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1) / n) if n > 1 else 0.0
                writes.scores.append({"submission_id": entry_id, "task": ts.task, "version": result.version,
                                      "metric": metric, "value": mean, "stderr": stderr, "n": n,
                                      "baseline": ts.baseline})
                writes.samples.append(pa.table({
                    "submission_id": pa.array([entry_id] * n, pa.int64()),
                    "task": pa.array([ts.task] * n, pa.string()),
                    "metric": pa.array([metric] * n, pa.string()),
                    "doc_id": pa.array(ts.doc_ids, pa.int64()),
                    "doc_hash": pa.array(ts.doc_hashes, pa.string()),
                    "value": pa.array(values, pa.float64())}))
            if sub.unranked is None:
                writes.gold.append((ts.task, digests.get(ts.task, ""), entry_id, ts.doc_hashes, ts.targets))
        unranked = sub.unranked
        writes.status(entry_id, UNRANKED if unranked else VALID, unranked, now)

