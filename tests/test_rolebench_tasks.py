"""RoleBench-Unlearn lm-eval tasks end to end on the embedded model, through our runner."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
from pathlib import Path

import pytest
from neurips26.corpora.rolebench_unlearn import build as rb
from neurips26.methods.unlearn import prompts
from neurips26.methods.unlearn import scorer as role_scorer
from neurips26.methods.unlearn.metrics import PARTS, parts_from_lm_eval
from neurips26.tasks import TASKS_DIR, evaluation

from neurips26.errors import UserError

TASKS = ["rolebench_unlearn_forget", "rolebench_unlearn_retain", "rolebench_unlearn_general"]


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("data")
    rb.build(out=root / "rolebench_unlearn")
    return root


def task_utils():
    path = TASKS_DIR / "rolebench_unlearn" / "utils.py"
    spec = importlib.util.spec_from_file_location("rolebench_unlearn_utils", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tasks_are_listed() -> None:
    known = evaluation.list_tasks()
    assert "rolebench_unlearn" in known["groups"] and set(TASKS) <= set(known["tasks"])


def test_loader_reads_only_built_folders_and_records_provenance(data_root: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    utils = task_utils()
    monkeypatch.setenv("NEURIPS26_DATA", str(tmp_path))
    with pytest.raises(UserError, match="run `neurips26 build rolebench_unlearn`"):
        utils.load_general(data={})
    assert list(tmp_path.iterdir()) == []  # nothing built
    monkeypatch.setenv("NEURIPS26_DATA", str(data_root))
    placeholder: dict = {}
    utils.load_forget_set(split="forget10", version=2.0, data=placeholder)
    manifest = data_root / "rolebench_unlearn" / "manifest.json"
    assert placeholder == {"resource": "rolebench_unlearn", "config": "forget10", "version": rb.BUILDER_VERSION,
                           "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest(), "demo": True}


def test_forget_set_from_metadata(data_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEURIPS26_DATA", str(data_root))
    utils = task_utils()
    assert len({r["role"] for r in utils.load_forget_set()["forget_test"]}) == 1  # forget05 of 20 roles
    forget10 = utils.load_forget_set(split="forget10", version=1.0)
    assert len({r["role"] for r in forget10["forget_test"]}) == 2
    doc = forget10["forget_test"][0]
    assert utils.role_prompt(doc) == prompts.role_prompt(doc["role"], doc["question"])


def test_runner_scores_the_group(data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEURIPS26_DATA", str(data_root))
    run = evaluation.run(["rolebench_unlearn"], limit=2, output=tmp_path / "out", data=data_root,
                         apply_chat_template=True, gen_kwargs="max_gen_toks=16")
    results = run.results
    for task in TASKS:
        assert results["n-samples"][task]["effective"] == 2
        metrics = {k.split(",")[0]: v for k, v in results["results"][task].items() if k.endswith(",none")}
        assert metrics["ppl"] >= 1
        assert all(0 <= v <= 1 for k, v in metrics.items() if k in PARTS and k != "ppl")
    group = results["results"]["rolebench_unlearn"]
    assert {"forget_style,none", "retain_rougeL,none", "general_rougeL,none"} <= set(group)
    parts = parts_from_lm_eval(results)
    assert set(parts) == set(PARTS) and math.isfinite(parts["ppl"])
    assert run.results_file and len(run.samples_files) == 3

    # What data each task read lands in the results file: per task, and in the run's config.
    written = json.loads(run.results_file.read_text())
    digest = hashlib.sha256((data_root / "rolebench_unlearn" / "manifest.json").read_bytes()).hexdigest()
    for task, config in (("rolebench_unlearn_forget", "forget05"), ("rolebench_unlearn_retain", "forget05"),
                         ("rolebench_unlearn_general", "general")):
        data = written["configs"][task]["metadata"]["data"]
        assert data == {"resource": "rolebench_unlearn", "config": config, "version": rb.BUILDER_VERSION,
                        "manifest_sha256": digest, "demo": True}
        assert written["config"]["neurips26_data"][task] == data
        assert written["configs"][task]["metadata"]["protocol"]["split"] == written["configs"][task]["test_split"]
        assert written["versions"][task] == 2.0

    sample = json.loads(next(p for p in run.samples_files if "forget" in p.name).read_text().splitlines()[0])
    response = prompts.cut(sample["filtered_resps"][0])
    expected = role_scorer.for_folder(data_root / "rolebench_unlearn").fidelity([response], [sample["doc"]["role"]])
    assert sample["forget_style"] == pytest.approx(expected[0], abs=1e-5)
