"""ROUGE-L F1 (rouge_score, no stemming) between free-text answers and references, averaged."""

import datasets
import evaluate
from neurips26.methods.video_metrics import scores

_DESCRIPTION = __doc__
_KWARGS = """
Args:
    predictions: model outputs.
    references: reference answers or descriptions.
Returns:
    rougeL: mean ROUGE-L F1 (an empty prediction scores 0).
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class VideoRouge(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation="", inputs_description=_KWARGS,
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Value("string")}),
        )

    def _compute(self, predictions, references):
        return scores.rouge_l(predictions, references)
