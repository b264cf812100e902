"""lm-eval tasks: real lm-eval runs on the embedded model, the domain mapping and the splits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus import evalsets
from neurips26.corpora.locus.domains import domain_of_path, domains_of_heading
from neurips26.corpora.rolebench_unlearn import build as rolebench_unlearn
from neurips26.tasks import TASKS_DIR

TASKS = ["locus_domain", "locus_catchline"]


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("data")
    locus.build(out=root / "locus")
    rolebench_unlearn.build(out=root / "rolebench_unlearn")  # the neurips26 group reads it; tasks never build
    return root


@pytest.fixture(scope="module")
def model_dir() -> Path:
    from neurips26.models import default_model_dir

    return default_model_dir()  # the real embedded SmolLM2 file, converted once and cached


def check_results_file(path: Path, tasks: list[str]) -> dict:
    """The layout the leaderboard reads: lm-eval 0.4 results with versions, configs and n-samples."""
    results = json.loads(path.read_text())
    for key in ("results", "configs", "versions", "n-samples", "config", "lm_eval_version", "higher_is_better"):
        assert key in results, key
    for task in tasks:
        assert task in results["results"] and task in results["configs"]
        assert results["versions"][task] == 2.0  # the lettered-option, protocol-carrying LOCUS tasks
        assert results["n-samples"][task]["effective"] == 2
        metrics = results["results"][task]
        values = [v for k, v in metrics.items() if "," in k and "_stderr" not in k]
        assert values and all(0.0 <= v <= 1.0 for v in values)
        assert all(f"{k.split(',')[0]}_stderr,{k.split(',')[1]}" in metrics
                   for k in metrics if "," in k and "_stderr" not in k)
    return results


def test_lm_eval_cli_with_include_path(data_root: Path, model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "lm_eval", "run", "--include_path", str(TASKS_DIR), "--tasks", "neurips26",
           "--model", "hf", "--model_args", f"pretrained={model_dir}", "--device", "cpu", "--limit", "2",
           "--output_path", str(out), "--log_samples"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                            env={**os.environ, "NEURIPS26_DATA": str(data_root)})
    assert result.returncode == 0, result.stderr[-3000:]
    results_file = next(out.rglob("results_*.json"))
    results = check_results_file(results_file, TASKS)
    assert "neurips26" in results["results"] and "locus" in results["results"]  # the groups are reported
    assert not any(k.endswith(",none") for k in results["results"]["neurips26"])  # no average of unlike metrics
    data = results["configs"]["rolebench_unlearn_general"]["metadata"]["data"]  # lm_eval's own CLI records it too
    assert data["resource"] == "rolebench_unlearn" and data["config"] == "general" and data["demo"] is True
    for task in TASKS:
        samples = next(out.rglob(f"samples_{task}_*.jsonl")).read_text().splitlines()
        assert len(samples) == 2


def test_neurips26_eval_runner(data_root: Path, model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "neurips26.cli", "eval", "--tasks", ",".join(TASKS), "--limit", "2",
           "--output", str(out), "--data", str(data_root)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                            env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "locus_domain" in result.stdout and "rougeL" in result.stdout
    results_file = next(out.rglob("results_*.json"))
    results = check_results_file(results_file, TASKS)
    assert len(list(out.rglob("samples_*.jsonl"))) == 2
    # filed under the model's id; the embedded chat model prompted through its own template by default (as the
    # LOCUS protocols say), the choice recorded with its reason
    assert results_file.parent == out / "HuggingFaceTB__SmolLM2-135M-Instruct"
    assert results["model_name"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    choice = results["config"]["neurips26_chat_template"]
    assert choice["applied"] is True and "is instruction-tuned" in choice["reason"]
    assert "has it off" not in choice["reason"]  # the standard run: it can be ranked
    assert results.get("chat_template")  # lm-eval records the template it applied


@pytest.mark.parametrize(("tasks", "model", "applied", "why"), [
    (["locus_domain"], "HuggingFaceTB/SmolLM2-135M-Instruct", True, "is instruction-tuned"),
    (["rolebench_unlearn"], "HuggingFaceTB/SmolLM2-135M-Instruct", True, "is instruction-tuned"),
    (["rolebench_unlearn"], "org/base-model", True, "say chat template on"),
    (["locus_domain"], "org/base-model", True, "say chat template on"),
    (["neurips26"], "org/Base-7B", True, "say chat template on"),  # LOCUS and RoleBench agree
])
def test_chat_template_default(tasks: list[str], model: str, applied: bool, why: str) -> None:
    from neurips26.tasks.evaluation import chat_template_choice

    on, reason = chat_template_choice(tasks, model, model)
    assert on is applied and why in reason


def test_embedded_model_gets_its_chat_template_by_default(model_dir: Path) -> None:
    """The embedded model's converted folder has a chat template, so a run applies it unless told otherwise."""
    from neurips26.tasks.evaluation import chat_template_choice

    from neurips26.models import DEFAULT_MODEL_ID

    assert json.loads((model_dir / "tokenizer_config.json").read_text()).get("chat_template") or \
        (model_dir / "chat_template.jinja").is_file()
    on, reason = chat_template_choice(["locus_domain"], str(model_dir), DEFAULT_MODEL_ID)
    assert on is True and "--no-apply-chat-template" in reason


def test_eval_rejects_unknown_task_in_one_line() -> None:
    result = subprocess.run([sys.executable, "-m", "neurips26.cli", "eval", "--tasks", "nosuch"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "unknown task(s) nosuch" in result.stderr
    assert "Traceback" not in result.stderr


def test_tasks_command_lists_our_tasks() -> None:
    result = subprocess.run([sys.executable, "-m", "neurips26.cli", "tasks"], capture_output=True, text=True,
                            timeout=300, env={**os.environ, "COLUMNS": "300"})
    assert result.returncode == 0, result.stderr
    assert str(TASKS_DIR) in result.stdout
    for name in ["neurips26", "locus", *TASKS]:
        assert name in result.stdout


@pytest.mark.parametrize("path, expected", [
    (["PART II - CODE OF ORDINANCES", "Chapter 8 - ANIMALS[1]", "ARTICLE I. - IN GENERAL"], "animals"),
    (["Chapter 4 - ALCOHOLIC BEVERAGES", "ARTICLE II. - LICENSES"], "business licensing"),  # innermost wins
    (["Chapter 47 - ZONING"], "zoning"),
    (["Chapter 2 - ADMINISTRATION", "ARTICLE III. - OFFICERS AND EMPLOYEES"], "personnel"),
    (["Title 5 – Business Licenses"], "business licensing"),
    (["Chapter 12 - BUSINESS LICENSES AND TAXES"], None),  # two domains: ambiguous, left out
    (["Chapter 1 - GENERAL PROVISIONS"], None),  # no domain
    ([], None),
])
def test_domain_mapping(path: list[str], expected: str | None) -> None:
    assert domain_of_path(path) == expected


def test_heading_footnotes_do_not_leak_domains() -> None:
    assert domains_of_heading("Chapter 2 - ADMINISTRATION[1] Footnotes: --- (1) --- State Law reference— taxes") \
        == set()


def test_splits_and_labels_on_real_locus(real_locus: Path, tmp_path: Path) -> None:
    out = tmp_path / "locus"
    locus.build(raw=real_locus, out=out)
    seen: dict[str, str] = {}
    counts: dict[str, int] = {}
    for split in evalsets.SPLITS:
        for config in ("domain", "catchline"):
            rows = pq.read_table(list((out / "data" / config).glob(f"{split}-*.parquet"))).to_pylist()
            assert rows, (config, split)
            for row in rows:
                assert seen.setdefault(row["jurisdiction_id"], split) == split, "jurisdiction crosses splits"
                if config == "domain":
                    counts[row["domain"]] = counts.get(row["domain"], 0) + 1
                    assert row["choices"][row["label"]] == row["domain"] and len(set(row["choices"])) == 4
    print("domain label counts on the real sample:", dict(sorted(counts.items(), key=lambda kv: -kv[1])))
    assert len(counts) >= 6 and min(counts.values()) >= 1
    card = (out / "README.md").read_text()
    assert "Domain labels in this build:" in card and next(iter(counts)) in card
