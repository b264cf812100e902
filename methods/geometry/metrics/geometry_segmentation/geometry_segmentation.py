"""Segmentation boundary metrics of binary masks (2D or 3D) with voxel spacing: Dice, IoU, HD95, ASSD, NSD at tau,
Boundary IoU, boundary F-score; each the mean over the (prediction, reference) pairs."""

import datasets
import evaluate
import numpy as np
from neurips26.methods.geometry import segmentation

_DESCRIPTION = __doc__
_KWARGS = """
Args:
    predictions: masks (nested lists of 0/1 or booleans), 2D or 3D.
    references: the truth masks, same shapes.
    spacing: voxel spacing per axis (default 1); tau: NSD tolerance in the spacing's units (default 1);
    band: Boundary IoU band as a fraction of the image diagonal (default 0.02).
Returns:
    dice, iou, hd95, assd, nsd, boundary_iou, boundary_f, boundary_precision, boundary_recall.
Example:
    >>> metric.compute(predictions=[[[0, 1], [1, 1]]], references=[[[0, 1], [1, 1]]])["dice"]
    1.0
"""


def _features(depth: int) -> datasets.Features:
    value = datasets.Value("int8")
    for _ in range(depth):
        value = datasets.Sequence(value)
    return datasets.Features({"predictions": value, "references": value})


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class GeometrySegmentation(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(description=_DESCRIPTION, citation="", inputs_description=_KWARGS,
                                   features=[_features(2), _features(3)])

    def _compute(self, predictions, references, spacing=None, tau=segmentation.TAU, band=segmentation.BAND):
        rows = [segmentation.scores(np.asarray(p) != 0, np.asarray(r) != 0, spacing, tau=tau, band=band)
                for p, r in zip(predictions, references, strict=True)]
        return {key: float(np.mean([row[key] for row in rows])) for key in rows[0]}
