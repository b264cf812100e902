"""Contour metrics of closed 2D contours: Hausdorff distance, mean perpendicular distance, areas and relative area
error; optionally after fitting each prediction with K elliptic Fourier harmonics. Means over the pairs."""

import datasets
import evaluate
import numpy as np
from neurips26.methods.geometry import contours

_DESCRIPTION = __doc__
_KWARGS = """
Args:
    predictions: contours, each a list of [x, y] points (closed; the first point is not repeated).
    references: the true contours.
    harmonics: fit each prediction with this many harmonics first (default: no fit).
Returns:
    hausdorff, mean_distance, area_pred, area_truth, area_rel_error.
"""

POINTS = datasets.Sequence(datasets.Sequence(datasets.Value("float64")))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class GeometryContours(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(description=_DESCRIPTION, citation="", inputs_description=_KWARGS,
                                   features=datasets.Features({"predictions": POINTS, "references": POINTS}))

    def _compute(self, predictions, references, harmonics=None):
        rows = [contours.scores(np.asarray(p, float), np.asarray(r, float), harmonics)
                for p, r in zip(predictions, references, strict=True)]
        return {key: float(np.mean([row[key] for row in rows])) for key in rows[0]}
