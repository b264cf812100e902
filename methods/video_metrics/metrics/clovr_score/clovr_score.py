"""CLoVR-Bench: accuracy (Video-MME answer extraction) overall and per level, task and subtask."""

import datasets
import evaluate
from neurips26.methods.video_metrics import scores

_DESCRIPTION = __doc__
_KWARGS = """
Args:
    predictions: model outputs (free text).
    references: gold option letters.
    levels, tasks, subtasks: the taxonomy labels of each question.
    num_options: number of options per question (default 4).
Returns:
    "accuracy", "level/<level>", "task/<level>/<task>", "subtask/<level>/<task>/<subtask>".
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS)
class ClovrScore(evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION, citation="", inputs_description=_KWARGS,
            features=datasets.Features({"predictions": datasets.Value("string"),
                                        "references": datasets.Value("string")}),
        )

    def _compute(self, predictions, references, levels, tasks, subtasks, num_options=None):
        return scores.clovr_score(predictions, references, levels, tasks, subtasks, num_options)
