"""Rankings with uncertainty: 95% confidence intervals, rank ranges and the normalised overall mean.

Per task, a submission's score is its value of the task's primary metric (see ``catalog``), scored on the task
version the package ships (scores of an older version are left out). Its 95% interval is:

* binary metrics (each document scores 0 or 1: acc, acc_norm, exact_match): the Wilson score interval of the
  proportion over ``n`` documents. It stays honest at 0 and 1, where lm-eval's stderr is 0;
* other metrics: ``score ± 1.96 * stderr``, clipped to the metric's range: the stderr of the per-document values
  recomputed from the samples, or for a corpus-level metric (macro-F1, perplexity) its bootstrap stderr. A score
  without a stderr (none could be computed) gets the metric's whole range: it is ranked, with every rank open.

Overall (``task=None``, optionally within a ``group``): see :data:`OVERALL_DEFINITION`. Only submissions having
every task in scope are ranked. Each task's score is normalised between its protocol's baseline and its best
score, ``(x - baseline) / (best - baseline)`` (the Open LLM Leaderboard v2 normalisation; lower-is-better metrics
are mirrored, so 1 is always the best score and 0 the baseline), then the normalised scores are averaged, with
stderr ``sqrt(sum (se_t / |best_t - baseline_t|)^2) / k`` (tasks are scored on different documents, so
independent). For a binary metric ``se_t`` is the larger of the stderr and the Wilson half-width / 1.96.
Groups in :data:`OUT_OF_OVERALL` are ranked only on their own boards (their tasks' own metrics).

Rank ranges, higher being better (per task, in the metric's own direction): a submission ranks at best
``1 + #(intervals entirely above its interval)`` and at worst ``N - #(intervals entirely below it)``; ``rank`` is
the competition rank of the point score (``1 + #(better scores)``), always within the range.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from neurips26.errors import UnknownNameError, UserError
from neurips26.stats import Z95, wilson

from .catalog import MetricSpec, TaskSpec
from .store import Store

OVERALL_DEFINITION = ("overall = mean over the tasks in scope of max(0, (score - baseline) / (best - baseline)), each "
                      "task's ranking metric and baseline as its protocol defines them (lower-is-better metrics "
                      "mirrored); only submissions with every task in scope are ranked; runs that differ from a "
                      "protocol (--limit, few-shot, chat template, task settings, demo data) are UNRANKED")
# Groups kept out of overall means, with the reason (they are ranked on their own boards).
OUT_OF_OVERALL = {
    "rolebench_unlearn": "RoleBench-Unlearn measures unlearning, which only its combined score against a reference "
                         "model says (neurips26 unlearn): its retain and general tasks are ranked on its own board, "
                         "and forgetting alone is not ranked (an empty answer wins it)",
}
MODEL_COLUMNS = ["model_id", "revision", "precision", "params", "license", "model_type", "submission_id"]
COLUMNS = MODEL_COLUMNS + ["score", "stderr", "ci_low", "ci_high", "rank", "rank_best", "rank_worst", "n", "n_tasks"]
SCHEMA = pa.schema([
    ("model_id", pa.string()), ("revision", pa.string()), ("precision", pa.string()), ("params", pa.int64()),
    ("license", pa.string()), ("model_type", pa.string()), ("submission_id", pa.int64()), ("score", pa.float64()),
    ("stderr", pa.float64()), ("ci_low", pa.float64()), ("ci_high", pa.float64()), ("rank", pa.int64()),
    ("rank_best", pa.int64()), ("rank_worst", pa.int64()), ("n", pa.int64()), ("n_tasks", pa.int64()),
])


def intervals(spec: MetricSpec, value: np.ndarray, stderr: np.ndarray, n: np.ndarray,
              z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """95% intervals of one metric's scores (see the module docstring)."""
    value, stderr = np.asarray(value, float), np.asarray(stderr, float)
    if spec.binary:
        return wilson(value, n, z)
    unknown = np.isnan(stderr)  # no stderr: the whole range (np.inf - np.inf would be NaN)
    stderr = np.where(unknown, 0.0, stderr)
    lo, hi = np.clip(value - z * stderr, spec.lo, spec.hi), np.clip(value + z * stderr, spec.lo, spec.hi)
    return np.where(unknown, spec.lo, lo), np.where(unknown, spec.hi, hi)


def rank_ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(best, worst) rank each interval ``[lo, hi]`` allows, higher being better.

    best = 1 + #(j with lo_j > hi_i); worst = N - #(j with hi_j < lo_i). O(N log N).
    """
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    if lo.shape != hi.shape or lo.ndim != 1:
        raise ValueError("lo and hi must be 1-d arrays of the same length")
    if np.isnan(lo).any() or np.isnan(hi).any() or (lo > hi).any():
        raise ValueError("intervals need lo <= hi and no NaN")
    n = len(lo)
    above = n - np.searchsorted(np.sort(lo), hi, side="right")
    below = np.searchsorted(np.sort(hi), lo, side="left")
    return (1 + above).astype(np.int64), (n - below).astype(np.int64)


def point_ranks(score: np.ndarray) -> np.ndarray:
    """Competition ranks, higher is better: 1 + #(strictly higher scores)."""
    score = np.asarray(score, float)
    return (1 + len(score) - np.searchsorted(np.sort(score), score, side="right")).astype(np.int64)


def scope(tasks: dict[str, TaskSpec], task: str | None = None, group: str | None = None,
          groups: dict[str, list[str]] | None = None) -> list[str]:
    """The tasks a leaderboard covers; :class:`UserError` names an unknown task or group."""
    if task is not None:
        if task not in tasks:
            raise UnknownNameError(f"unknown task {task!r}; tasks: {', '.join(sorted(tasks))}")
        if group is not None and task not in scope(tasks, group=group, groups=groups):
            raise UserError(f"task {task} is not in group {group}")
        return [task]
    if group is None:
        return sorted(tasks)
    groups = groups or {}
    members, seen, todo = set(), set(), [group]
    while todo:
        name = todo.pop()
        seen.add(name)
        members |= {t for t, spec in tasks.items() if spec.group == name or t == name}
        todo += [g for g in groups.get(name, []) if g not in seen]
    if not members:
        known = sorted(set(groups) | {spec.group for spec in tasks.values()})
        raise UnknownNameError(f"unknown group {group!r}; groups: {', '.join(known)}")
    return sorted(members)


def leaderboard(store: Store, task: str | None = None, group: str | None = None, *,
                scores: pa.Table | None = None) -> pa.Table:
    """The ranked table of VALID submissions: per ``task``, or overall (within ``group`` when given).

    ``scores`` is ``store.scores()`` when given: read it once to rank several tables.
    """
    tasks = store.tasks
    names = scope(tasks, task, group, store.groups)
    scores = store.scores() if scores is None else scores
    if task is not None:
        spec = tasks[task]
        if spec.protocol is not None and not spec.protocol.ranked:  # its metric alone can be won without skill
            return SCHEMA.empty_table()
        rows = _task_rows(scores, spec)
    else:
        ranked = overall_tasks(tasks, names, group)
        rows = _overall([_task_rows(scores, tasks[name]) for name in ranked], len(ranked))
    if not len(rows["submission_id"]):
        return SCHEMA.empty_table()
    rows["rank"] = point_ranks(rows["up"])
    rows["rank_best"], rows["rank_worst"] = rank_ranges(rows["up_low"], rows["up_high"])
    order = np.lexsort((rows["submission_id"], -rows["up"], rows["rank"]))
    models = _model_rows(scores, rows["submission_id"][order])
    columns = {name: models[name] for name in MODEL_COLUMNS}
    columns |= {name: pa.array(rows[name][order], SCHEMA.field(name).type) for name in COLUMNS if name not in columns}
    return pa.table(columns, schema=SCHEMA)


def in_overall(spec: TaskSpec, group: str | None = None) -> bool:
    """Whether a task enters the mean of the board of ``group`` (None: overall): it has a protocol, and its group
    is not in :data:`OUT_OF_OVERALL` unless that group is the board's (it is ranked on its own board), and its
    protocol ranks it (``ranked: false``: reported on model pages only)."""
    return (spec.protocol is not None and spec.problem is None and spec.protocol.ranked
            and (spec.group not in OUT_OF_OVERALL or spec.group == group))


def overall_tasks(tasks: dict[str, TaskSpec], names: list[str], group: str | None = None) -> list[str]:
    """The tasks of ``names`` that enter the mean of the board of ``group`` (None: overall)."""
    return [name for name in names if in_overall(tasks[name], group)]


def left_out(tasks: dict[str, TaskSpec], names: list[str], group: str | None = None) -> dict[str, str]:
    """Task -> why it is not in the mean of the board of ``group`` (None: overall) over ``names``."""
    out = {}
    for name in names:
        spec = tasks[name]
        if spec.group in OUT_OF_OVERALL and spec.group != group:
            out[name] = OUT_OF_OVERALL[spec.group]
        elif spec.protocol is None or spec.problem:
            out[name] = spec.problem or "no protocol"
        elif not spec.protocol.ranked:
            out[name] = spec.protocol.note or "its protocol does not rank it"
    return out


def _oriented(metric: MetricSpec, value: np.ndarray) -> np.ndarray:
    """Scores turned so that higher is better: a lower-is-better metric is reflected in its range, or negated."""
    if metric.higher_is_better:
        return value
    return (metric.lo + metric.hi if np.isfinite(metric.lo) and np.isfinite(metric.hi) else 0.0) - value


def _task_rows(scores: pa.Table, spec: TaskSpec) -> dict[str, np.ndarray]:
    """Primary-metric rows of one task (current version) with their intervals, as is and oriented."""
    mask = pc.and_(pc.and_(pc.equal(scores["task"], spec.name), pc.equal(scores["metric"], spec.primary)),
                   pc.equal(scores["version"], spec.version))
    rows = scores.filter(mask)
    metric = spec.metrics[spec.primary]
    value = rows["value"].to_numpy(zero_copy_only=False).astype(float)
    stderr = rows["stderr"].to_numpy(zero_copy_only=False).astype(float)
    n = rows["n"].to_numpy(zero_copy_only=False).astype(np.int64)
    lo, hi = intervals(metric, value, stderr, n)
    # binary: the larger of the stderr and the Wilson half-width / 1.96; no stderr: the interval's half-width
    se = np.fmax(stderr, (hi - lo) / (2 * Z95)) if metric.binary else np.where(np.isnan(stderr),
                                                                                (hi - lo) / (2 * Z95), stderr)
    up_low, up_high = (lo, hi) if metric.higher_is_better else (_oriented(metric, hi), _oriented(metric, lo))
    protocol = spec.protocol
    if protocol is not None:
        base = rows["baseline"].to_numpy(zero_copy_only=False).astype(float) if "baseline" in rows.column_names \
            else np.full(len(value), np.nan)
        fixed = np.nan if isinstance(protocol.baseline, str) else float(protocol.baseline)
        base = np.where(np.isnan(base), fixed, base)
        span = protocol.best - base

        def over_span(x: np.ndarray) -> np.ndarray:  # a baseline at the best (a one-label split): no skill shows, 0
            return np.divide(x, span, out=np.zeros(len(value)), where=span != 0)

        norm = {"norm": over_span(value - base), "norm_low": over_span(lo - base), "norm_high": over_span(hi - base),
                "norm_se": np.abs(over_span(se))}
        if not protocol.higher_is_better:
            norm["norm_low"], norm["norm_high"] = norm["norm_high"], norm["norm_low"]
        for key in ("norm", "norm_low", "norm_high"):  # below the baseline is no skill: 0, as the OLL v2 clips
            norm[key] = np.maximum(norm[key], 0.0)
    else:
        norm = {k: np.full(len(value), np.nan) for k in ("norm", "norm_low", "norm_high", "norm_se")}
    return norm | {"submission_id": rows["submission_id"].to_numpy(zero_copy_only=False).astype(np.int64),
            "score": value,
            "stderr": stderr, "ci_low": lo, "ci_high": hi, "n": n, "n_tasks": np.ones(len(value), np.int64),
            "up": _oriented(metric, value), "up_low": up_low, "up_high": up_high, "se": se,
            "range_lo": np.full(len(value), metric.lo), "range_hi": np.full(len(value), metric.hi)}


def _overall(per_task: list[dict[str, np.ndarray]], k: int) -> dict[str, np.ndarray]:
    """Mean of the normalised per-task scores of the submissions that have all ``k`` tasks."""
    if not per_task or k == 0:
        return {"submission_id": np.empty(0, np.int64)}
    ids = np.concatenate([t["submission_id"] for t in per_task])
    uniq, index = np.unique(ids, return_inverse=True)

    def total(name: str) -> np.ndarray:
        return np.bincount(index, np.concatenate([t[name] for t in per_task]).astype(float), len(uniq))

    count = np.bincount(index, minlength=len(uniq))
    score = total("norm") / k
    stderr = np.sqrt(np.bincount(index, np.concatenate([t["norm_se"] for t in per_task]) ** 2, len(uniq))) / k
    keep = (count == k) & np.isfinite(score)
    lo, hi = score - Z95 * stderr, score + Z95 * stderr
    rows = {"submission_id": uniq, "score": score, "stderr": stderr, "ci_low": lo, "ci_high": hi,
            "n": total("n").astype(np.int64), "n_tasks": count.astype(np.int64), "up": score, "up_low": lo,
            "up_high": hi}
    return {name: values[keep] for name, values in rows.items()}


def _model_rows(scores: pa.Table, ids: np.ndarray) -> pa.Table:
    """The model columns of submissions ``ids``, in that order (one row of ``scores`` per submission)."""
    all_ids = scores["submission_id"].to_numpy(zero_copy_only=False)
    uniq, first = np.unique(all_ids, return_index=True)
    models = scores.select(MODEL_COLUMNS).take(pa.array(first[np.searchsorted(uniq, ids)]))
    return models.cast(pa.schema([SCHEMA.field(name) for name in MODEL_COLUMNS]))
