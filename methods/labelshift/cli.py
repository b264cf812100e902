"""``neurips26 labelshift``: weights, confidence intervals and prediction sets from saved arrays."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from neurips26.errors import UserError

from .errors import LabelShiftError

if TYPE_CHECKING:
    import numpy as np


class Method(StrEnum):
    lp = "lp"
    ge = "ge"
    both = "both"


def load_array(path: Path, field: str) -> np.ndarray:
    """Array from .npy, or from .npz (the key named like the field, e.g. source_labels, or its only array)."""
    import numpy as np

    if not path.is_file():
        raise UserError(f"{field}: file not found: {path}")
    key = field.replace(" ", "_")
    try:
        if path.suffix == ".npy":
            return np.load(path, allow_pickle=False)
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as npz:
                if key in npz.files:
                    return npz[key]
                if len(npz.files) == 1:
                    return npz[npz.files[0]]
                raise UserError(f"{field}: {path} has arrays {npz.files} but no '{key}'")
    except (OSError, EOFError) as exc:
        raise UserError(f"{field}: cannot read {path}: {exc}") from None
    raise UserError(f"{field}: {path} is not a .npy or .npz file")


def labelshift(
    source_labels: Annotated[Path, typer.Argument(help="Source true labels, 1-D (.npy or .npz).")],
    source_preds: Annotated[Path, typer.Argument(
        help="Source predictions: labels (1-D) or class probabilities (2-D, n x K).")],
    target_preds: Annotated[Path, typer.Argument(
        help="Target predictions: labels (1-D) or class probabilities (2-D, m x K).")],
    test_probs: Annotated[Path | None, typer.Option(
        help="Target test probabilities (2-D): also build prediction sets for these.")] = None,
    calib_labels: Annotated[Path | None, typer.Option(
        help="Source calibration labels for the sets (default: half of the source data).")] = None,
    calib_probs: Annotated[Path | None, typer.Option(help="Source calibration probabilities (2-D).")] = None,
    delta: Annotated[float, typer.Option(min=1e-9, max=0.999, help="Intervals hold together w.p. >= 1 - delta.")] = 0.1,
    epsilon: Annotated[float, typer.Option(min=1e-9, max=0.999, help="Target error level of the sets.")] = 0.05,
    method: Annotated[Method, typer.Option(help="Interval method: lp (ours), ge (Gaussian elimination) or both.")]
    = Method.both,
    out: Annotated[Path | None, typer.Option(help="Write the full result (and the sets) as JSON here.")] = None,
    seed: Annotated[int, typer.Option(help="Seed for the calibration split and rejection sampling.")] = 0,
) -> None:
    """Label-shift weights w_k = p_target(y=k) / p_source(y=k) with exact finite-sample intervals.

    Prints BBSE and RLLS estimates and simultaneous (1 - delta) intervals (LP region and interval
    Gaussian elimination); with --test-probs also PAC and weighted conformal prediction sets.
    Arrays are .npy files, or .npz files holding a key per field (source_labels, source_predictions,
    target_predictions, test_probabilities, calibration_labels, calibration_probabilities).
    """
    import json

    from rich.console import Console
    from rich.table import Table

    from .evaluate import evaluate  # lazy: scipy, so the command line starts without it

    files = {"source labels": source_labels, "source predictions": source_preds, "target predictions": target_preds,
             "test probabilities": test_probs, "calibration labels": calib_labels,
             "calibration probabilities": calib_probs}
    arrays = {field: None if path is None else load_array(path, field) for field, path in files.items()}
    if (calib_labels is None) != (calib_probs is None):
        raise UserError("give both --calib-labels and --calib-probs, or neither")
    methods = ("lp", "ge") if method == Method.both else (method.value,)
    try:
        result = evaluate(arrays["source labels"], arrays["source predictions"], arrays["target predictions"],
                          test_probs=arrays["test probabilities"], calib_labels=arrays["calibration labels"],
                          calib_probs=arrays["calibration probabilities"], delta=delta, epsilon=epsilon,
                          methods=methods, seed=seed)
    except LabelShiftError as exc:
        named = [f"{field} = {path}" for field, path in files.items() if path is not None and field in str(exc)]
        raise type(exc)(f"{exc}" + (f" ({'; '.join(named)})" if named else "")) from None

    console = Console()
    table = Table(title=f"label-shift weights (n_source={result.n_source}, n_target={result.n_target}, "
                        f"cond(C)={result.condition_number:.3g}, delta={delta:g})")
    for column in ("class", "BBSE", "RLLS", *(f"{name.upper()} interval" for name in result.intervals)):
        table.add_column(column, justify="right")
    for k, cls in enumerate(result.classes):
        cells = [f"[{iv.lo[k]:.3f}, {iv.hi[k]:.3f}]" for iv in result.intervals.values()]
        table.add_row(str(cls.item() if hasattr(cls, "item") else cls), f"{result.bbse[k]:.3f}",
                      f"{result.rlls[k]:.3f}", *cells)
    console.print(table)
    for name, iv in result.intervals.items():
        console.print(f"{name}: mean width {iv.width.mean():.3f}, {iv.seconds * 1000:.1f} ms")
    for name, ps in result.sets.items():
        console.print(f"{name}: mean set size {ps.mean_size:.3f} on {len(ps.sets)} test points ({ps.guarantee})")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result.to_dict(), indent=1))
        console.print(f"wrote {out}")
