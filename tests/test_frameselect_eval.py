"""FrameSelect evaluation: selection-level metrics, benchmarks from built folders, answer level, `frameselect run`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("av")

from neurips26.methods.frameselect import benchmarks, evaluators, runner  # noqa: E402
from neurips26.methods.frameselect.benchmarks import Question  # noqa: E402
from neurips26.methods.frameselect.evaluators import Placed, selection_scores  # noqa: E402


@pytest.fixture(scope="module")
def data(small_video_releases: Path) -> Path:
    return small_video_releases


def question(evidence: list[tuple[int, float, float]], videos: int = 1) -> Question:
    return Question("clovr", "q", "Which car?", "level", [f"v{k}" for k in range(videos)],
                    [f"/v{k}.mp4" for k in range(videos)], evidence)


def test_selection_metrics_by_hand() -> None:
    q = question([(0, 2.0, 4.0), (0, 8.0, 9.0)])
    picked = Placed(video=np.array([0, 0]), times=np.array([3.0, 5.0]), window=1.0)
    m = selection_scores(q, picked)
    # C = [2.5, 3.5] + [4.5, 5.5]; E = [2, 4] + [8, 9]; C & E = 1 s; |C| = 2, |E| = 3
    assert m["recall"] == 0.5 and m["precision"] == 0.5
    assert m["tiou"] == pytest.approx(1 / 4) and m["coverage"] == pytest.approx(1 / 3)
    assert m["redundancy"] is None  # no features


def test_frames_count_only_in_their_own_video() -> None:
    q = question([(1, 0.0, 10.0)], videos=2)
    in_other = selection_scores(q, Placed(np.array([0, 0]), np.array([1.0, 2.0])))
    assert in_other["recall"] == 0.0 and in_other["precision"] == 0.0 and in_other["tiou"] == 0.0
    mixed = selection_scores(q, Placed(np.array([0, 1]), np.array([1.0, 2.0])))
    assert mixed["recall"] == 1.0 and mixed["precision"] == 0.5 and mixed["coverage"] == pytest.approx(0.1)


def test_no_evidence_means_no_selection_metric_and_redundancy_uses_features() -> None:
    q = question([])
    features = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    m = selection_scores(q, Placed(np.array([0, 0, 0]), np.array([0.0, 1.0, 2.0]), features=features))
    assert m["recall"] is None and m["tiou"] is None and m["coverage"] is None
    assert m["redundancy"] == pytest.approx(2 / 3)  # two identical frames (1, 1), the third orthogonal (0)


def test_benchmarks_read_questions_videos_and_evidence(data: Path) -> None:
    tar = benchmarks.load("tar", data / "tar")
    assert len(tar) == 24 and all(Path(q.video_paths[0]).is_file() for q in tar)
    spans = [q for q in tar if q.evidence]
    assert spans and all(q.kind == "temporal_localization" for q in spans)
    assert all(q.evidence == [(0, q.row["start"], q.row["end"])] for q in spans)
    clovr = benchmarks.load("clovr", data / "clovr")
    assert clovr and all(len(q.video_ids) == 2 and q.evidence for q in clovr)
    for q in clovr:
        assert all(0 <= v < len(q.video_ids) and 0 <= s < e for v, s, e in q.evidence)
        assert [q.video_ids[v] for v, _, _ in q.evidence] == q.row["evidence_video_ids"]


def test_bad_benchmark_input_names_what_is_wrong(tmp_path: Path, data: Path) -> None:
    with pytest.raises(FileNotFoundError, match=f"{tmp_path}: not a built tar folder"):
        benchmarks.load("tar", tmp_path)
    with pytest.raises(KeyError, match="unknown benchmark 'tarr'; known: clovr, tar"):
        benchmarks.load("tarr")
    with pytest.raises(ValueError, match="no split 'dev'"):
        benchmarks.load("clovr", data / "clovr", split="dev")
    with pytest.raises(ValueError, match="unknown selector\\(s\\) nope"):
        runner.run("clovr", ["uniform", "nope"], [4], folder=data / "clovr")
    with pytest.raises(ValueError, match="budgets must be >= 1"):
        runner.run("clovr", ["uniform"], [0], folder=data / "clovr")


def test_more_frames_find_more_evidence(data: Path, tmp_path: Path) -> None:
    rows, results, _ = runner.run("clovr", ["uniform"], [1, 16], folder=data / "clovr", cache=tmp_path)
    assert {r["n_frames"] for r in rows if r["budget"] == 16} == {16}
    recall = {r["budget"]: r["value"] for r in results if r["metric"] == "recall"}
    assert recall[16] >= recall[1] and recall[16] > 0
    for row in rows:  # stored frame numbers are those of the stored times
        from neurips26.corpora.video.frames import open_video

        q = next(q for q in benchmarks.load("clovr", data / "clovr") if q.id == row["question_id"])
        for vid, t, f in zip(row["video_ids"], row["timestamps"], row["frame_indices"], strict=True):
            assert open_video(q.video_paths[q.video_ids.index(vid)]).index_at(t) == f


def test_common_keeps_only_questions_every_selector_ran_on(data: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from neurips26.corpora.video.selection import SELECTORS, SelectorRefused

    uniform = SELECTORS.get("uniform")

    def odd_refusing(pool, budget, rng, **options):  # refuses the questions of an odd number of characters
        if len(pool.query or "") % 2:
            raise SelectorRefused("an odd question")
        return uniform(pool, budget, rng)

    SELECTORS.get("uniform")  # load the registry's entry points before adding beside them
    monkeypatch.setitem(SELECTORS._items, "odd_refusing", odd_refusing)  # this test's own selector, removed after
    monkeypatch.setitem(SELECTORS._info, "odd_refusing", {"needs": ()})
    monkeypatch.setitem(SELECTORS._module, "odd_refusing", __name__)
    rows, results, refused = runner.run("tar", ["uniform", "odd_refusing"], [4], folder=data / "tar",
                                        evidence_only=False, common=True, cache=tmp_path)
    total = len(benchmarks.load("tar", data / "tar"))
    assert 0 < refused["odd_refusing"] < total
    n = {r["selector"]: r["n"] for r in results if r["metric"] == "redundancy"}
    assert n["uniform"] == n["odd_refusing"] == len(rows) // 2 == total - refused["odd_refusing"]


def test_answer_level_goes_through_the_task_prompt_and_metric(data: Path) -> None:
    from neurips26.methods.frameselect.answerers import answerer

    class Recording:  # the real tiny VLM, with the prompts it was given kept for inspection
        def __init__(self) -> None:
            self.inner, self.name, self.calls = answerer("tiny-idefics3", max_new_tokens=4), "rec", []

        def generate(self, text: str, images: list) -> str:
            self.calls.append((text, len(images)))
            return self.inner.generate(text, images)

    model = Recording()
    tar = next(q for q in benchmarks.load("tar", data / "tar") if q.kind == "mcq")
    out = evaluators.answer(tar, Placed(np.array([0, 0, 0]), np.array([0.5, 2.0, 6.0])), model)
    assert set(out) == {"acc", "score"} and out["acc"] in (0.0, 1.0)
    text, n_images = model.calls[-1]
    assert n_images == 3 and text.count("<image>") == 3 and "2.0s: <image>" in text and "The best answer is:" in text
    clovr = benchmarks.load("clovr", data / "clovr")[0]
    out = evaluators.answer(clovr, Placed(np.array([0, 1, 1]), np.array([1.0, 3.0, 5.0])), model)
    assert set(out) == {"acc"}
    text, n_images = model.calls[-1]
    assert n_images == 3 and "Video 2:\n3.0s: <image>\n5.0s: <image>" in text


def test_bad_answering_model_spec() -> None:
    from neurips26.methods.frameselect.answerers import answerer

    with pytest.raises(ValueError, match="answering model 'no-such-model'"):
        answerer("no-such-model")


def test_cli_run_prints_the_table_and_writes_the_plot(data: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from neurips26.cli import app

    png, out = tmp_path / "cmp.png", tmp_path / "rows.json"
    result = CliRunner().invoke(app, ["frameselect", "run", "--benchmark", "clovr", "--selectors",
                                      "uniform,random,topk,framerouter", "--budgets", "2,8", "--data", str(data),
                                      "--plot", str(png), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "clovr: selection-level metrics" in result.output and "framerouter" in result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = json.loads(out.read_text())
    ran = {(r["selector"], r["budget"]) for r in rows if r["metric"] == "recall"}
    assert ran >= {("uniform", 2), ("uniform", 8), ("random", 8), ("framerouter", 2), ("framerouter", 8)}
    bad = CliRunner().invoke(app, ["frameselect", "run", "--benchmark", "clovr", "--budgets", "8,x"])
    assert bad.exit_code == 2 and "--budgets must be comma-separated integers, got '8,x'" in bad.output


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_cli_run_prints_rows_as_json_or_csv(data: Path, tmp_path: Path, fmt: str) -> None:
    import csv
    import io

    from typer.testing import CliRunner

    from neurips26.cli import app

    png = tmp_path / "cmp.png"
    result = CliRunner().invoke(app, ["frameselect", "run", "--benchmark", "clovr", "--selectors", "uniform,random",
                                      "--budgets", "2", "--data", str(data), "--format", fmt, "--plot", str(png)])
    assert result.exit_code == 0, result.output
    rows = (json.loads(result.stdout) if fmt == "json"
            else [{**r, "budget": int(r["budget"])} for r in csv.DictReader(io.StringIO(result.stdout))])
    assert "selection-level metrics" not in result.stdout  # no table: only the rows
    ran = {(r["selector"], r["budget"]) for r in rows if r["metric"] == "recall"}
    assert ran == {("uniform", 2), ("random", 2)} and png.is_file()
    if fmt == "csv":
        assert list(rows[0]) == ["benchmark", "selector", "evaluator", "budget", "answering_model", "metric", "value",
                                 "n"]
    bad = CliRunner().invoke(app, ["frameselect", "run", "--format", "xml"])
    assert bad.exit_code == 2
