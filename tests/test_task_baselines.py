"""Baselines are measured, not declared: each ranked lm-eval task's recorded baseline is recomputed from its split.

RoleBench-Unlearn is built from the real RoleBench (``../shared/data/rolebench``), LOCUS from the real Georgia
codes with the gold set (``../shared/data/locus``, ``locus-gold``); TAR and CLoVR from the generator's default
release (their embedded sample). Each task's empty, constant and random answerers are rerun on the built split
(:mod:`neurips26.tasks.measure`) and must give the scores its protocol records.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from neurips26.corpora.locus.build import build as build_locus
from neurips26.corpora.locus.real_sample import link_raw
from neurips26.corpora.rolebench_unlearn.build import build as build_rolebench
from neurips26.methods.unlearn import metrics
from neurips26.tasks import TASKS_DIR, measure
from neurips26.tasks.protocol import baseline_value, read_protocols
from pydantic import ValidationError

from neurips26.hubfolder import read_table
from neurips26.protocol import MeasuredBaseline, Protocol
from neurips26.results import Sample

PROTOCOLS = read_protocols(strict=True)[0]
RANKED = sorted(t for t, p in PROTOCOLS.items() if p.source != "registered" and p.protocol.ranked)
REAL = [t for t in RANKED if t.startswith(("rolebench_unlearn_", "locus_"))]
GENERATED = [t for t in RANKED if t.startswith(("tar_", "clovr_"))]


@pytest.fixture(scope="module")
def real_data(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RoleBench-Unlearn and LOCUS (with the gold configs) built from the real shared data."""
    root = tmp_path_factory.mktemp("real-data")
    build_rolebench(raw=shared_data / "rolebench", out=root / "rolebench_unlearn")
    build_locus(raw=link_raw(shared_data / "locus", root / "locus-raw"), out=root / "locus",
                gold=shared_data / "locus-gold")
    return root


@pytest.fixture(scope="module")
def generated_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TAR and CLoVR built from the generator's default release."""
    pytest.importorskip("av")
    from neurips26.corpora.clovr import build as clovr_build
    from neurips26.corpora.tar import build as tar_build

    root = tmp_path_factory.mktemp("generated-data")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NEURIPS26_CACHE", str(root / "cache"))
        tar_build.build(out=root / "tar")
        clovr_build.build(out=root / "clovr")
    return root


def check_recorded(task: str, data: Path, monkeypatch: pytest.MonkeyPatch) -> MeasuredBaseline:
    monkeypatch.setenv("NEURIPS26_DATA", str(data))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(data / "hf"))
    recorded = PROTOCOLS[task].protocol.baseline_from
    measured = measure.measure(measure.load_split(task))
    assert recorded is not None, f"{task}: no baseline_from; run python -m neurips26.tasks.measure --record {task}"
    assert measured.n == recorded.n, f"{task}: the recorded baseline was measured on another split"
    assert measured.scores == pytest.approx(recorded.scores, abs=1e-4), task
    assert (measured.answerer, measured.answer) == (recorded.answerer, recorded.answer), task
    return measured


@pytest.mark.parametrize("task", REAL)
def test_recorded_baselines_are_recomputed_from_the_real_split(task: str, real_data: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    measured = check_recorded(task, real_data, monkeypatch)
    assert "released data" in measured.data


@pytest.mark.parametrize("task", GENERATED)
def test_recorded_baselines_are_recomputed_from_the_generated_release(task: str, generated_data: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    check_recorded(task, generated_data, monkeypatch)


def test_rolebench_general_and_retain_baselines_are_what_knowing_nothing_scores() -> None:
    """An empty answer scores ROUGE-L 0, but a constant or random answer does not: the baseline is the best."""
    for task in ("rolebench_unlearn_general", "rolebench_unlearn_retain"):
        protocol = PROTOCOLS[task].protocol
        measured = protocol.baseline_from
        assert measured is not None and measured.scores["empty"] == 0.0
        assert protocol.baseline == max(measured.scores.values()) > 0.05, task
        assert measured.scores["random"] > 0.05 and measured.seeds >= 3, task


def test_every_ranked_task_records_the_best_answerer_as_its_baseline() -> None:
    assert len(RANKED) >= 20 and not {"locus", "tar", "rolebench_unlearn"} & set(RANKED)
    for task in RANKED:
        protocol = PROTOCOLS[task].protocol
        measured = protocol.baseline_from
        assert measured is not None, f"{task}: its baseline is declared, not measured"
        assert {"constant", "random"} <= set(measured.scores), task
        best = max(measured.scores.values()) if protocol.higher_is_better else min(measured.scores.values())
        if protocol.baseline == "majority":  # resolved on each run's split: the best constant answer there
            assert measured.answerer == "constant" and measured.scores["constant"] == best, task
        else:
            assert protocol.baseline == best, task


def test_a_majority_baseline_resolves_to_the_measured_constant_on_its_split(real_data: Path) -> None:
    """The board resolves ``majority`` on the run's samples: on the recorded split, that is the measured number."""
    for task, config in (("locus_topic", "topic"), ("locus_function_gold", "function_gold")):
        labels = read_table(real_data / "locus", config, split="test").column("label").to_pylist()
        samples = [Sample(doc_id=k, doc={}, target=label, arguments=None, resps=None, filtered_resps=None, values={})
                   for k, label in enumerate(labels)]
        protocol = PROTOCOLS[task].protocol
        assert baseline_value(protocol, samples) == pytest.approx(protocol.baseline_from.scores["constant"], abs=1e-4)


def test_fast_rouge_l_is_the_unlearning_metric_on_real_answers(real_data: Path) -> None:
    rows = read_table(real_data / "rolebench_unlearn", "forget05", split="retain_test").to_pylist()
    rng = random.Random(0)
    for _ in range(40):
        prediction = rng.choice(rows)["references"][0]
        prediction = prediction[: rng.randrange(1, len(prediction) + 1)]
        references = rng.choice(rows)["references"]
        assert measure.rouge_l(prediction, references) == metrics.rouge_l(prediction, references)
    assert measure.rouge_l("", references) == 0.0


def test_lcs_length_against_the_table() -> None:
    rng = random.Random(1)
    for _ in range(200):
        a = tuple(rng.choice("abcd") for _ in range(rng.randrange(0, 12)))
        b = tuple(rng.choice("abcd") for _ in range(rng.randrange(0, 12)))
        table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
        assert measure.lcs_length(a, b) == table[-1][-1], (a, b)


def test_a_protocol_refuses_a_baseline_that_is_not_the_measured_best() -> None:
    record = {"answerer": "random", "scores": {"empty": 0.0, "constant": 0.2, "random": 0.1}, "n": 10,
              "data": "x"}
    with pytest.raises(ValidationError, match="scores better than the recorded answerer"):
        Protocol(split="test", metric="rougeL", baseline=0.1, range=(0, 1), baseline_from=record)
    with pytest.raises(ValidationError, match="not the measured best"):
        Protocol(split="test", metric="rougeL", baseline=0.0, range=(0, 1),
                 baseline_from={**record, "answerer": "constant"})
    with pytest.raises(ValidationError, match="majority baseline, but the random answerer"):
        Protocol(split="test", metric="acc", baseline="majority", range=(0, 1),
                 baseline_from={**record, "scores": {"constant": 0.2, "random": 0.3}})
    lower = Protocol(split="test", metric="err", higher_is_better=False, baseline=0.1, range=(0, 1),
                     baseline_from=record | {"scores": {"constant": 0.2, "random": 0.1}})
    assert lower.baseline == 0.1


def test_record_writes_the_measurement_into_the_task_yaml(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS_DIR / "rolebench_unlearn", tasks / "rolebench_unlearn")
    item = read_protocols(tasks)[0]["rolebench_unlearn_general"]
    measured = MeasuredBaseline(answerer="random", scores={"empty": 0.0, "constant": 0.01, "random": 0.0625},
                                answer="a: 'quoted' text", n=24, seeds=5, data="rolebench_unlearn general/test")
    measure.record(item, measured, tasks)
    again = read_protocols(tasks)[0]["rolebench_unlearn_general"].protocol
    assert again.baseline == 0.0625 and again.baseline_from == measured
    assert again.model_dump(exclude={"baseline", "baseline_from"}) == \
        item.protocol.model_dump(exclude={"baseline", "baseline_from"})
