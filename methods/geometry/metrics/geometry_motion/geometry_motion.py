"""Motion diversity over a set of subjects: per-subject RMSE and skill over the population mean, collapse ratio,
specificity, pairwise diversity, identification (Time2Track's collapse to the average, measured)."""

import datasets
import evaluate
import numpy as np
from neurips26.methods.geometry import motion

_DESCRIPTION = __doc__
_KWARGS = """
Args:
    predictions: one flattened motion per subject (frames x landmarks x coordinates, in that order).
    references: the subjects' true motions, flattened the same way.
    population: the population-mean motion, flattened (default: the references' mean).
    points: coordinates per landmark (default 3), so that errors are Euclidean per landmark.
Returns:
    rmse, rmse_mean, skill, collapse_ratio, specificity, pairwise_ratio, pairwise_r, identification.
"""

MOTION = datasets.Sequence(datasets.Value("float64"))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class GeometryMotion(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(description=_DESCRIPTION, citation="", inputs_description=_KWARGS,
                                   features=datasets.Features({"predictions": MOTION, "references": MOTION}))

    def _compute(self, predictions, references, population=None, points=3):
        return motion.scores(np.asarray(predictions, float), np.asarray(references, float), population, points)
