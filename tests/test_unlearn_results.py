"""`neurips26 unlearn` writes lm-eval results and samples files that the leaderboard's RoleBench-Unlearn board
accepts (it recomputes every document with the tasks' own scorer), and rejects when edited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from neurips26.corpora.rolebench_unlearn import build as rb
from neurips26.leaderboard.store import Store
from neurips26.methods.unlearn import evaluate, experiment

from neurips26.results import read_run

REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(data root, the refusal baseline's folder): the embedded model on 2 questions per set, 8 new tokens."""
    root = tmp_path_factory.mktemp("unlearn")
    rb.build(out=root / "data" / "rolebench_unlearn")
    result = experiment.run("refusal", "forget05", None, root / "data" / "rolebench_unlearn", root / "out",
                            eval_cfg=evaluate.EvalConfig(limit=2, max_new_tokens=8, batch_size=8))
    return root / "data", result.folder


def submit(store: Store, results: Path, samples: list[Path]):
    run = json.loads(results.read_text())
    meta = {"model_id": "HuggingFaceTB/SmolLM2-135M-Instruct", "revision": REVISION, "precision": "float32",
            "params": run["config"]["model_num_parameters"], "license": "apache-2.0",
            "model_type": "instruction-tuned", "submitter": "alice"}
    return store.submit(results, meta, samples)


def test_results_files_are_accepted_by_the_rolebench_board(written, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    data_root, folder = written
    monkeypatch.setenv("NEURIPS26_DATA", str(data_root))
    results = next((folder / "lm_eval").glob("results_*.json"))
    samples = sorted((folder / "lm_eval").glob("samples_*.jsonl"))
    run = read_run(results)
    assert set(run.tasks) == {"rolebench_unlearn_forget", "rolebench_unlearn_retain", "rolebench_unlearn_general"}
    evaluation = json.loads((folder / "evaluation.json").read_text())
    assert run.tasks["rolebench_unlearn_forget"].values["forget_rougeL,none"] == pytest.approx(
        evaluation["parts"]["forget_rougeL"])
    assert run.config["model_args"] == {"pretrained": evaluation["model"]}
    assert run.raw["system_instruction"].startswith("You must not imitate")  # the refusal instruction
    entry = submit(Store(tmp_path / "lb"), results, samples)
    assert entry.status == "UNRANKED", entry.reason  # accepted; unranked: 2 documents of each split, demo data
    assert "documents evaluated" in entry.reason and "demo sample" in entry.reason
    assert "generation arguments overridden (max_gen_toks=8)" in entry.reason

    edited = tmp_path / "edited"
    edited.mkdir()
    for path in samples:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        if "forget" in path.name:
            rows[0]["forget_style"] = min(1.0, rows[0]["forget_style"] + 0.25)
        (edited / path.name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    entry = submit(Store(tmp_path / "lb2"), results, sorted(edited.iterdir()))
    assert entry.status == "REJECTED" and "forget_style" in entry.reason
