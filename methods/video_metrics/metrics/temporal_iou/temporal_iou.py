"""Temporal grounding: mean IoU between predicted and gold time spans, and recall at IoU 0.3, 0.5 and 0.7."""

import datasets
import evaluate
from neurips26.methods.video_metrics import scores

_DESCRIPTION = __doc__
_KWARGS = """
Args:
    predictions: model outputs; the first two times in the text are the span ("3.2-5.8", "from 3 s to 6 s",
        "00:03 - 00:06"); a text without two times scores IoU 0.
    references: gold spans, as text like the predictions.
Returns:
    miou, R@0.3, R@0.5, R@0.7, unparsed (fraction of predictions without a span).
Example:
    >>> metric.compute(predictions=["2-6"], references=["3-7"])["miou"]
    0.6
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class TemporalIoU(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation="", inputs_description=_KWARGS,
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Value("string")}),
        )

    def _compute(self, predictions, references):
        return scores.temporal_iou(predictions, references)
