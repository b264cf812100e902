"""HOLMES on a generated CLoVR set: slots, certificates, gates, the perception backends and the CLI."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from neurips26.methods.frameselect import benchmarks
from neurips26.methods.frameselect.pool import build_pool
from neurips26.methods.holmes import CLOVR_METHODS, PERCEPTION
from neurips26.methods.holmes.evaluate import evaluate
from neurips26.methods.holmes.graph import BindingGraph, Detection
from neurips26.methods.holmes.readout import read
from neurips26.methods.holmes.search import coverage
from neurips26.methods.holmes.slots import Entity, plan


@pytest.fixture(scope="module")
def clovr(small_video_releases: Path) -> tuple[list[benchmarks.Question], Path]:
    """The small generated CLoVR set (2 videos of 20 s) and its scene records."""
    return benchmarks.clovr(small_video_releases / "clovr"), small_video_releases.parent / "clovr-raw" / "scenes"


def pool_of(q: benchmarks.Question, cache: Path | None = None):
    return build_pool(q.video_paths, query=q.query, encoder="descriptor", candidate_fps=2.0, thumb=128, cache=cache)


def test_planner_names_entities_and_plans_only_discriminating_videos() -> None:
    options = ["It stands still the whole time", "Right to left", "Left to right", "It does not appear in Video 2"]
    p = plan("In Video 2, which way does the purple car travel?", options, 3, "travel direction")
    assert p.entities == [Entity("purple", "car")]
    assert [s.video for s in p.slots] == [1] and p.slots[0].risk == "low"
    p = plan("In which videos does the teal bus appear?", ["Videos 1 and 2", "Videos 2 and 3", "All 3 videos",
                                                            "Videos 1 and 3"], 3)  # no subtask label: the wording
    assert p.subtask == "appearance set" and [s.video for s in p.slots] == [0, 1, 2]
    assert p.slots[0].discriminates == ["A", "C", "D"] and all(s.risk == "high" for s in p.slots)


def test_coverage_certificate_by_hand() -> None:
    # looks at 6 and 18 s of 24 s: gaps 6, 12, 6; a 4 s window avoids them for 2 + 8 + 2 of 20 start seconds
    confidence, gap = coverage([6.0, 18.0], 24.0, recall=1.0)
    assert confidence == pytest.approx(1 - 12 / 20) and gap == 12.0
    # every 2 s: any 4 s window holds two looks, each seen with probability 0.9
    confidence, _ = coverage(list(np.arange(1.0, 24.0, 2.0)), 24.0, recall=0.9)
    assert confidence == pytest.approx(1 - 0.1**2)
    assert coverage([], 24.0, 1.0) == (0.0, 24.0)


def test_oracle_answers_generated_questions_and_open_gates_are_right(clovr) -> None:
    questions, scenes = clovr
    oracle = PERCEPTION.get("oracle")(scenes)
    answers = [CLOVR_METHODS.get("holmes")(q, pool_of(q), oracle, budget=40) for q in questions]
    correct = {q.row["subtask"]: a.letter == q.answer for q, a in zip(questions, answers, strict=True)}
    assert len(correct) >= 8 and all(correct.values()), correct  # every level: counts, order, direction...
    assert all(a.reason == "open" for a in answers)  # each through open gates: every slot settled
    record = answers[0].record()
    assert json.loads(json.dumps(record))["certificates"] and record["edges"]


def test_searched_but_absent_slot_gets_a_certificate(clovr) -> None:
    questions, scenes = clovr
    q = replace(questions[0], query="In which videos does the pink bus appear?", row={**questions[0].row,
                                                                                       "subtask": "appearance set"},
                options=["Videos 1 and 2", "Video 1 only", "Video 2 only", "None of the videos"], answer="D")
    a = CLOVR_METHODS.get("holmes")(q, pool_of(q), PERCEPTION.get("oracle")(scenes), budget=32)
    assert [c.found for c in a.certificates] == [False, False]
    for c in a.certificates:
        assert c.confidence >= 0.9 and c.policy == "scan" and c.spans and c.largest_gap <= 4.0
        assert c.video_id in q.video_ids and c.frames >= 6
    assert a.reason == "open" and a.text == "None of the videos"
    sparse = CLOVR_METHODS.get("holmes")(q, pool_of(q), PERCEPTION.get("oracle")(scenes), budget=2)
    assert all(c.confidence < 0.9 for c in sparse.certificates) and sparse.reason.startswith("closed")


def test_gates_close_on_an_unsettled_slot_and_the_audit_flags_contradictions() -> None:
    p = plan("In how many of the 2 videos does the red car appear?", ["None", "One", "Two"], 2, "appearance count")
    graph = BindingGraph(2)
    graph.add(0, 1.0, [Detection(0, 1.0, "red", "car", 0.2, 0.65)])
    letter, out = read(p, graph, {}, ["None", "One", "Two"], [20.0, 20.0], gate=0.9)
    assert out.reason == "closed: the red car in video 2: not found and not certified absent"
    assert letter == "B"  # read on without gates: unseen counts as absent
    graph.add(0, 2.0, [Detection(0, 2.0, "red", "car", 0.4, 0.65)])
    graph.add(0, 3.0, [Detection(0, 3.0, "red", "car", 0.1, 0.65)])  # and back: a contradiction
    _, out = read(p, graph, {}, ["None", "One", "Two"], [20.0, 20.0], gate=0.9)
    assert out.audit == ["the red vehicle in video 1 moves both ways"]
    assert out.reason.startswith("closed: constraint audit: the red vehicle in video 1 moves both ways")


def test_descriptor_sees_the_oracles_vehicles(clovr) -> None:
    questions, scenes = clovr
    pool = pool_of(questions[0])
    oracle, descriptor = PERCEPTION.get("oracle")(scenes), PERCEPTION.get("descriptor")()
    hits = misses = spurious = 0
    for i in range(0, pool.n, 3):
        vehicles = [d for d in oracle.observe(pool, i, []) if d.kind != "pedestrian"]
        truth = {d.colour for d in vehicles if 0.1 < d.x < 0.9}  # wholly in view
        seen = {d.colour for d in descriptor.observe(pool, i, []) if d.kind != "pedestrian"}
        hits, misses = hits + len(truth & seen), misses + len(truth - seen)
        spurious += len(seen - {d.colour for d in vehicles})
    assert hits >= 10 and misses <= 0.1 * hits and spurious <= 0.3 * hits


def test_vlm_backend_runs_end_to_end(clovr) -> None:
    questions, _ = clovr
    q = next(q for q in questions if q.row["subtask"] == "travel direction")
    a = CLOVR_METHODS.get("holmes")(q, pool_of(q), PERCEPTION.get("vlm")(model="tiny-idefics3"), budget=3)
    assert a.frames <= 3 and len(a.certificates) == 1 and a.certificates[0].confidence < 0.9


def test_evaluate_reports_levels_slot_f1_bindings_and_calibration(clovr, small_video_releases: Path) -> None:
    _, scenes = clovr
    rows, records = evaluate(small_video_releases / "clovr", ["oracle"], [32], scenes=scenes)
    metrics = {(r["method"], r["scope"], r["metric"]) for r in rows}
    for method in ("holmes", "uniform"):
        assert {(method, "level", "acc"), (method, "all", "slot_f1"), (method, "all", "binding_acc")} <= metrics
    f1 = next(r["value"] for r in rows if r["method"] == "holmes" and r["metric"] == "slot_f1")
    assert f1 >= 0.9
    assert {r["method"] for r in records} == {"holmes", "uniform"}


def test_cli_prints_the_level_table(clovr, small_video_releases: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from neurips26.cli import app

    _, scenes = clovr
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["holmes", "run", "--data", str(small_video_releases / "clovr"), "--scenes",
                                      str(scenes), "--perception", "oracle", "--budgets", "16", "--limit", "3",
                                      "--out", "out"])
    assert result.exit_code == 0, result.output
    assert "Comparative Analysis" in result.output and "slot_f1" in result.output
    assert "perception oracle: the release's scene records" in result.output  # says what it perceived with
    assert "planner reader: MiniLM reader (subtask labels dropped)" in result.output
    assert len((tmp_path / "out" / "answers.jsonl").read_text().splitlines()) == 6
    bad = CliRunner().invoke(app, ["holmes", "run", "--perception", "nosuch", "--data",
                                   str(small_video_releases / "clovr")])
    assert bad.exit_code == 2 and "unknown HOLMES perception backend 'nosuch'" in bad.output
    bad = CliRunner().invoke(app, ["holmes", "run", "--planner", "nosuch", "--data",
                                   str(small_video_releases / "clovr")])
    assert bad.exit_code == 2 and "unknown HOLMES planner 'nosuch'; known: rules, reader, lm" in bad.output
