"""One call from saved predictions to weights, confidence intervals and target prediction sets."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .data import count, encode, hard_predictions
from .errors import LabelShiftError
from .estimators import bbse, check_conditioning, rlls
from .intervals import Boxes, WeightIntervals, confidence_boxes, gaussian_elimination, lp_region
from .prediction_sets import conformal_sets, conformal_thresholds, pac_sets, pac_threshold

METHODS = {"lp": lp_region, "ge": gaussian_elimination}


@dataclass
class PredictionSets:
    """Target prediction sets: PAC ({y : p >= tau}) or weighted conformal ({y : 1 - p <= q_y})."""

    name: str
    threshold: float | np.ndarray
    guarantee: str
    sets: np.ndarray | None = None  # (n_test, K) bool

    @property
    def mean_size(self) -> float | None:
        return None if self.sets is None else float(self.sets.sum(axis=1).mean())


@dataclass
class LabelShiftResult:
    """Everything ``evaluate`` estimates; ``to_dict`` gives a JSON-ready view."""

    classes: np.ndarray
    n_source: int
    n_target: int
    confusion: np.ndarray
    mu: np.ndarray
    condition_number: float
    bbse: np.ndarray
    rlls: np.ndarray
    boxes: Boxes
    intervals: dict[str, WeightIntervals]
    delta: float
    sets: dict[str, PredictionSets] = field(default_factory=dict)
    n_calibration: int = 0

    def to_dict(self, with_sets: bool = True) -> dict:
        classes = [c.item() if hasattr(c, "item") else c for c in self.classes]

        def num(a: np.ndarray) -> list:
            return [None if not np.isfinite(x) else float(x) for x in np.ravel(a)]

        out = {
            "classes": classes, "n_source": self.n_source, "n_target": self.n_target,
            "n_calibration": self.n_calibration, "delta": self.delta,
            "condition_number": self.condition_number,
            "bbse": num(self.bbse), "rlls": num(self.rlls),
            "intervals": {name: {"lo": num(iv.lo), "hi": num(iv.hi), "seconds": iv.seconds,
                                 "coverage": f"all {len(classes)} intervals hold together w.p. >= {1 - self.delta:g}"}
                          for name, iv in self.intervals.items()},
            "sets": {},
        }
        for name, ps in self.sets.items():
            entry = {"threshold": num(ps.threshold) if np.ndim(ps.threshold) else ps.threshold,
                     "guarantee": ps.guarantee, "mean_size": ps.mean_size}
            if with_sets and ps.sets is not None:
                entry["sets"] = [[classes[k] for k in np.flatnonzero(row)] for row in ps.sets]
            out["sets"][name] = entry
        return out


def evaluate(source_labels: np.ndarray, source_preds: np.ndarray, target_preds: np.ndarray, *,
             test_probs: np.ndarray | None = None, calib_labels: np.ndarray | None = None,
             calib_probs: np.ndarray | None = None, classes: np.ndarray | None = None,
             delta: float = 0.1, epsilon: float = 0.05, delta_sets: float | None = None,
             methods: tuple[str, ...] = ("lp", "ge"), max_cond: float = 1e6, seed: int = 0) -> LabelShiftResult:
    """Weights, intervals and (with ``test_probs``) prediction sets under label shift.

    ``source_preds``/``target_preds``: predicted labels (1-D) or probabilities (2-D, argmax used
    for the confusion counts). Prediction sets need labelled calibration data with probabilities:
    ``calib_labels``/``calib_probs``, or else the source split in two random halves (the first
    estimates the weights, the second calibrates), which keeps the two steps independent.
    PAC sets hold error <= epsilon w.p. >= 1 - delta - delta_sets (``delta_sets`` defaults to delta);
    the weighted conformal set (BBSE weights) targets marginal coverage 1 - epsilon.
    """
    unknown = set(methods) - set(METHODS)
    if unknown or not methods:
        raise LabelShiftError(f"methods must be among {sorted(METHODS)}, got {list(methods)}")
    delta_sets = delta if delta_sets is None else delta_sets
    source_labels, source_preds = np.asarray(source_labels), np.asarray(source_preds)
    if test_probs is not None and calib_labels is None:
        if source_preds.ndim != 2:
            raise LabelShiftError("prediction sets need source probabilities (a 2-D array) or calibration "
                                  "labels and probabilities")
        if len(source_labels) != len(source_preds):
            raise LabelShiftError(f"source labels ({len(source_labels)}) and source predictions "
                                  f"({len(source_preds)}) differ in length")
        half = np.random.default_rng(seed).permutation(len(source_labels))
        cal, est = half[: len(half) // 2], half[len(half) // 2:]
        calib_labels, calib_probs = source_labels[cal], source_preds[cal]
        source_labels, source_preds = source_labels[est], source_preds[est]

    counts = count(source_labels, source_preds, target_preds, classes)
    C, mu = counts.confusion, counts.mu
    cond = check_conditioning(C, max_cond)
    boxes = confidence_boxes(counts, delta)
    result = LabelShiftResult(classes=counts.classes, n_source=counts.n, n_target=counts.m, confusion=C, mu=mu,
                              condition_number=cond, bbse=bbse(C, mu, max_cond), rlls=rlls(C, mu, counts.n, delta),
                              boxes=boxes, intervals={name: METHODS[name](boxes) for name in methods}, delta=delta)
    if test_probs is None:
        return result

    K = counts.K
    test_probs = np.asarray(test_probs, float)
    if test_probs.ndim != 2 or test_probs.shape[1] != K:
        raise LabelShiftError(f"test probabilities must have shape (n, {K}), got {test_probs.shape}")
    if calib_probs is None:
        raise LabelShiftError("calibration labels given without calibration probabilities")
    y_cal = encode(calib_labels, counts.classes, "calibration labels")
    _, p_cal = hard_predictions(calib_probs, counts.classes, "calibration probabilities")
    if p_cal is None or len(p_cal) != len(y_cal):
        raise LabelShiftError("calibration probabilities must be a 2-D array with one row per calibration label")
    scores = p_cal[np.arange(len(y_cal)), y_cal]
    result.n_calibration = len(y_cal)
    for name, iv in result.intervals.items():
        tau = pac_threshold(scores, y_cal, iv.lo, iv.hi, epsilon, delta_sets, np.random.default_rng(seed))
        result.sets[f"pac-{name}"] = PredictionSets(
            f"pac-{name}", tau, f"target error <= {epsilon:g} w.p. >= {1 - delta - delta_sets:g}",
            pac_sets(test_probs, tau))
    q = conformal_thresholds(scores, y_cal, result.bbse, epsilon)
    result.sets["conformal"] = PredictionSets("conformal", q, f"marginal coverage ~ {1 - epsilon:g} (BBSE weights)",
                                              conformal_sets(test_probs, q))
    return result
