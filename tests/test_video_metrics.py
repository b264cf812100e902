"""Video metrics against hand-computed cases: Video-MME answer extraction, IoU, ROUGE-L, TAR and CLoVR scores."""

from __future__ import annotations

import pytest
from neurips26.methods.video_metrics import (
    VIDEO_SCORERS,
    accuracy,
    clovr_score,
    evaluator_path,
    extract_option,
    extract_span,
    iou,
    load,
    rouge_l,
    tar_score,
    temporal_iou,
)


@pytest.mark.parametrize(("text", "n", "letter"), [
    ("B", 4, "B"),
    ("  The best answer is C.", 4, "C"),
    ("The answer is (A)", 4, "A"),
    ("(D) a stopped truck", 4, "D"),
    ("Best option: B. Jaywalking", 4, "B"),
    ("The correct answer is D because the car stops.", 4, "D"),
    ("Based on the video, C", 4, "B"),  # Video-MME quirk: the first capital option letter anywhere (B of Based)
    ("Answer: D", 4, "A"),  # "Answer:" is not among the stripped phrases: the A of "Answer" wins
    ("The answer D", 4, "D"),  # "The answer" is stripped
    ("none of the options fits", 4, ""),  # no capital option letter
    ("b", 4, ""),  # lower case is not a letter answer
    ("E", 4, ""),  # beyond the options
    ("E", 5, "E"),
    ("C", 2, ""),  # binary question: only A and B
    ("there is a car that hits another one from behind while the pedestrian waits at the crossing", 4, ""),
    ("", 4, ""),
])
def test_extract_option_video_mme_rules(text: str, n: int, letter: str) -> None:
    assert extract_option(text, n) == letter


def test_extract_option_rejects_bad_option_counts() -> None:
    with pytest.raises(ValueError):
        extract_option("A", 0)


@pytest.mark.parametrize(("text", "span"), [
    ("3.2-5.8", (3.2, 5.8)),
    ("from 3.5 s to 7 s", (3.5, 7.0)),
    ("[7.0, 3.5]", (3.5, 7.0)),
    ("00:03 - 00:07", (3.0, 7.0)),
    ("01:02:03 to 01:02:05", (3723.0, 3725.0)),
    ("between 2 and 5 seconds", (2.0, 5.0)),
    ("at 4 s", None),
    ("no idea", None),
])
def test_extract_span(text: str, span: tuple[float, float] | None) -> None:
    assert extract_span(text) == (pytest.approx(span) if span else None)


def test_accuracy_by_hand() -> None:
    out = accuracy(["B", "The answer is C", "xyz"], ["B", "D", "A"])
    assert out == {"accuracy": pytest.approx(1 / 3), "unanswered": pytest.approx(1 / 3)}
    assert accuracy(["A", "C"], ["A", "A"], num_options=[2, 4])["accuracy"] == 0.5


def test_iou_by_hand() -> None:
    assert iou((2, 6), (3, 7)) == pytest.approx(3 / 5)
    assert iou((3, 5), (2, 6)) == pytest.approx(2 / 4)
    assert iou((0, 1), (5, 6)) == 0.0
    assert iou((2, 6), (2, 6)) == 1.0
    assert iou(None, (1, 2)) == 0.0
    assert iou((3, 3), (3, 3)) == 0.0


def test_temporal_iou_and_recall_by_hand() -> None:
    out = temporal_iou(["2-6", "3-5", "0-1", "garbage"], ["3-7", "2-6", [5, 6], (1, 2)])
    # IoUs 0.6, 0.5, 0, 0
    assert out == pytest.approx({"miou": 0.275, "R@0.3": 0.5, "R@0.5": 0.5, "R@0.7": 0.0, "unparsed": 0.25})


def test_rouge_l_by_hand() -> None:
    # LCS 4 of 4 predicted and 5 reference tokens: P = 1, R = 0.8, F = 2PR / (P + R) = 8/9
    assert rouge_l(["the red car stops"], ["the red car stops suddenly"])["rougeL"] == pytest.approx(8 / 9)
    assert rouge_l([""], ["anything"])["rougeL"] == 0.0


def test_tar_score_by_hand() -> None:
    out = tar_score(
        ["The answer is B", "C", "A", "the red car stops", "2.0 - 4.0", "yes"],
        ["B", "A", "A", "the red car stops suddenly", "3-5", "No. Traffic flows normally."],
        ["mcq", "mcq", "bcq", "open_qa", "temporal_localization", "bcq_openended"],
        num_options=[4, 4, 2, 0, 0, 0],
    )
    # mcq 1/2, bcq 1, open_qa 8/9, localization IoU (3,4)/(2,5) = 1/3, bcq_openended ROUGE-L 0
    assert out["mcq/accuracy"] == 0.5 and out["bcq/accuracy"] == 1.0
    assert out["open_qa/rougeL"] == pytest.approx(8 / 9)
    assert out["temporal_localization/miou"] == pytest.approx(1 / 3)
    assert out["temporal_localization/R@0.3"] == 1.0 and out["temporal_localization/R@0.5"] == 0.0
    assert out["bcq_openended/rougeL"] == 0.0
    assert out["group/Question Answering"] == pytest.approx((0.5 + 1 + 8 / 9 + 0) / 4)
    assert out["group/Temporal Reasoning"] == pytest.approx(1 / 3)
    assert out["tar_score"] == pytest.approx((0.5 + 1 + 8 / 9 + 1 / 3 + 0) / 5)
    with pytest.raises(ValueError, match="unknown TAR task type"):
        tar_score(["A"], ["A"], ["anomaly_counting"])


def test_clovr_score_by_hand() -> None:
    out = clovr_score(["A", "The best answer is B", "D", "C"], ["A", "B", "C", "C"],
                      ["Comparative Analysis", "Comparative Analysis", "Integrated Reasoning", "Integrated Reasoning"],
                      ["Quantity", "Speed", "Ordering", "Ordering"], ["vehicles", "speed", None, None])
    assert out["accuracy"] == 0.75
    assert out["level/Comparative Analysis"] == 1.0 and out["level/Integrated Reasoning"] == 0.5
    assert out["task/Integrated Reasoning/Ordering"] == 0.5
    assert out["subtask/Comparative Analysis/Speed/speed"] == 1.0
    assert out["subtask/Integrated Reasoning/Ordering/"] == 0.5


def test_evaluators_load_by_path_and_agree_with_the_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    import evaluate

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert set(VIDEO_SCORERS) == {"video_accuracy", "temporal_iou", "video_rouge", "tar_score", "clovr_score"}
    metric = evaluate.load(str(evaluator_path("video_accuracy")))
    assert metric.compute(predictions=["The best answer is B.", "C"], references=["B", "D"]) == {
        "accuracy": 0.5, "unanswered": 0.0}
    assert load("temporal_iou").compute(predictions=["2-6"], references=["3-7"])["miou"] == pytest.approx(0.6)
    assert load("video_rouge").compute(predictions=["the red car stops"],
                                       references=["the red car stops suddenly"])["rougeL"] == pytest.approx(8 / 9)
    preds, refs, types = ["B", "2-4", "x"], ["B", "3-5", "x"], ["mcq", "temporal_localization", "open_qa"]
    assert load("tar_score").compute(predictions=preds, references=refs, task_types=types) == pytest.approx(
        tar_score(preds, refs, types))
    got = load("clovr_score").compute(predictions=["A", "B"], references=["A", "C"], levels=["L1", "L2"],
                                      tasks=["t", "u"], subtasks=["s", "v"])
    assert got["accuracy"] == 0.5 and got["level/L1"] == 1.0
    with pytest.raises(ValueError, match="unknown video evaluator 'bleu'"):
        evaluator_path("bleu")
