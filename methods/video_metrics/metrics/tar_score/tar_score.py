"""TAR: each task type's metric (accuracy, ROUGE-L or temporal IoU), group means and the aggregate TAR score."""

import datasets
import evaluate
from neurips26.methods.video_metrics import scores

_DESCRIPTION = __doc__
_KWARGS = """
Args:
    predictions: model outputs (free text).
    references: the annotations' answers: option letters, reference texts, or "start-end" spans.
    task_types: the TAR task type of each item (bcq, mcq, open_qa, temporal_localization, ...).
    num_options: number of options per item for the choice tasks (default 4).
Returns:
    "<task_type>/<metric>" for each task type present (accuracy, rougeL or miou), the localization recalls
    "temporal_localization/R@0.3|0.5|0.7", "group/<group>" means, and "tar_score": the unweighted mean of the
    task types' primary metrics.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class TarScore(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation="", inputs_description=_KWARGS,
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Value("string")}),
        )

    def _compute(self, predictions, references, task_types, num_options=None):
        return scores.tar_score(predictions, references, task_types, num_options)
