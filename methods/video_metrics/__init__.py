"""Metrics of the video benchmarks (TAR, CLoVR-Bench): answer extraction, accuracy, temporal IoU, ROUGE-L.

``extraction`` (option letters by the Video-MME rules, time spans from text),
``scores`` (the metrics as functions) and ``evaluators`` (each metric as a
Hugging Face ``evaluate`` module, loadable with ``evaluate.load(path)``).
"""

from .core import VIDEO_SCORERS
from .evaluators import evaluator_path, load
from .extraction import extract_option, extract_span
from .scores import accuracy, clovr_score, iou, rouge_l, tar_score, temporal_iou

__all__ = ["VIDEO_SCORERS", "accuracy", "clovr_score", "evaluator_path", "extract_option", "extract_span", "iou",
           "load", "rouge_l", "tar_score", "temporal_iou"]
