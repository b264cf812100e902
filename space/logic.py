"""Plain functions behind the Space: filters, table formatting, the daily limit, run settings, SQL.

Nothing here touches Gradio, so the tests call these functions directly;
``app.py`` only wires them to components.
"""

from __future__ import annotations

import json
import re
import shlex
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

OVERALL = "Overall"
# Columns a user may hide; Rank, Model, Score and the per-task or per-benchmark score columns always show.
OPTIONAL_COLUMNS = ("Rank range", "95% CI", "± SE", "n", "Params (B)", "Precision", "Type", "License", "Revision",
                    "Submission")
DEFAULT_COLUMNS = ("Rank range", "95% CI", "Params (B)", "Precision", "Type", "License", "Submission")
MAX_SQL_ROWS = 500

_PARAMS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMbBtT]?)\s*$")
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}


# ---------------------------------------------------------------- leaderboard


@dataclass(frozen=True)
class Filters:
    """What the Leaderboard tab's controls ask for; ``None`` means "no filter"."""

    search: str = ""
    min_params_b: float | None = None
    max_params_b: float | None = None
    precisions: Collection[str] | None = None
    model_types: Collection[str] | None = None
    licenses: Collection[str] | None = None


def filter_board(board: pl.DataFrame, filters: Filters) -> pl.DataFrame:
    """Rows of a raw leaderboard (``ranking.leaderboard`` columns) that pass ``filters``.

    The search matches any of its ``,``/``;``-separated terms as a case-insensitive
    substring of the model id; the parameter bounds are in billions and inclusive.
    """
    keep = pl.lit(True)
    terms = [t.strip().lower() for t in re.split(r"[,;]", filters.search or "") if t.strip()]
    if terms:
        model = pl.col("model_id").str.to_lowercase()
        keep &= pl.any_horizontal([model.str.contains(t, literal=True) for t in terms])
    if filters.min_params_b is not None:
        keep &= pl.col("params") >= filters.min_params_b * 1e9
    if filters.max_params_b is not None:
        keep &= pl.col("params") <= filters.max_params_b * 1e9
    for column, allowed in (("precision", filters.precisions), ("model_type", filters.model_types),
                            ("license", filters.licenses)):
        if allowed is not None:
            keep &= pl.col(column).is_in(list(allowed))
    return board.filter(keep)


def params_b(params: int | None) -> float | None:
    """Parameter count in billions, three significant digits."""
    return None if params is None else float(f"{params / 1e9:.3g}")


def rank_range(best: int | None, worst: int | None) -> str:
    """``"2"`` or ``"1–4"``: the ranks the confidence intervals allow."""
    if best is None or worst is None:
        return ""
    return str(best) if best == worst else f"{best}–{worst}"


def interval(low: float | None, high: float | None, digits: int = 3) -> str:
    """``"0.512–0.634"``, or empty when unknown."""
    if low is None or high is None:
        return ""
    return f"{low:.{digits}f}–{high:.{digits}f}"


def format_board(board: pl.DataFrame, part_scores: dict[str, pl.DataFrame] | None = None) -> pl.DataFrame:
    """Display columns of a raw leaderboard, ordered by rank.

    ``part_scores`` (a task or benchmark -> its raw leaderboard) adds one score column per
    part after Score, joined on the submission.
    """
    rows = board.sort("rank", "model_id").to_dicts()
    columns: dict[str, tuple[pl.DataType, list[Any]]] = {
        "Rank": (pl.Int64, [r["rank"] for r in rows]),
        "Rank range": (pl.String, [rank_range(r["rank_best"], r["rank_worst"]) for r in rows]),
        "Model": (pl.String, [r["model_id"] for r in rows]),
        "Score": (pl.Float64, [_round(r["score"]) for r in rows]),
    }
    for part, scores in (part_scores or {}).items():
        by_id = dict(zip(scores["submission_id"].to_list(), scores["score"].to_list(), strict=True))
        columns[part] = (pl.Float64, [_round(by_id.get(r["submission_id"])) for r in rows])
    columns |= {
        "95% CI": (pl.String, [interval(r["ci_low"], r["ci_high"]) for r in rows]),
        "± SE": (pl.Float64, [_round(r["stderr"]) for r in rows]),
        "n": (pl.Int64, [r["n"] for r in rows]),
        "Params (B)": (pl.Float64, [params_b(r["params"]) for r in rows]),
        "Precision": (pl.String, [r["precision"] for r in rows]),
        "Type": (pl.String, [r["model_type"] for r in rows]),
        "License": (pl.String, [r["license"] for r in rows]),
        "Revision": (pl.String, [(r["revision"] or "")[:7] for r in rows]),
        "Submission": (pl.Int64, [r["submission_id"] for r in rows]),
    }
    return pl.DataFrame([pl.Series(name, values, dtype=dtype) for name, (dtype, values) in columns.items()])


def select_columns(frame: pl.DataFrame, chosen: Iterable[str]) -> pl.DataFrame:
    """``frame`` without the optional columns that are not ``chosen`` (the order stays the frame's)."""
    chosen = set(chosen)
    return frame.select([c for c in frame.columns if c not in OPTIONAL_COLUMNS or c in chosen])


def column_types(frame: pl.DataFrame) -> list[str]:
    """Gradio Dataframe datatypes: numbers for numeric columns, plain text for everything else."""
    return ["number" if frame.schema[c].is_numeric() else "str" for c in frame.columns]


def score_plot(board: pl.DataFrame, title: str) -> Any:
    """Matplotlib figure of score against parameter count (log scale), with the CIs as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.2), layout="constrained")
    ax = fig.add_subplot()
    points = board.filter(pl.col("params").is_not_null() & (pl.col("params") > 0) & pl.col("score").is_not_null())
    if points.is_empty():
        ax.text(0.5, 0.5, "No submissions to plot", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    for model_type, group in points.group_by("model_type", maintain_order=True):
        rows = group.to_dicts()
        x = [r["params"] for r in rows]
        y = [r["score"] for r in rows]
        low = [max(0.0, r["score"] - r["ci_low"]) if r["ci_low"] is not None else 0.0 for r in rows]
        high = [max(0.0, r["ci_high"] - r["score"]) if r["ci_high"] is not None else 0.0 for r in rows]
        ax.errorbar(x, y, yerr=[low, high], fmt="o", capsize=3, label=str(model_type[0]))
        for r in rows[:40]:
            ax.annotate(_plain(r["model_id"].rsplit("/", 1)[-1]), (r["params"], r["score"]), fontsize=7,
                        xytext=(4, 4), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("parameters")
    ax.set_ylabel("score")
    ax.set_title(_plain(title))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, title="model type", title_fontsize=8)
    return fig


def _plain(text: str) -> str:
    """Text matplotlib shows literally (``$`` would start mathtext)."""
    return text.replace("$", r"\$")


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


# ---------------------------------------------------------------- submitting


def parse_params(text: str | float | int | None) -> int:
    """A parameter count from ``134515008``, ``135M``, ``7B``, ``1.5b`` (ValueError otherwise)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return int(text)
    match = _PARAMS.match(text or "")
    if not match:
        raise ValueError(f"{text!r} is not a count like 134515008, 135M or 7B")
    return round(float(match[1]) * _SCALE[match[2].lower()])


def prefill(results: dict[str, Any]) -> dict[str, Any]:
    """Metadata guesses from an lm-eval results file: model_id, revision, precision, params (when present)."""
    config = results.get("config") or {}
    args = model_args(config.get("model_args"))
    guess: dict[str, Any] = {}
    model = str(args.get("pretrained") or results.get("model_name") or "")
    if re.fullmatch(r"[\w.-]+/[\w.-]+", model):
        guess["model_id"] = model
    for revision in (config.get("model_sha"), args.get("revision"), config.get("model_revision")):
        if isinstance(revision, str) and re.fullmatch(r"[0-9a-f]{7,64}", revision):
            guess["revision"] = revision
            break
    dtype = str(config.get("model_dtype") or args.get("dtype") or "").removeprefix("torch.")
    if dtype in ("float32", "float16", "bfloat16"):
        guess["precision"] = dtype
    if isinstance(config.get("model_num_parameters"), int) and config["model_num_parameters"] > 0:
        guess["params"] = config["model_num_parameters"]
    return guess


def submissions_on(entries: Iterable[Any], submitter: str, day: date) -> int:
    """How many of ``entries`` ``submitter`` made on the UTC ``day``."""
    return sum(1 for e in entries if e.submitter == submitter and as_utc(e.submitted_at).date() == day)


def limit_reached(entries: Iterable[Any], submitter: str, limit: int | None, now: datetime | None = None) -> str | None:
    """Why ``submitter`` may not submit now (the daily limit is used up), or ``None``."""
    if limit is None:
        return None
    now = as_utc(now or datetime.now(UTC))
    used = submissions_on(entries, submitter, now.date())
    if used < limit:
        return None
    return (f"LIMIT: {submitter} has made {used} submission(s) today (UTC), the daily limit is {limit}; "
            "try again tomorrow.")


def as_utc(value: datetime | str) -> datetime:
    """A timezone-aware UTC datetime from a datetime or an ISO string (naive means UTC)."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def verdict(entry: Any) -> str:
    """One-paragraph verdict of a stored submission."""
    if entry.duplicate_of:
        return (f"DUPLICATE: these results were already submitted as #{entry.duplicate_of} "
                f"({entry.status}{': ' + entry.reason if entry.reason else ''}); nothing new was stored.")
    if entry.status == "VALID":
        return (f"VALID: {entry.model_id} @ {entry.revision[:7]} ({entry.precision}) is accepted as submission "
                f"#{entry.id} and is now on the leaderboard.")
    return f"{entry.status}: {entry.reason or 'no reason given'}"


def problems_text(problems: Sequence[tuple[str, str]]) -> str:
    """``REJECTED`` followed by one ``field: reason`` line per problem."""
    return "REJECTED: the metadata is not valid\n" + "\n".join(f"- {field}: {reason}" for field, reason in problems)


def validation_problems(exc: Exception) -> list[tuple[str, str]]:
    """(field, reason) pairs of a rejected submission or a pydantic validation error."""
    if hasattr(exc, "problems"):
        return [(str(f), str(r)) for f, r in exc.problems]
    if hasattr(exc, "errors"):
        return [(".".join(str(p) for p in err["loc"]) or "metadata", err["msg"]) for err in exc.errors()]
    return [("metadata", str(exc))]


# ---------------------------------------------------------------- model page


def model_args(value: Any) -> dict[str, Any]:
    """lm-eval ``model_args`` as a dict, whether the run stored a dict or a ``k=v,k=v`` string."""
    if isinstance(value, dict):
        return dict(value)
    pairs = (p.split("=", 1) for p in str(value or "").split(",") if "=" in p)
    return {k.strip(): v.strip() for k, v in pairs}


def run_settings(results: dict[str, Any]) -> pl.DataFrame:
    """The run's configuration as (scope, setting, value) rows: versions, model, chat template, per-task settings."""
    config = results.get("config") or {}
    rows: list[tuple[str, str, Any]] = [
        ("run", "lm_eval_version", results.get("lm_eval_version")),
        ("run", "transformers_version", results.get("transformers_version")),
        ("run", "git_hash", results.get("git_hash")),
        ("run", "date", _date(results.get("date"))),
    ]
    rows += [("run", key, config.get(key)) for key in (
        "model", "model_args", "model_num_parameters", "model_dtype", "model_revision", "model_sha", "batch_size",
        "device", "limit", "gen_kwargs", "bootstrap_iters", "random_seed", "numpy_seed", "torch_seed",
        "fewshot_seed")]
    rows += [("chat", key, results.get(key)) for key in (
        "chat_template_sha", "system_instruction", "system_instruction_sha", "fewshot_as_multiturn")]
    rows.append(("chat", "chat template applied", results.get("chat_template") is not None))
    n_shot = results.get("n-shot") or {}
    n_samples = results.get("n-samples") or {}
    for task, task_config in sorted((results.get("configs") or {}).items()):
        rows += [
            (task, "version", (results.get("versions") or {}).get(task)),
            (task, "num_fewshot", n_shot.get(task, task_config.get("num_fewshot"))),
            (task, "output_type", task_config.get("output_type")),
            (task, "generation_kwargs", task_config.get("generation_kwargs")),
            (task, "samples (effective of original)", _samples(n_samples.get(task))),
            (task, "task_hash", (results.get("task_hashes") or {}).get(task)),
        ]
    return pl.DataFrame([(s, k, _text(v)) for s, k, v in rows if v not in (None, "")],
                        schema=["scope", "setting", "value"], orient="row")


def reproduce_command(results: dict[str, Any], model_id: str, revision: str) -> str:
    """An ``lm_eval run`` command, one option a line, that repeats the run on the submitted model and revision."""
    config = results.get("config") or {}
    configs = results.get("configs") or {}
    args = model_args(config.get("model_args"))
    args.update(pretrained=model_id, revision=revision)
    tasks = sorted(configs)
    shots = {(results.get("n-shot") or {}).get(t, configs[t].get("num_fewshot")) for t in tasks}
    lines = ["lm_eval run", '--include_path "$(neurips26 tasks --path)"', f"--tasks {','.join(tasks)}",
             f"--model {config.get('model') or 'hf'}",
             f"--model_args {shlex.quote(','.join(f'{k}={v}' for k, v in args.items()))}"]
    if len(shots) == 1 and None not in shots:
        lines.append(f"--num_fewshot {shots.pop()}")
    if config.get("batch_size") is not None:
        lines.append(f"--batch_size {shlex.quote(str(config['batch_size']))}")
    if config.get("gen_kwargs"):
        gen = config["gen_kwargs"]
        gen = ",".join(f"{k}={v}" for k, v in gen.items()) if isinstance(gen, dict) else str(gen)
        lines.append(f"--gen_kwargs {shlex.quote(gen)}")
    if results.get("chat_template") is not None:
        lines.append("--apply_chat_template")
        if results.get("fewshot_as_multiturn"):
            lines.append("--fewshot_as_multiturn")
    if results.get("system_instruction"):
        lines.append(f"--system_instruction {shlex.quote(str(results['system_instruction']))}")
    seeds = [config.get(k) for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")]
    if all(s is not None for s in seeds):
        lines.append(f"--seed {','.join(str(s) for s in seeds)}")
    if config.get("limit") is not None:
        lines.append(f"--limit {config['limit']}")
    lines += ["--log_samples", "--output_path results"]
    command = " \\\n  ".join(lines)
    if len(shots) > 1:
        command += "\n# the few-shot count differs per task (see the run configuration): run each task on its own"
    return command


def _date(value: Any) -> Any:
    """lm-eval's run date (a Unix timestamp) as ISO text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{datetime.fromtimestamp(value, UTC):%Y-%m-%d %H:%M:%S} UTC"
    return value


def _samples(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    return f"{value.get('effective')} of {value.get('original')}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


# ---------------------------------------------------------------- datasets


def dataset_views(folders: dict[str, Path]) -> pl.DataFrame:
    """(view, split, rows) of every config of the built folders, from their manifests."""
    rows = []
    for name, folder in sorted(folders.items()):
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        for config, splits in manifest["configs"].items():
            for split, shards in splits.items():
                rows.append((f"{name}.{config}", split, sum(s.get("rows", 0) for s in shards)))
    return pl.DataFrame(rows, schema={"view": pl.String, "split": pl.String, "rows": pl.Int64}, orient="row")


def limited_sql(sql: str, max_rows: int = MAX_SQL_ROWS) -> str:
    """``sql`` wrapped so that at most ``max_rows + 1`` rows come back."""
    body = sql.strip().rstrip(";").strip()
    return f"SELECT * FROM (\n{body}\n) AS query LIMIT {max_rows + 1}"


def run_sql(sql: str, data_root: Path, max_rows: int = MAX_SQL_ROWS) -> tuple[pl.DataFrame, str]:
    """Run a read-only SELECT over the dataset views: (first ``max_rows`` rows, a one-line status).

    The refusal or error message of :func:`neurips26.sql.run_query` becomes the status.
    """
    from neurips26.sql import QueryError, dataset_folders, run_query

    empty = pl.DataFrame()
    if not sql.strip():
        return empty, "Write one SELECT, e.g. SELECT * FROM locus.sections LIMIT 10"
    try:
        folders = dataset_folders(data_root)
        try:
            table = run_query(limited_sql(sql, max_rows), folders)
        except QueryError:
            table = run_query(sql, folders)  # the error, or the result, of the query as written
    except QueryError as exc:
        return empty, f"error: {exc}"
    frame = displayable(table)
    if frame.height > max_rows:
        return frame.head(max_rows), f"showing the first {max_rows} rows"
    return frame, f"{frame.height} row(s)"


def displayable(table: pa.Table) -> pl.DataFrame:
    """A table Gradio can send as is: nested and binary columns as JSON or hex text, dates and times as ISO text,
    decimals as floats."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    nested = [c for c, t in frame.schema.items() if t.is_nested() or t == pl.Binary or t == pl.Object]
    return frame.with_columns(
        *(pl.Series(c, [None if v is None else _text(v.hex() if isinstance(v, bytes) else v)
                        for v in frame[c].to_list()], dtype=pl.String) for c in nested),
        *(pl.col(c).cast(pl.String) for c, t in frame.schema.items() if t.is_temporal()),
        *(pl.col(c).cast(pl.Float64) for c, t in frame.schema.items() if t.is_decimal()))


# ---------------------------------------------------------------- store


BOARD_SCHEMA: dict[str, pl.DataType] = {
    "model_id": pl.String(), "revision": pl.String(), "precision": pl.String(), "params": pl.Int64(),
    "license": pl.String(), "model_type": pl.String(), "submission_id": pl.Int64(), "score": pl.Float64(),
    "stderr": pl.Float64(), "ci_low": pl.Float64(), "ci_high": pl.Float64(), "rank": pl.Int64(),
    "rank_best": pl.Int64(), "rank_worst": pl.Int64(), "n": pl.Int64(),
}


def empty_board() -> pl.DataFrame:
    """A leaderboard with no rows."""
    return pl.DataFrame(schema=BOARD_SCHEMA)


def board_frame(table: pa.Table) -> pl.DataFrame:
    """A ``ranking.leaderboard`` table as polars, with the column types the formatting expects."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame.cast({c: t for c, t in BOARD_SCHEMA.items() if c in frame.columns}) if frame.width else empty_board()


def task_groups(specs: dict[str, Any]) -> dict[str, list[str]]:
    """Benchmark (resource group) -> its tasks, both sorted."""
    groups: dict[str, list[str]] = {}
    for name, spec in sorted(specs.items()):
        groups.setdefault(spec.group, []).append(name)
    return dict(sorted(groups.items()))


def load_boards(store: Any, groups: dict[str, list[str]]) -> tuple[dict[str, pl.DataFrame], list[str]]:
    """Raw leaderboards by name (Overall, each benchmark, each task) and why any of them could not be ranked."""
    from neurips26.leaderboard.ranking import leaderboard

    scopes: dict[str, dict[str, str]] = {OVERALL: {}, **{g: {"group": g} for g in groups}}
    scopes |= {task: {"task": task} for members in groups.values() for task in members}
    boards, problems = {}, []
    for name, scope in scopes.items():
        try:
            boards[name] = board_frame(leaderboard(store, **scope))
        except ValueError as exc:
            boards[name] = empty_board()
            problems.append(f"{name}: {exc}")
    return boards, problems


class BoardCache:
    """:func:`load_boards`, computed again after :meth:`clear` (a submission) or once ``ttl`` seconds have passed
    (submissions made elsewhere, e.g. with ``neurips26 submit``)."""

    def __init__(self, store: Any, groups: dict[str, list[str]], ttl: float = 60.0):
        self.store, self.groups, self.ttl = store, groups, ttl
        self._lock = threading.Lock()
        self._value: tuple[dict[str, pl.DataFrame], list[str]] | None = None
        self._at = 0.0

    def get(self) -> tuple[dict[str, pl.DataFrame], list[str]]:
        with self._lock:
            if self._value is None or time.monotonic() - self._at > self.ttl:
                self._value = load_boards(self.store, self.groups)
                self._at = time.monotonic()
            return self._value

    def clear(self) -> None:
        with self._lock:
            self._value = None


def constant(value: Any) -> Callable[[], Any]:
    """A function of no arguments that returns ``value`` (an event handler that sets a state)."""
    return lambda: value


def licenses_of(boards: dict[str, pl.DataFrame]) -> list[str]:
    """Every license on the leaderboards, sorted."""
    return sorted({lic for board in boards.values() for lic in board["license"].to_list() if lic})


def submission_of_row(row: dict[str, Any], board: pl.DataFrame) -> int | None:
    """The submission a clicked table row shows: its Submission cell, else the best-ranked match of its cells."""
    if row.get("Submission") not in (None, ""):
        return int(row["Submission"])
    matches = board.filter(pl.col("model_id") == row.get("Model"))
    if row.get("Revision"):
        matches = matches.filter(pl.col("revision").str.starts_with(str(row["Revision"])))
    if row.get("Precision"):
        matches = matches.filter(pl.col("precision") == row["Precision"])
    return None if matches.is_empty() else matches.sort("rank")["submission_id"][0]


def submit(store: Any, submitter: str, daily_limit: int | None, results_path: str | Path | None,
           samples: Sequence[str | Path] | None, model_id: str | None, revision: str | None, precision: str | None,
           params: str | int | None, model_type: str | None, license_: str | None) -> tuple[str, Any]:
    """Check the daily limit and the metadata, then hand the files to the store: (verdict text, Entry or None)."""
    from neurips26.leaderboard.modelinfo import check_model_info

    if not results_path:
        return "Choose a results file (results_*.json) first.", None
    refused = limit_reached(store.entries(submitter=submitter), submitter, daily_limit)
    if refused:
        return refused, None
    problems: list[tuple[str, str]] = []
    try:
        count: int | None = parse_params(params)
    except ValueError as exc:
        problems.append(("params", str(exc)))
        count = None
    try:
        meta = check_model_info({"model_id": (model_id or "").strip(), "revision": (revision or "").strip(),
                                 "precision": precision, "params": count or 1, "license": license_ or "",
                                 "model_type": model_type, "submitter": submitter})
    except ValueError as exc:
        problems += [p for p in validation_problems(exc) if count is not None or p[0] != "params"]
    if problems:
        return problems_text(problems), None
    entry = store.submit(Path(results_path), meta, [Path(p) for p in samples or []])
    return verdict(entry), entry


def entry_scores(store: Any, submission_id: int | None) -> pl.DataFrame:
    """(Task, Metric, Value, ± SE, n) of one submission, from the store's scores (no rows for ``None``)."""
    empty = pl.DataFrame(schema={"Task": pl.String, "Metric": pl.String, "Value": pl.Float64, "± SE": pl.Float64,
                                 "n": pl.Int64})
    scores = pl.from_arrow(store.scores()) if submission_id is not None else None
    if not isinstance(scores, pl.DataFrame) or scores.is_empty():
        return empty
    return (scores.filter(pl.col("submission_id") == submission_id).sort("task", "metric")
            .select(pl.col("task").alias("Task"), pl.col("metric").alias("Metric"),
                    pl.col("value").round(4).alias("Value"), pl.col("stderr").round(4).alias("± SE"),
                    pl.col("n").cast(pl.Int64)))


def submission_choices(entries: Iterable[Any]) -> list[tuple[str, int]]:
    """(label, submission id) of valid submissions for the Model page picker, by model."""
    valid = sorted((e for e in entries if e.status == "VALID"), key=lambda e: (e.model_id, str(e.submitted_at)))
    return [(f"{e.model_id} @ {e.revision[:7]} · {e.precision} · #{e.id}", e.id) for e in valid]


@dataclass
class ModelPage:
    about: pl.DataFrame
    breakdown: pl.DataFrame
    command: str
    settings: pl.DataFrame
    chat_template: str


def model_page(store: Any, submission_id: int | None, boards: dict[str, pl.DataFrame]) -> ModelPage:
    """Everything the Model page shows about one submission (empty tables when there is none)."""
    try:
        entry = None if submission_id is None else store.entry(int(submission_id))
    except KeyError:
        entry = None
    if entry is None:
        empty = pl.DataFrame(schema={"field": pl.String, "value": pl.String})
        return ModelPage(empty, entry_scores(store, None), "", run_settings({}), "")
    about = pl.DataFrame({
        "field": ["model", "revision", "precision", "parameters", "model type", "license", "submitter",
                  "submitted at", "status", "submission", "results sha256"],
        "value": [entry.model_id, entry.revision, entry.precision, "" if entry.params is None else f"{entry.params:,}",
                  entry.model_type, entry.license, entry.submitter, f"{as_utc(entry.submitted_at):%Y-%m-%d %H:%M} UTC",
                  entry.status, f"#{entry.id}", entry.results_sha256]})
    breakdown = entry_scores(store, entry.id)
    specs = store.tasks
    ranks = {}
    for task, board in boards.items():
        rows = board.filter(pl.col("submission_id") == entry.id).to_dicts()
        if task in specs and rows:
            row = rows[0]
            ranks[(task, specs[task].primary)] = f"{row['rank']} ({rank_range(row['rank_best'], row['rank_worst'])})"
    pairs = zip(breakdown["Task"], breakdown["Metric"], strict=True)
    breakdown = breakdown.with_columns(pl.Series("Rank (range)", [ranks.get(p, "") for p in pairs], dtype=pl.String))
    results = stored_results(store, entry)
    return ModelPage(about, breakdown, reproduce_command(results, entry.model_id, entry.revision),
                     run_settings(results), results.get("chat_template") or "")


def stored_results(store: Any, entry: Any) -> dict[str, Any]:
    """The results JSON a submission stored (content-addressed by its sha256); empty when not kept."""
    return read_json(store.file_path(entry.results_sha256)) if entry.results_sha256 else {}


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``; empty when the file is not one."""
    try:
        data = json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def ensure_datasets() -> Path:
    """The default data root (as ``neurips26 eval`` finds it), with the embedded samples built when it holds none."""
    from neurips26.corpora import RESOURCES, builder
    from neurips26.tasks import data_root

    from neurips26.sql import dataset_folders

    root = data_root()
    if not dataset_folders(root):
        for name in RESOURCES:
            builder(name).build(out=root / name)
    return root
