"""``neurips26 diagnose RESULTS_DIR``: the failure signatures of an evaluated model (and, with ``--against``, how
two models differ signature by signature)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from neurips26.methods.diagnostics import report
from neurips26.options import DataOpt, DeviceOpt
from neurips26.output import Format, FormatOpt, emit
from neurips26.results import Run, read_run


def token_counter(run: Run) -> Callable[[str], int] | None:
    """Token counts with the run's own tokenizer when its files are on this machine, else None."""
    source = run.model_args.get("pretrained") or run.model_args.get("tokenizer")
    if not source:
        return None
    try:
        from transformers import AutoTokenizer  # lazy: heavy, and only for generation tasks

        tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
    except Exception:  # noqa: BLE001 - any failure means: estimate instead
        return None
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def diagnose_folder(folder: Path) -> tuple[Run, list[dict[str, Any]]]:
    """Read the newest run under ``folder`` (results and samples files) and diagnose it."""
    run = read_run(folder)
    return run, report.diagnose(run, token_counter(run))


COLUMNS = ("task", "signature", "intervention", "n", "count", "rate", "low", "high", "fires")


def _table(rows: list[dict]) -> list[dict]:
    return [{k: (f"{row[k]:.2f}" if isinstance(row[k], float) else row[k]) for k in COLUMNS} for row in rows]


def diagnose(
    results: Annotated[Path, typer.Argument(help="A folder of lm-eval results and samples files (--log_samples).")],
    against: Annotated[Path | None, typer.Option(help="Another run's folder: compare signature by signature.")] = None,
    counterfactual: Annotated[int, typer.Option(help="Re-run this many failed documents per task without their "
                                                     "evidence (0: no re-runs; loads the run's model).")] = 0,
    data: DataOpt = None,
    device: DeviceOpt = None,
    plot: Annotated[Path | None, typer.Option(help="Write the signature bars to this PNG.")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="Every (task, signature), not only those that fire.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Map a run's failures to signatures (output form, decision biases, evidence use), each with its count, a 95%
    interval and the intervention class it calls for; writes ``signatures_<date>.json`` beside the results."""
    run, rows = diagnose_folder(results)
    if counterfactual > 0:
        from neurips26.tasks import counterfactual as cf  # lazy: loads lm-eval and the model

        rows += cf.evidence_rows(cf.rerun(run, per_task=counterfactual, data=data, device=device), run.model_name)
    written = report.write(rows, results, run)
    if against is not None:
        _, other = diagnose_folder(against)
        compared = report.compare(rows, other)
        emit([r for r in compared if all_rows or r["a_fires"] or r["b_fires"] or r["significant"]], fmt,
             title=f"signatures: {results} (a) against {against} (b)", max_width=160)
    else:
        shown = [r for r in rows if all_rows or r["fires"]]
        emit(_table(shown) if fmt is Format.table else shown, fmt, max_width=160,
             title=f"failure signatures of {run.model_name} ({len(shown)} of {len(rows)} task-signature pairs)")
    if plot is not None:
        report.plot(rows, plot, title=f"failure signatures: {run.model_name}")
        typer.echo(f"plot: {plot}", err=True)
    typer.echo(f"written: {written}", err=True)
