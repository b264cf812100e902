"""Evidence use: a failed document re-run through its lm-eval task with only its evidence taken away."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from neurips26.corpora import RESOURCES
from neurips26.tasks import counterfactual as cf
from neurips26.tasks.evaluation import run as evaluate
from neurips26.tasks.evaluation import task_manager

from neurips26 import settings
from neurips26.results import read_run


@pytest.fixture(scope="module")
def constant_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """LOCUS built from its embedded sample, and a real lm-eval run of the constant answerer on two tasks; the
    data root the runs set ($NEURIPS26_DATA) stays inside this module."""
    root = tmp_path_factory.mktemp("counterfactual")
    RESOURCES.get("locus")(out=root / "data" / "locus")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NEURIPS26_DATA", str(root / "data"))
        evaluate(["locus_domain", "locus_catchline"], model="constant", model_args="strategy=first", limit=6,
                 output=root / "results", data=root / "data")
        yield root / "data", root / "results"


def test_the_counterfactual_changes_only_the_evidence(constant_run: tuple[Path, Path],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    data, results = constant_run
    monkeypatch.setattr(settings, "data_root", lambda: data)
    run = read_run(results)
    for name in ("locus_domain", "locus_catchline"):
        task = task_manager().load([name])["tasks"][name]
        doc = run.tasks[name].samples[0].doc
        changed = cf.counterfactual_doc(doc)
        assert {k for k in doc if doc[k] != changed[k]} == {"text"} and changed["text"] == cf.REMOVED
        before, after = task.fewshot_context(doc, 0), task.fewshot_context(changed, 0)
        assert doc["text"] in before and after == before.replace(doc["text"], cf.REMOVED)
        if task.OUTPUT_TYPE == "multiple_choice":
            assert task.doc_to_choice(changed) == task.doc_to_choice(doc)
    frames = {"question": "what happened?", "frame_times": [0.0, 1.0, 2.0, 3.0]}
    shuffled = cf.counterfactual_doc(frames, "shuffled")
    assert sorted(shuffled["frame_times"]) == frames["frame_times"] != shuffled["frame_times"]
    assert cf.counterfactual_doc(frames)["frame_times"] == [] and shuffled["question"] == frames["question"]
    with pytest.raises(ValueError, match="no evidence field"):
        cf.counterfactual_doc({"question": "x"})


def test_a_model_that_ignores_the_evidence_is_flagged(constant_run: tuple[Path, Path]) -> None:
    """The constant answerer answers the same whatever the text: every re-run is unchanged, and it fires."""
    data, results = constant_run
    run = read_run(results)
    reruns = cf.rerun(run, per_task=3, data=data)
    assert reruns and {r.task for r in reruns} <= {"locus_domain", "locus_catchline"}
    assert all(r.unchanged and r.reproduced and r.field == "text" for r in reruns)
    rows = cf.evidence_rows(reruns, run.model_name)
    assert all(r["signature"] == "evidence_ignored (removed)" and r["rate"] == 1.0 for r in rows)
    assert all(r["count"] == r["n"] <= 3 for r in rows)
