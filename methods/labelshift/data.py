"""Checking and counting the inputs: source labels, source and target predictions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import EmptyClassError, LabelSetError, LabelShiftError


@dataclass(frozen=True)
class Counts:
    """Source joint counts ``joint[i, j] = #{yhat = i, y = j}`` and target prediction counts."""

    classes: np.ndarray
    joint: np.ndarray  # (K, K) int, rows: predicted label, columns: true label
    target: np.ndarray  # (K,) int, target predicted-label counts

    @property
    def K(self) -> int:
        return len(self.classes)

    @property
    def n(self) -> int:
        return int(self.joint.sum())

    @property
    def m(self) -> int:
        return int(self.target.sum())

    @property
    def confusion(self) -> np.ndarray:
        """C[i, j] = P_source(yhat = i, y = j)."""
        return self.joint / self.n

    @property
    def mu(self) -> np.ndarray:
        """mu[i] = P_target(yhat = i)."""
        return self.target / self.m


def _show(values: np.ndarray, limit: int = 8) -> str:
    items = [v.item() if hasattr(v, "item") else v for v in values[:limit]]
    return str(items)[:-1] + (", ...]" if len(values) > limit else "]")


def infer_classes(source_labels: np.ndarray, *arrays: np.ndarray | None) -> np.ndarray:
    """The class list: ``0..K-1`` when a probability matrix has K columns and labels fit, else sorted labels."""
    labels = np.unique(np.asarray(source_labels))
    widths = {a.shape[1] for a in arrays if a is not None and np.ndim(a) == 2}
    if len(widths) == 1 and np.issubdtype(labels.dtype, np.integer):
        K = widths.pop()
        if labels.min() >= 0 and labels.max() < K:
            return np.arange(K)
    return labels


def encode(values: np.ndarray, classes: np.ndarray, field: str) -> np.ndarray:
    """Map labels to class indices ``0..K-1``; unknown labels raise ``LabelSetError``."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise LabelShiftError(f"{field} must be a 1-D array of labels, got shape {values.shape}")
    if len(values) == 0:
        raise LabelShiftError(f"{field} is empty")
    codes = np.searchsorted(classes, values)
    codes = np.clip(codes, 0, len(classes) - 1)
    bad = classes[codes] != values
    if bad.any():
        raise LabelSetError(f"{field} contain labels {_show(np.unique(values[bad]))} that are not among "
                            f"the {len(classes)} classes {_show(classes)} of the source labels")
    return codes


def hard_predictions(values: np.ndarray, classes: np.ndarray, field: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Predicted class indices from labels (1-D) or probabilities (2-D, one column per class)."""
    values = np.asarray(values)
    if values.ndim == 2:
        if values.shape[1] != len(classes):
            raise LabelSetError(f"{field} has {values.shape[1]} probability columns but there are "
                                f"{len(classes)} classes {_show(classes)}")
        if len(values) == 0:
            raise LabelShiftError(f"{field} is empty")
        if not np.isfinite(values).all() or (values < 0).any():
            raise LabelShiftError(f"{field} must hold finite non-negative probabilities")
        return values.argmax(axis=1), values.astype(float)
    return encode(values, classes, field), None


def count(source_labels: np.ndarray, source_preds: np.ndarray, target_preds: np.ndarray,
          classes: np.ndarray | None = None) -> Counts:
    """Check the three arrays against one class list and count them.

    ``source_preds`` and ``target_preds`` are labels (1-D) or probabilities (2-D, argmax taken).
    """
    source_labels = np.asarray(source_labels)
    classes = infer_classes(source_labels, source_preds, target_preds) if classes is None else np.asarray(classes)
    if len(np.unique(classes)) != len(classes) or (np.sort(classes) != classes).any():
        raise LabelShiftError(f"classes must be sorted and distinct, got {_show(classes)}")
    if len(classes) < 2:
        raise LabelShiftError(f"need at least 2 classes, the source labels have {len(classes)}")
    y = encode(source_labels, classes, "source labels")
    yhat, _ = hard_predictions(source_preds, classes, "source predictions")
    if len(yhat) != len(y):
        raise LabelShiftError(f"source labels ({len(y)}) and source predictions ({len(yhat)}) differ in length")
    that, _ = hard_predictions(target_preds, classes, "target predictions")
    K = len(classes)
    joint = np.zeros((K, K), dtype=np.int64)
    np.add.at(joint, (yhat, y), 1)
    empty = np.flatnonzero(joint.sum(axis=0) == 0)
    if len(empty):
        raise EmptyClassError(f"class {classes[empty[0]].item()!r} has no source examples "
                              f"(empty classes: {_show(classes[empty])}); its weight is not identified")
    return Counts(classes=classes, joint=joint, target=np.bincount(that, minlength=K))
