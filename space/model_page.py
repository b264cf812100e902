"""The Model page: one submission's scores, status (with the reason when it is not ranked) and run configuration.

Nothing here touches Gradio, so the tests call these functions directly; ``tabs.py`` only wires them to components.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from neurips26.leaderboard import diagnosis
from neurips26.leaderboard.ranking import intervals

from neurips26 import jsonfile
from neurips26.results import ResultsError, Run, parse_run
from neurips26.stats import wilson

from .boards import interval, rank_range, sig3
from .submitting import as_utc

# ---------------------------------------------------------------- model page


def _run(results: Run | dict[str, Any]) -> Run | None:
    """A stored results file as a :class:`Run` (None when there is none or it is not one)."""
    if isinstance(results, Run):
        return results
    try:
        return parse_run(results) if results else None
    except ResultsError:
        return None


def run_settings(results: Run | dict[str, Any]) -> pl.DataFrame:
    """The run's configuration as (scope, setting, value) rows: versions, model, chat template, per-task settings
    (few-shot, sample counts, task settings, the data the task read)."""
    run = _run(results)
    rows: list[tuple[str, str, Any]] = []
    if run is not None:
        raw, config = run.raw, run.config
        rows += [("run", "lm_eval_version", run.lm_eval_version),
                 ("run", "transformers_version", raw.get("transformers_version")),
                 ("run", "git_hash", raw.get("git_hash")), ("run", "date", _date(raw.get("date")))]
        rows += [("run", key, config.get(key)) for key in (
            "model", "model_args", "model_num_parameters", "model_dtype", "model_revision", "model_sha", "batch_size",
            "device", "limit", "gen_kwargs", "bootstrap_iters", "random_seed", "numpy_seed", "torch_seed",
            "fewshot_seed")]
        rows += [("chat", key, raw.get(key)) for key in (
            "chat_template_sha", "system_instruction", "system_instruction_sha", "fewshot_as_multiturn")]
        rows.append(("chat", "chat template applied", run.chat_applied))
        for name, task in sorted(run.tasks.items()):
            settings = {k: v for k, v in task.metadata.items() if k not in ("version", "config_source", "data",
                                                                             "protocol")}
            rows += [
                (name, "version", task.version),
                (name, "num_fewshot", task.num_fewshot if task.num_fewshot is not None
                 else task.config.get("num_fewshot")),
                (name, "output_type", task.config.get("output_type")),
                (name, "generation_kwargs", task.config.get("generation_kwargs")),
                (name, "samples (effective of original)",
                 None if task.n_effective is None else f"{task.n_effective} of {task.n_original}"),
                (name, "task settings", settings or None),
                (name, "data", task.data),
                (name, "task_hash", task.task_hash),
            ]
    return pl.DataFrame([(s, k, _text(v)) for s, k, v in rows if v not in (None, "")],
                        schema={"scope": pl.String, "setting": pl.String, "value": pl.String}, orient="row")


def reproduce_command(results: Run | dict[str, Any], model_id: str, revision: str) -> str:
    """An ``lm_eval run`` command, one option a line, that repeats the run on the submitted model and revision.

    Every value taken from the submitted file is shell-quoted (:func:`shlex.quote`): pasting the command runs
    ``lm_eval`` and nothing else, whatever the file holds."""
    run = _run(results)
    if run is None:
        return ""
    config, raw = run.config, run.raw
    args, dropped = reproducible_model_args(run.model_args)
    args = {"pretrained": model_id, "revision": lm_eval_string(revision), **args}
    tasks = sorted(run.tasks)
    shots = {run.tasks[t].num_fewshot if run.tasks[t].num_fewshot is not None
             else run.tasks[t].config.get("num_fewshot") for t in tasks}
    q = shlex.quote
    lines = ["lm_eval run", '--include_path "$(neurips26 tasks --path)"', f"--tasks {q(','.join(tasks))}",
             f"--model {q(str(run.model or 'hf'))}",
             f"--model_args {shlex.quote(','.join(f'{k}={v}' for k, v in args.items()))}"]
    if len(shots) == 1 and None not in shots:
        lines.append(f"--num_fewshot {q(str(shots.pop()))}")
    if config.get("batch_size") is not None:
        lines.append(f"--batch_size {shlex.quote(str(config['batch_size']))}")
    if config.get("gen_kwargs"):
        gen = config["gen_kwargs"]
        gen = ",".join(f"{k}={v}" for k, v in gen.items()) if isinstance(gen, dict) else str(gen)
        lines.append(f"--gen_kwargs {shlex.quote(gen)}")
    if run.chat_template is not None:
        lines.append("--apply_chat_template")
        if run.fewshot_as_multiturn:
            lines.append("--fewshot_as_multiturn")
    if raw.get("system_instruction"):
        lines.append(f"--system_instruction {shlex.quote(str(raw['system_instruction']))}")
    seeds = [config.get(k) for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")]
    if all(s is not None for s in seeds):
        lines.append(f"--seed {q(','.join(str(s) for s in seeds))}")
    if run.limit is not None:
        lines.append(f"--limit {q(str(run.limit))}")
    lines += ["--log_samples", "--output_path results"]
    command = " \\\n  ".join(lines)
    if dropped:
        command += f"\n# left out of --model_args (not taken from a submitted file): {', '.join(dropped)}"
    if len(shots) > 1:
        command += "\n# the few-shot count differs per task (see the run configuration): run each task on its own"
    return command


# model_args keys a submitted file may carry into the reproduce command: how the model is loaded, never which model
# (pretrained, peft, tokenizer, revision come from the submission's own fields) nor whether to run its code
MODEL_ARG_KEYS = frozenset({
    "dtype", "max_length", "max_model_len", "batch_size", "max_batch_size", "add_bos_token", "attn_implementation",
    "parallelize", "device_map", "load_in_8bit", "load_in_4bit", "tensor_parallel_size", "data_parallel_size",
    "gpu_memory_utilization", "use_fast_tokenizer", "truncation", "logits_cache", "prefix_token_id", "backend",
    "enable_thinking", "softmax_dtype", "mixed_precision_dtype", "seed", "swap_space", "max_gen_toks"})
_ARG_VALUE = re.compile(r"[A-Za-z0-9_.+-]{1,64}")  # no ',', '=', quotes, spaces: one value, one key


def reproducible_model_args(recorded: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(the recorded ``model_args`` that may go into a reproduce command, ``key (why)`` of those left out).

    Rebuilt key by key from the parsed values, never from the recorded string: only keys of
    :data:`MODEL_ARG_KEYS`, each with one plain value (a value like ``float32,trust_remote_code=True`` would smuggle
    a second pair into lm-eval's ``k=v,k=v`` string)."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in recorded.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if key in ("pretrained", "revision"):  # the submission's own model id and revision stand there
            continue
        if key not in MODEL_ARG_KEYS:
            dropped.append(f"{_shown(key)} (not a loading option)")
        elif not _ARG_VALUE.fullmatch(text):
            dropped.append(f"{_shown(key)} (value {_shown(text)} is not one plain value)")
        else:
            kept[key] = lm_eval_string(text) if isinstance(value, str) else text
    return kept, dropped


def lm_eval_string(value: str) -> str:
    """``value`` as lm-eval's ``--model_args`` keeps it a string: quoted when lm-eval would read it as a number, a
    boolean or None (a revision ``0123456`` would otherwise become the integer 123456)."""
    try:  # lm-eval's handle_arg_string: true/false/none, then int, then float (the Space does not ship lm-eval)
        float(value)
        converted = True
    except ValueError:
        converted = value.strip().lower() in ("true", "false", "none")
    return f'"{value}"' if converted else value


def _shown(text: Any) -> str:
    text = str(text)
    return repr(text if len(text) <= 40 else text[:39] + "…")


def _date(value: Any) -> Any:
    """lm-eval's run date (a Unix timestamp) as ISO text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{datetime.fromtimestamp(value, UTC):%Y-%m-%d %H:%M:%S} UTC"
    return value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def entry_scores(store: Any, submission_id: int | None) -> pl.DataFrame:
    """(Task, Metric, Value, 95% CI, ± SE, n) of one submission whatever its status, recomputed from its samples
    (no rows for ``None``); numbers as the boards show them (:func:`boards.sig3`)."""
    empty = pl.DataFrame(schema={"Task": pl.String, "Metric": pl.String, "Value": pl.String, "95% CI": pl.String,
                                 "± SE": pl.String, "n": pl.Int64})
    scores = pl.from_arrow(store.submission_scores(submission_id)) if submission_id is not None else None
    if not isinstance(scores, pl.DataFrame) or scores.is_empty():
        return empty
    rows = scores.sort("task", "metric").to_dicts()
    return pl.DataFrame({
        "Task": [r["task"] for r in rows], "Metric": [r["metric"] for r in rows],
        "Value": [sig3(r["value"]) for r in rows],
        "95% CI": [interval(*(score_interval(store.sample_scores(submission_id, r["task"], r["metric"]), r["value"],
                                             r["n"]) or stderr_interval(store, r))) for r in rows],
        "± SE": [sig3(r["stderr"]) for r in rows], "n": [r["n"] for r in rows]}, schema=empty.schema)


BOOTSTRAP = 2000  # resamples of a non-binary metric's per-document scores


def stderr_interval(store: Any, row: dict[str, Any]) -> tuple[float | None, float | None]:
    """The interval the boards give a score (:func:`neurips26.leaderboard.ranking.intervals`): value ± 1.96 SE in the
    metric's range (the SE of a corpus-level metric such as macro-F1 or perplexity is its bootstrap SE), the
    metric's whole range when no SE could be computed; (None, None) for a metric the task does not declare."""
    spec = store.tasks.get(row["task"])
    metric = spec.metrics.get(row["metric"]) if spec is not None else None
    if metric is None or row["value"] is None:
        return None, None
    stderr = np.nan if row["stderr"] is None else float(row["stderr"])
    low, high = intervals(metric, np.array([row["value"]], float), np.array([stderr]), np.array([row["n"] or 0]))
    return float(low[0]), float(high[0])


def score_interval(per_doc: dict[int, Any], value: float | None, n: int | None) -> tuple[float, float] | None:
    """A 95% interval of a score at any n: Wilson's for a proportion (per-document scores all 0 or 1, as acc and
    exact_match), else the percentile bootstrap of the per-document mean; None when neither applies (no
    per-document scores, or a corpus-level metric such as macro-F1 that is not their mean: see
    :func:`stderr_interval`)."""
    values = [v for v in per_doc.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    if value is None or not values or len(values) != len(per_doc):
        return None
    data = np.asarray(values, float)
    if not np.isclose(data.mean(), value, atol=1e-6):
        return None
    if np.isin(data, (0.0, 1.0)).all():
        low, high = wilson(value, n or len(data))
        return float(low), float(high)
    rng = np.random.default_rng(0)
    means = data[rng.integers(0, len(data), (BOOTSTRAP, len(data)))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def submission_choices(entries: Iterable[Any]) -> list[tuple[str, int]]:
    """(label, submission id) of the ranked and unranked submissions for the Model page picker, by model."""
    shown = sorted((e for e in entries if e.status in ("VALID", "UNRANKED")),
                   key=lambda e: (e.model_id, str(e.submitted_at)))
    return [(f"{e.model_id} @ {e.revision[:7]} · {e.precision} · #{e.id}"
             + (" · unranked" if e.status == "UNRANKED" else ""), e.id) for e in shown]


SIGNATURE_SCHEMA = {"Signature": pl.String, "Task": pl.String, "Intervention": pl.String, "Documents": pl.String,
                    "Share (95% CI)": pl.String, "Detail": pl.String, "Example": pl.String}


def signature_table(store: Any, submission_id: int | None) -> pl.DataFrame:
    """The failure signatures that fire for a submission (computed once from its kept samples and stored), with an
    example document each; one row saying why when they cannot be read."""
    if submission_id is None:
        return pl.DataFrame(schema=SIGNATURE_SCHEMA)
    try:
        rows = diagnosis.signatures(store, int(submission_id))
    except (OSError, ValueError, KeyError, RecursionError, ResultsError) as exc:
        return pl.DataFrame([{"Signature": "(not available)", "Detail": f"{type(exc).__name__}: {exc}"}],
                            schema=SIGNATURE_SCHEMA)
    out = []
    for row in rows:
        if not row["fires"]:
            continue
        example = (row.get("examples") or [{}])[0]
        out.append({"Signature": row["signature"], "Task": row["task"], "Intervention": row["intervention"],
                    "Documents": f"{row['count']} of {row['n']}",
                    "Share (95% CI)": f"{sig3(row['rate'])} {interval(row['low'], row['high'])}",
                    "Detail": row.get("detail") or "",
                    "Example": f"doc {example['doc_id']}: answered {example.get('answer', '')!r}, gold "
                               f"{example.get('target', '')!r}" if example else ""})
    return pl.DataFrame(out or [{"Signature": "(none fires)"}], schema=SIGNATURE_SCHEMA)


@dataclass
class ModelPage:
    about: pl.DataFrame
    breakdown: pl.DataFrame
    signatures: pl.DataFrame
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
        return ModelPage(empty, entry_scores(store, None), signature_table(store, None), "", run_settings({}), "")
    about = pl.DataFrame({
        "field": ["model", "revision", "precision", "parameters", "model type", "license", "submitter",
                  "submitted at", "status", "why not ranked", "submission", "results sha256"],
        "value": [entry.model_id, entry.revision, entry.precision, "" if entry.params is None else f"{entry.params:,}",
                  entry.model_type, entry.license, entry.submitter, f"{as_utc(entry.submitted_at):%Y-%m-%d %H:%M} UTC",
                  entry.status, entry.reason or "" if entry.status != "VALID" else "", f"#{entry.id}",
                  entry.results_sha256]})
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
    run = _run(stored_results(store, entry))
    return ModelPage(about, breakdown, signature_table(store, entry.id),
                     reproduce_command(run or {}, entry.model_id, entry.revision),
                     run_settings(run or {}), chat_template_text(run))


def chat_template_text(run: Run | None) -> str:
    """The run's chat template, or a Jinja comment saying why there is none (never a blank box)."""
    if run is None:
        return "{# the results file of this submission is not stored #}"
    if run.chat_template:
        return run.chat_template
    if run.chat_template_sha:
        return f"{{# a chat template was applied; lm-eval recorded only its sha256: {run.chat_template_sha} #}}"
    return "{# no chat template: the prompts were given to the model as plain text #}"


def stored_results(store: Any, entry: Any) -> dict[str, Any]:
    """The results JSON a submission stored (content-addressed by its sha256); empty when not kept."""
    return read_json(store.file_path(entry.results_sha256)) if entry.results_sha256 else {}


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``; empty when the file is not one."""
    try:
        data = jsonfile.read(path)
    except jsonfile.JsonFileError:
        return {}
    return data if isinstance(data, dict) else {}
