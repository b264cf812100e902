"""Label-shift importance weights with exact finite-sample confidence regions.

Point estimates (BBSE, RLLS), simultaneous Clopper-Pearson boxes on the confusion matrix and target
marginal, weight intervals by interval Gaussian elimination (baseline) or by linear programming over
the joint region (ours, never wider), PAC and weighted conformal prediction sets, and ``evaluate``.
"""

from .data import Counts, count
from .errors import EmptyClassError, EmptyRegionError, LabelSetError, LabelShiftError, SingularConfusionError
from .estimators import bbse, check_conditioning, rlls
from .evaluate import LabelShiftResult, PredictionSets, evaluate
from .intervals import (
    Boxes,
    WeightIntervals,
    clopper_pearson,
    confidence_boxes,
    gaussian_elimination,
    lp_region,
)
from .prediction_sets import conformal_sets, conformal_thresholds, pac_sets, pac_threshold

__all__ = [
    "Boxes", "Counts", "EmptyClassError", "EmptyRegionError", "LabelSetError", "LabelShiftError",
    "LabelShiftResult", "PredictionSets", "SingularConfusionError", "WeightIntervals", "bbse", "check_conditioning",
    "clopper_pearson", "confidence_boxes", "conformal_sets", "conformal_thresholds", "count", "evaluate",
    "gaussian_elimination", "lp_region", "pac_sets", "pac_threshold", "rlls",
]
