"""The FrameSelect tables resource: build, load, query, and replay stored selections with two answering models."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("av")

from neurips26.methods.frameselect import tables as frameselect  # noqa: E402

SELECTORS = ["uniform", "kcenter", "framerouter"]
BUDGETS = [2, 6]


@pytest.fixture(scope="module")
def data(small_video_releases: Path) -> Path:
    return small_video_releases


@pytest.fixture(scope="module")
def vlm() -> Path:
    from neurips26.corpora.video.tiny_vlm import tiny_vlm

    return tiny_vlm()


@pytest.fixture(scope="module")
def built(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("frameselect-out") / "frameselect"
    report = frameselect.build(raw=data, out=out, selectors=SELECTORS, budgets=BUDGETS, limit=3,
                               cache=tmp_path_factory.mktemp("cache"))
    assert report.questions == {"tar": 3, "clovr": 3} and not report.refused
    return out


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.parquet"))}


def test_build_writes_every_selection_and_loads(built: Path) -> None:
    import datasets

    selections = datasets.load_dataset(str(built), "selections", split="train").to_list()
    assert len(selections) == 6 * len(SELECTORS) * len(BUDGETS)  # every (question, selector, budget)
    keys = {(r["benchmark"], r["question_id"], r["selector"], r["budget"]) for r in selections}
    assert len(keys) == len(selections)
    for r in selections:
        n = r["n_frames"]
        assert len(r["video_ids"]) == len(r["frame_indices"]) == len(r["timestamps"]) == len(r["scores"]) == n
        if r["selector"] != "framerouter":
            assert n == r["budget"]
    for bench in ("tar", "clovr"):  # FrameRouter's budgets average the reference budget exactly
        for b in BUDGETS:
            frames = [r["n_frames"] for r in selections if r["benchmark"] == bench and r["selector"] == "framerouter"
                      and r["budget"] == b]
            assert sum(frames) == b * len(frames) == b * 3
    results = datasets.load_dataset(str(built), "results", split="train").to_list()
    clovr = {(r["selector"], r["budget"], r["metric"]) for r in results if r["benchmark"] == "clovr"}
    assert clovr == {(s, b, m) for s in SELECTORS for b in BUDGETS
                     for m in ("recall", "precision", "tiou", "coverage", "redundancy")}
    assert all(0.0 <= r["value"] <= 1.0 + 1e-9 and r["n"] >= 1 for r in results if r["metric"] != "redundancy")
    manifest = json.loads((built / "manifest.json").read_text())
    assert manifest["builder"]["parameters"]["selectors"] == SELECTORS
    assert set(manifest["inputs"]["sha256"]) == {"tar/manifest.json", "clovr/manifest.json"}
    assert manifest["demo"] is True  # its benchmark folders were built from generated (invented) releases
    assert manifest["builder"]["name"] == frameselect.BUILDER_NAME == "neurips26.methods.frameselect.tables"
    from neurips26.corpora import RESOURCES

    assert RESOURCES.get("frameselect") is frameselect.build
    assert RESOURCES.info("frameselect")["requires"] == ("tar", "clovr")
    card = (built / "README.md").read_text()
    assert "config_name: selections" in card and f"{len(selections)} selections" in card


def test_duckdb_queries_the_results(built: Path) -> None:
    from neurips26.sql import run_query

    table = run_query("SELECT selector, budget, value FROM frameselect.results WHERE benchmark = 'clovr' "
                      "AND metric = 'recall' ORDER BY selector, budget", {"frameselect": built})
    assert table.num_rows == len(SELECTORS) * len(BUDGETS)


def test_replay_answers_stored_selections_with_two_models_without_selecting(
        built: Path, data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neurips26.methods.frameselect import SELECTORS as REGISTRY
    from neurips26.methods.frameselect import router
    from typer.testing import CliRunner

    from neurips26.cli import app

    before = digests(built / "data" / "selections")
    monkeypatch.setattr(REGISTRY, "_items", {})  # any selector call now fails: replay must not select
    monkeypatch.setattr(router, "route", lambda *a, **k: pytest.fail("replay ran FrameRouter"))

    rows0 = frameselect.replay(built, "tiny-idefics3-seed0", raw=data, max_new_tokens=2)
    result = CliRunner().invoke(app, ["frameselect", "replay", str(built), "--model", "tiny-idefics3-seed1",
                                      "--data", str(data), "--max-new-tokens", "2", "--budgets", "2,6"])
    assert result.exit_code == 0, result.output
    assert digests(built / "data" / "selections") == before  # selections byte-identical

    results = frameselect.read_config(built, "results").to_pylist()
    tables = {m: {(r["benchmark"], r["selector"], r["budget"], r["metric"]): r for r in results
                  if r["evaluator"] == "answer" and r["answering_model"] == m}
              for m in ("tiny-idefics3-seed0", "tiny-idefics3-seed1")}
    expected = {("clovr", s, b, "acc") for s in SELECTORS for b in BUDGETS}
    assert set(tables["tiny-idefics3-seed0"]) >= expected and set(tables["tiny-idefics3-seed1"]) >= expected
    assert set(tables["tiny-idefics3-seed0"]) == set(tables["tiny-idefics3-seed1"])
    keys0 = {(r["benchmark"], r["selector"], r["budget"], r["metric"]) for r in rows0}
    assert keys0 == set(tables["tiny-idefics3-seed0"])
    assert all(r["n"] == 3 for r in tables["tiny-idefics3-seed1"].values() if r["metric"] in ("acc", "score")
               and r["benchmark"] == "clovr")
    selection_level = [r for r in results if r["evaluator"] == "selection"]
    assert selection_level  # kept

    # replaying a model again (here one selector) replaces its rows rather than adding copies
    frameselect.replay(built, "tiny-idefics3-seed0", raw=data, max_new_tokens=2, selectors=["uniform"])
    again = frameselect.read_config(built, "results").to_pylist()
    assert len(again) == len(results)
    with pytest.raises(ValueError, match="no stored selections with budget 99"):
        frameselect.replay(built, "tiny-idefics3-seed0", raw=data, budgets=[99])


def test_the_two_answering_models_differ() -> None:
    import torch
    from neurips26.methods.frameselect.answerers import answerer
    from PIL import Image

    image = Image.fromarray(np.tile(np.arange(64, dtype=np.uint8)[:, None, None] * 4, (1, 64, 3)))
    text = "0.0s: <image>\nWhat is shown? Answer:"
    logits = []
    for spec in ("tiny-idefics3-seed0", "tiny-idefics3-seed1"):
        model = answerer(spec, max_new_tokens=2)
        assert isinstance(model.generate(text, [image]), str)
        inputs = model.processor(text=[text], images=[[image]], return_tensors="pt")
        with torch.inference_mode():
            logits.append(model.model(**inputs).logits[0, -1])
    assert not torch.allclose(logits[0], logits[1])  # two different models, not one under two names


def test_replay_refuses_what_is_not_a_frameselect_build(tmp_path: Path, data: Path) -> None:
    from typer.testing import CliRunner

    from neurips26.cli import app

    result = CliRunner().invoke(app, ["frameselect", "replay", str(tmp_path), "--model", "tiny-idefics3"])
    assert result.exit_code == 2 and f"{tmp_path}: not a built FrameSelect folder" in result.output.replace("\n", "")
    with pytest.raises(ValueError, match="not a FrameSelect build"):
        frameselect.replay(data / "tar", "tiny-idefics3")


def test_lm_eval_tasks_show_the_stored_frames(data: Path, vlm: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Answer level through lm-eval itself: the video tasks take a selector's stored frames from the metadata."""
    from neurips26.tasks import evaluation

    out = tmp_path / "frameselect"
    frameselect.build(raw=data, out=out, selectors=["kcenter"], budgets=[3], cache=tmp_path / "cache")
    stored = {(r["benchmark"], r["question_id"]): r for r in frameselect.read_config(out, "selections").to_pylist()}
    monkeypatch.setenv("NEURIPS26_DATA", str(data))  # restored after the test (run() sets it too)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    run = evaluation.run(["tar_mcq", "clovr_tracking_retrieval"], "hf-multimodal", f"pretrained={vlm}", limit=1,
                         output=tmp_path / "results", device="cpu", data=data, gen_kwargs="max_gen_toks=2",
                         metadata={"selections": str(out), "selector": "kcenter", "num_frames": 3})
    results = {**run.results, "samples": {f.name.split("_2")[0].removeprefix("samples_"):
                                          [json.loads(line) for line in f.read_text().splitlines()]
                                          for f in run.samples_files}}
    for task, benchmark, key in [("tar_mcq", "tar", "id"), ("clovr_tracking_retrieval", "clovr", "qid")]:
        assert results["configs"][task]["metadata"]["selector"] == "kcenter"  # the selection, recorded
        doc = results["samples"][task][0]["doc"]
        row = stored[(benchmark, doc[key])]
        times = [t for per_video in (doc["frame_times"] if benchmark == "clovr" else [doc["frame_times"]])
                 for t in per_video]
        assert sorted(times) == sorted(round(t, 3) for t in row["timestamps"]) and len(times) == row["n_frames"]
        prompt = results["samples"][task][0]["arguments"]["gen_args_0"]["arg_0"]
        assert prompt.count("<image>") == row["n_frames"]
    from neurips26.tasks import video

    with pytest.raises(ValueError, match="no frames stored for tar question 'nope'"):
        video.selected_times(str(out), "kcenter", "tar", "nope", 3, ["v"])
    with pytest.raises(ValueError, match="no tar selections by selector 'dpp'"):
        video.selected_times(str(out), "dpp", "tar", "x", 3, ["v"])
    with pytest.raises(ValueError, match="needs 'selector'"):
        video.selected_times(str(out), None, "tar", "x", 3, ["v"])
