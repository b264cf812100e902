"""Surface reconstruction metrics of point sets (sampled from meshes): accuracy, completeness, Chamfer-L1,
precision/recall/F-score at tau, after Umeyama Sim(3) alignment + ICP; means over the pairs. Distances are in units
of each reference's bounding-box diagonal."""

import datasets
import evaluate
import numpy as np
from neurips26.methods.geometry import surfaces

_DESCRIPTION = __doc__
_KWARGS = """
Args:
    predictions: point sets, each a list of [x, y, z].
    references: the true point sets.
    tau: F-score threshold as a fraction of the reference's diagonal (default 0.01).
    aligned: align each prediction to its reference first (default True).
Returns:
    accuracy, completeness, chamfer_l1, precision, recall, fscore.
"""

POINTS = datasets.Sequence(datasets.Sequence(datasets.Value("float64")))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class GeometrySurfaces(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(description=_DESCRIPTION, citation="", inputs_description=_KWARGS,
                                   features=datasets.Features({"predictions": POINTS, "references": POINTS}))

    def _compute(self, predictions, references, tau=surfaces.TAU, aligned=True):
        rows = [surfaces.scores(surfaces.Points(np.asarray(p, float)), surfaces.Points(np.asarray(r, float)), tau,
                                aligned) for p, r in zip(predictions, references, strict=True)]
        return {key: float(np.mean([row[key] for row in rows])) for key in rows[0]}
