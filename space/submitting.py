"""The Submit tab: the daily limit, metadata guesses from the results file, the verdict of a submission.

Nothing here touches Gradio, so the tests call these functions directly; ``tabs.py`` only wires them to components.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from neurips26.leaderboard.jsonlimits import loads as load_json_limited
from neurips26.leaderboard.modelinfo import MAX_RESULTS_BYTES, MAX_SAMPLES_BYTES, SubmissionRejected, check_model_info

from neurips26 import jsonfile
from neurips26.results import model_args

MAX_UPLOAD_BYTES = MAX_SAMPLES_BYTES  # the Space refuses larger uploads (Gradio's max_file_size)
_PARAMS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMbBtT]?)\s*$")
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}

# ---------------------------------------------------------------- submitting


def parse_params(text: str | float | int | None) -> int:
    """A parameter count from ``134515008``, ``135M``, ``7B``, ``1.5b`` (ValueError otherwise)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return int(text)
    match = _PARAMS.match(text or "")
    if not match:
        raise ValueError(f"{text!r} is not a count like 134515008, 135M or 7B")
    return round(float(match[1]) * _SCALE[match[2].lower()])


def params_text(count: int) -> str:
    """A parameter count as the Parameters field's hint writes it, three significant digits: ``135M``, ``7.24B``
    (the board shows counts to three digits too)."""
    for suffix, scale in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if count >= scale:
            return f"{float(f'{count / scale:.3g}'):g}{suffix}"
    return str(count)


def uploaded_results(path: str | Path) -> dict[str, Any]:
    """The uploaded results file as a JSON object to :func:`prefill` from; empty when it is over the results
    size limit, nested too deeply, not JSON or not an object (the submission itself then says why)."""
    try:
        if Path(path).stat().st_size > MAX_RESULTS_BYTES:
            return {}
        data = load_json_limited(Path(path).read_bytes(), "results", MAX_RESULTS_BYTES)
    except (OSError, SubmissionRejected):
        return {}
    return data if isinstance(data, dict) else {}


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
    if entry.status == "UNRANKED":
        return (f"UNRANKED: stored as submission #{entry.id} and shown on its model page, but not ranked: the run is "
                f"not the standard run of the task protocols ({entry.reason}).")
    if entry.status == "VALID":
        return (f"VALID: {entry.model_id} @ {entry.revision[:7]} ({entry.precision}) is accepted as submission "
                f"#{entry.id} and is now on the leaderboard.")
    return f"{entry.status}: {entry.reason or 'no reason given'}"


# The Submit tab's label of each metadata field, so a problem names what the user sees.
LABELS = {"model_id": "Model id", "revision": "Revision", "precision": "Precision", "params": "Parameters",
          "license": "License", "model_type": "Model type", "submitter": "Submitter", "results": "Results file"}


def plain_reason(reason: str) -> str:
    """A validator's message in plain words: pydantic's "Input should be 'a', 'b' or 'c'" becomes "choose one of
    a, b or c", an empty list "required", and its "Value error, " prefix goes."""
    reason = reason.removeprefix("Value error, ")
    if reason.startswith("Input should be "):
        return "choose one of " + reason.removeprefix("Input should be ").replace("'", "")
    if "at least 1 item" in reason or reason.startswith("Field required"):
        return "required"
    return reason


def problems_text(problems: Sequence[tuple[str, str]]) -> str:
    """``REJECTED`` followed by one ``Field label: reason`` line per problem, in plain words."""
    lines = [f"- {LABELS.get(field, field)}: {plain_reason(reason)}" for field, reason in problems]
    return "REJECTED: the submission is not valid\n" + "\n".join(lines)


def read_results_file(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the uploaded results file as an lm-eval results object, None) or (None, why it is not one), read once
    with the size and nesting limits of :mod:`neurips26.jsonfile`."""
    try:
        data = jsonfile.read(path, path.name, MAX_RESULTS_BYTES)
    except jsonfile.JsonFileError as exc:
        why = exc.why.replace("not a JSON file", "is not JSON", 1) if exc.why.startswith("not a JSON") else exc.why
        return None, f"{path.name} {why}" if why.startswith("is not") else f"{path.name}: {why}"
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        return None, f"{path.name} is JSON but not an lm-eval results file (no \"results\" object)"
    return data, None


def results_problem(path: Path) -> str | None:
    """Why ``path`` is not an lm-eval results file (too big, nested too deeply, not JSON, not an object, no
    results), or None."""
    return read_results_file(path)[1]


def upload_feedback(path: Path) -> str:
    """What the Submit tab says as soon as a results file is chosen: what it holds, or why it cannot be used."""
    data, problem = read_results_file(path)
    if data is None:
        return f"This file cannot be submitted: {problem}. Choose the results_<date>.json that lm-eval wrote."
    tasks = sorted(map(str, data["results"]))
    shown = ", ".join(tasks[:6]) + (f" and {len(tasks) - 6} more" if len(tasks) > 6 else "")
    return (f"Read {path.name}: lm-eval {data.get('lm_eval_version') or '(version not recorded)'} results for "
            f"{len(tasks)} task(s) ({shown}). Add the samples files (one per task), check the fields and press "
            "Submit.")


def validation_problems(exc: Exception) -> list[tuple[str, str]]:
    """(field, reason) pairs of a rejected submission or a pydantic validation error."""
    if hasattr(exc, "problems"):
        return [(str(f), str(r)) for f, r in exc.problems]
    if hasattr(exc, "errors"):
        return [(".".join(str(p) for p in err["loc"]) or "metadata", err["msg"]) for err in exc.errors()]
    return [("metadata", str(exc))]


def submit(store: Any, submitter: str, daily_limit: int | None, results_path: str | Path | None,
           samples: Sequence[str | Path] | None, model_id: str | None, revision: str | None, precision: str | None,
           params: str | int | None, model_type: str | None, license_: str | None) -> tuple[str, Any]:
    """Check the daily limit and the metadata, then hand the files to the store: (verdict text, Entry or None)."""
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
        file_problem = results_problem(Path(results_path))
        return problems_text(([("results", file_problem)] if file_problem else []) + problems), None
    entry = store.submit(Path(results_path), meta, [Path(p) for p in samples or []])
    return verdict(entry), entry


