"""Multiple-choice accuracy on free-text answers: the option letter is extracted with the Video-MME rules."""

import datasets
import evaluate
from neurips26.methods.video_metrics import scores

_DESCRIPTION = __doc__
_KWARGS = """
Args:
    predictions: model outputs (free text).
    references: gold option letters ("A", "B", ...).
    num_options: number of options, one for all or one per item (default 4); letters beyond it are ignored.
Returns:
    accuracy: fraction correct; unanswered: fraction with no option letter found.
Example:
    >>> metric.compute(predictions=["The best answer is B.", "C"], references=["B", "D"])
    {'accuracy': 0.5, 'unanswered': 0.0}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class VideoAccuracy(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation="", inputs_description=_KWARGS,
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Value("string")}),
        )

    def _compute(self, predictions, references, num_options=4):
        return scores.accuracy(predictions, references, num_options)
