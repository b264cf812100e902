"""``neurips26 submit`` and ``neurips26 leaderboard``: plain functions the main CLI registers as commands."""

from __future__ import annotations

import csv
import getpass
import glob
import io
import json
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from neurips26 import settings
from neurips26.errors import UnknownNameError, UserError
from neurips26.options import DataOpt, StoreOpt
from neurips26.results import SAMPLES_NAME, read_run

console = Console()
RESULTS_DATE = re.compile(r"results_(?P<date>.+)\.json")


def samples_files(values: list[Path], results: Path) -> list[Path]:
    """``--samples`` as files: a samples file; a folder, for the samples files of the run ``results`` is (those
    with its date, else the newest per task), as a multi-task lm-eval run writes one per task; or a glob pattern."""
    found: list[Path] = []
    for value in values:
        text = str(value)
        if value.is_dir():
            matched = _run_samples(value, results)
            if not matched:
                raise UserError(f"--samples {value}: no samples_<task>_<date>.jsonl files in that folder")
        elif any(c in text for c in "*?["):
            matched = sorted(Path(p) for p in glob.glob(text) if Path(p).is_file())
            if not matched:
                raise UserError(f"--samples {value}: no file matches the pattern")
        elif value.is_file():
            matched = [value]
        else:
            raise UserError(f"--samples {value}: no such file or folder")
        found += [m for m in matched if m not in found]
    return found


def _run_samples(folder: Path, results: Path) -> list[Path]:
    """The samples files in ``folder`` written by the run of ``results``: same date, else the newest per task."""
    named = [(m, p) for p in sorted(folder.glob("samples_*.jsonl")) if (m := SAMPLES_NAME.fullmatch(p.name))]
    date = RESULTS_DATE.fullmatch(results.name)
    same = [p for m, p in named if date and m["date"] == date["date"]]
    if same:
        return same
    newest: dict[str, Path] = {}
    for match, path in named:  # sorted by name: a later date replaces an earlier one
        newest[match["task"]] = path
    return sorted(newest.values())


def submit(
    results: Annotated[Path, typer.Argument(help="lm-eval results file (results_<date>.json).")],
    samples: Annotated[list[Path] | None, typer.Option(
        "--samples", help="lm-eval samples files (samples_<task>_<date>.jsonl), one per task (required: the board "
                          "recomputes every score from them): a file (repeat the option), a glob pattern, or the "
                          "folder lm-eval wrote them to (the samples of this results file's run).")] = None,
    model: Annotated[str, typer.Option("--model", help="Model id, e.g. ORG/NAME as on the Hub.")] = ...,
    revision: Annotated[str, typer.Option("--revision", help="Commit sha of the model weights (7-64 hex).")] = ...,
    precision: Annotated[str | None, typer.Option(
        help="float32, float16, bfloat16, int8, int4 or other (default: the dtype lm-eval recorded).")] = None,
    params: Annotated[int | None, typer.Option(
        help="Parameter count (default: the count lm-eval recorded).")] = None,
    license: Annotated[str, typer.Option("--license", help="Model license, e.g. apache-2.0.")] = "unknown",
    model_type: Annotated[str, typer.Option(
        help="pretrained, fine-tuned, instruction-tuned, rl-tuned, merged or other.")] = "other",
    submitter: Annotated[str | None, typer.Option(help="Who submits (default: the login name).")] = None,
    store: StoreOpt = None,
    data: DataOpt = None,
) -> None:
    """Submit lm-eval results and samples to the leaderboard: checked against the task protocols, scores recomputed
    from the samples, stored as VALID, UNRANKED (with why) or REJECTED (with why)."""
    from neurips26.leaderboard.modelinfo import TORCH_DTYPES  # lazy: DuckDB and pydantic load only when run
    from neurips26.leaderboard.store import REJECTED, Store  # lazy: as above

    if not results.is_file():
        raise FileNotFoundError(f"results file {results} not found")
    samples = samples_files(samples or [], results)
    if data is not None:  # the built folders the scores are checked and recomputed against (else the data rule's)
        settings.set_data_root(data)
    recorded = _recorded_config(results)
    meta: dict[str, Any] = {
        "model_id": model, "revision": revision,
        "precision": precision or TORCH_DTYPES.get(str(recorded.get("model_dtype") or "")),
        "params": params if params is not None else recorded.get("model_num_parameters"),
        "license": license, "model_type": model_type, "submitter": submitter or getpass.getuser(),
    }
    entry = Store(store).submit(results, {k: v for k, v in meta.items() if v is not None}, samples or [])
    label = {"VALID": "green", "PENDING": "yellow", "UNRANKED": "yellow", "REJECTED": "red"}[entry.status]
    what = f"{escape(entry.model_id)} @ {escape(entry.revision)} ({escape(entry.precision)})"
    if entry.duplicate_of is not None:
        console.print(f"duplicate of submission #{entry.id} [{label}]{entry.status}[/{label}] {what}, "
                      f"submitted {entry.submitted_at:%Y-%m-%d %H:%M} UTC: not stored again", highlight=False)
        return
    console.print(f"[{label}]{entry.status}[/{label}] submission #{entry.id}: {what}", highlight=False)
    for problem in (entry.reason or "").split("; ") if entry.reason else []:
        console.print(f"  - {escape(problem)}", highlight=False)
    if entry.status == REJECTED:
        if not samples and list(results.parent.glob("samples_*.jsonl")):
            console.print(f"hint: samples files lie next to the results file; submit them with --samples "
                          f"{escape(str(results.parent))}", highlight=False)
        raise typer.Exit(2)
    if entry.status == "UNRANKED":
        console.print("stored, shown on its model page, but not ranked: the run differs from the task protocols",
                      highlight=False)
    from neurips26.leaderboard.diagnosis import signatures  # lazy: the diagnostics load only when run

    firing = sorted({r["signature"] for r in signatures(Store(store), entry.id) if r["fires"]})
    console.print(f"failure signatures: {escape(', '.join(firing) or 'none fires')}; "
                  f"see: neurips26 leaderboard --signatures {entry.id}", highlight=False)


def leaderboard(
    task: Annotated[str | None, typer.Option(help="One task's board.")] = None,
    track: Annotated[str | None, typer.Option(
        help="One track's overall board: text, video, or a method family (default: every track's).")] = None,
    store: StoreOpt = None,
    limit: Annotated[int, typer.Option(min=1, help="Rows to show per board.")] = 20,
    group: Annotated[str | None, typer.Option(help="The overall of one group's tasks, e.g. locus.")] = None,
    demo: Annotated[bool, typer.Option(
        "--demo", help="The same boards over the UNRANKED runs (demo data, --limit...): the Space's Demo runs "
                       "view, never a ranking.")] = False,
    format: Annotated[str, typer.Option("--format", help="table, json or csv (json and csv: the ranked rows; json "
                                                         "also each board's definition and the tasks left out).")
                      ] = "table",
    signatures: Annotated[int | None, typer.Option(help="Instead: the failure signatures of submission ID.")] = None,
    against: Annotated[int | None, typer.Option(help="With --signatures: compare with submission ID.")] = None,
) -> None:
    """Print the leaderboard: each track's overall board (or one track, group or task), scores with 95% intervals
    and the ranks each model could hold (or, with --signatures, how one submission fails)."""
    from neurips26.leaderboard.ranking import OVERALL_DEFINITION, SCHEMA  # lazy: numpy, DuckDB
    from neurips26.leaderboard.store import UNRANKED, VALID, Store  # lazy: as above

    if format not in ("table", "json", "csv"):
        raise UserError(f"--format {format!r}: choose table, json or csv")
    if against is not None and signatures is None:
        raise UserError("--against goes with --signatures (it compares two submissions' failure signatures)")
    if sum(x is not None for x in (task, track, group)) > 1:
        raise UserError("choose one of --task, --track and --group")
    board = Store(store)
    if signatures is not None:
        _print_signatures(board, signatures, against, format)
        return
    scores = board.scores(status=UNRANKED if demo else VALID)
    boards = [_board(board, scores, limit, title, **where) for title, where in _chosen(board, task, track, group, demo)]
    if demo:
        boards = [{**b, "board": f"DEMO RUNS, NOT RANKED: {b['board']}"} for b in boards]
    if format == "json":
        console.print_json(json.dumps({"demo": demo, "boards": [{k: v for k, v in b.items() if k != "table"}
                                                                 for b in boards]}, default=str))
    elif format == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=["board", *SCHEMA.names])
        writer.writeheader()
        writer.writerows({"board": b["board"], **row} for b in boards for row in b["rows"])
        print(out.getvalue(), end="")
    else:
        if task is None:
            console.print(escape(OVERALL_DEFINITION) + "\n", highlight=False)
        for b in boards:
            _print_board(b, board.root, task is not None, demo)


def _chosen(board: Any, task: str | None, track: str | None, group: str | None,
            demo: bool) -> list[tuple[str | None, dict]]:
    """(title, ``leaderboard`` arguments) of the boards asked for: a task's, a group's, or the tracks' overalls
    (named as the Space names them; with ``demo``, the tracks the Space's Demo runs view shows)."""
    from neurips26.leaderboard.tracks import demo_tracks, tracks  # lazy: as the store

    if task is not None:
        return [(None, {"task": task})]
    if group is not None:
        return [(f"overall {group}", {"group": group})]
    every = tracks(board.tasks, board.groups)
    chosen = demo_tracks(every) if demo else every
    if track is not None:
        chosen = [t for t in chosen if track in (t.name, t.group)]
        if not chosen:
            raise UnknownNameError(f"unknown track {track!r}; tracks: {', '.join(t.name for t in every)}"
                                   + (" (--demo: the lm-eval tracks only)" if demo else ""))
    return [(t.board, {"group": t.group}) for t in chosen]


def _board(board: Any, scores: Any, limit: int, title: str | None, task: str | None = None,
           group: str | None = None) -> dict[str, Any]:
    """One board: its ranked table, the rows shown, its definition and the tasks left out of its mean."""
    from neurips26.leaderboard.ranking import OVERALL_DEFINITION, left_out, scope  # lazy: numpy, DuckDB
    from neurips26.leaderboard.ranking import leaderboard as ranked  # lazy: as above

    table = ranked(board, task=task, group=group, scores=scores)
    excluded: dict[str, str] = {}
    if task:
        spec = board.tasks[task]
        protocol = spec.protocol
        title = f"{task} ({spec.primary}, v{spec.version:g})"
        definition = (f"{task}: {spec.primary}, {'higher' if spec.metrics[spec.primary].higher_is_better else 'lower'}"
                      f" is better" + (f"; protocol: split {protocol.split}, {protocol.num_fewshot}-shot, chat "
                                       f"template {'on' if protocol.chat_template else 'off'}, baseline "
                                       f"{protocol.baseline}" if protocol else ""))
    else:
        names = scope(board.tasks, task, group, board.groups)
        excluded = left_out(board.tasks, names, group)
        definition = f"tasks: {', '.join(n for n in names if n not in excluded)}"
    return {"board": title, "definition": definition, "overall": None if task else OVERALL_DEFINITION,
            "left_out": excluded, "table": table, "rows": table.slice(0, limit).to_pylist()}


def _print_board(b: dict[str, Any], root: Path, one_task: bool, demo: bool) -> None:
    console.print(f"[bold]{escape(b['board'])}[/bold]", highlight=False)
    console.print(escape(b["definition"]), highlight=False)
    by_reason: dict[str, list[str]] = {}
    for name, why in sorted(b["left_out"].items()):
        by_reason.setdefault(why, []).append(name)
    for why, names in by_reason.items():
        console.print(f"not in the mean: {escape(', '.join(names))}: {escape(why)}", highlight=False)
    table = b["table"]
    if table.num_rows == 0:
        what = "unranked runs" if demo else "ranked submissions"
        console.print(f"{escape(b['board'])}: no {what} yet in {escape(str(root))}\n", highlight=False)
        return
    out = Table(title=escape(b["board"]), caption=f"{table.num_rows} submission(s); 95% intervals; range: the ranks "
                "the intervals allow", caption_justify="left")
    headers = ["rank", "range", "model", "revision", "precision", "params", "score", "95% CI", "n", "id"]
    for header in headers + ([] if one_task else ["tasks"]):
        out.add_column(header, justify="left" if header in ("model", "revision", "precision") else "right")
    for row in b["rows"]:
        out.add_row(str(row["rank"]), f"{row['rank_best']}–{row['rank_worst']}", escape(row["model_id"]),
                    escape(row["revision"][:10]), escape(row["precision"]), human(row["params"]),
                    f"{row['score']:.3f}", f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]", str(row["n"]),
                    f"#{row['submission_id']}", *([] if one_task else [str(row["n_tasks"])]))
    console.print(out)
    console.print()


def _print_signatures(board: Any, entry_id: int, against: int | None, fmt: str) -> None:
    from neurips26.leaderboard import diagnosis  # lazy: the diagnostics load only when run

    from neurips26.output import emit  # lazy: as above

    if against is not None:
        rows = [r for r in diagnosis.compare(board, entry_id, against) if r["a_fires"] or r["b_fires"]
                or r["significant"]]
        emit(rows, fmt, title=f"failure signatures: #{entry_id} (a) against #{against} (b)", max_width=160)
        return
    rows = diagnosis.signatures(board, entry_id)
    shown = [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items() if k not in ("examples", "model")}
             for r in rows if r["fires"] or fmt != "table"]
    emit(shown, fmt, title=f"failure signatures of submission #{entry_id} ({len(shown)} firing of {len(rows)})",
         max_width=160)


def human(count: int | None) -> str:
    """135M, 7.2B: parameter counts as people write them."""
    if count is None:
        return ""
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if count >= size:
            return f"{count / size:.3g}{unit}"
    return str(count)


def _recorded_config(results: Path) -> dict[str, Any]:
    """lm-eval's ``config`` block of a results file (for defaults); empty when unreadable (the store says why)."""
    from neurips26.leaderboard.modelinfo import MAX_RESULTS_BYTES  # lazy: pydantic loads only when run


    try:
        if results.stat().st_size > MAX_RESULTS_BYTES:
            return {}
        return read_run(results, samples=[]).config
    except (OSError, ValueError):
        return {}
