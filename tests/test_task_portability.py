"""The task YAMLs are portable: ``dataset_path`` names a dataset ``datasets.load_dataset`` opens (the built folder;
the Hub repo once pushed) and ``dataset_name`` one of its configs, so plain lm-eval runs a task without the
package's loader and scores it exactly as the package's run does."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import datasets
import pytest
import torch
from neurips26.corpora.locus.build import build as build_locus
from neurips26.corpora.rolebench_unlearn.build import build as build_rolebench
from neurips26.tasks import TASKS_DIR
from neurips26.tasks.protocol import task_configs

from neurips26 import settings

TASK = "locus_topic"
LIMIT = 3


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("portable-data")
    build_locus(out=root / "locus")
    build_rolebench(out=root / "rolebench_unlearn")
    return root


def test_every_task_names_a_built_folder_and_one_of_its_configs(data_root: Path) -> None:
    """dataset_path is the resource's folder name (what ``neurips26 build`` writes, what ``push`` names the repo)
    and dataset_name a config the builder writes; ``neurips26/<resource>``, which no loader opens, is gone."""
    checked = 0
    configs = task_configs(TASKS_DIR / "locus") | task_configs(TASKS_DIR / "rolebench_unlearn")
    for path, config in configs.items():
        if not isinstance(config.get("task"), str) or "group" in config:
            continue
        resource = path.parent.name
        assert config["dataset_path"] == resource, path
        if config["dataset_name"].endswith("_gold"):
            continue  # written only with --gold
        manifest = json.loads((data_root / resource / settings.MANIFEST).read_text())
        assert config["dataset_name"] in manifest["configs"], (path, config["dataset_name"])
        checked += 1
    assert checked >= 7


def test_plain_lm_eval_on_a_built_folder_scores_as_the_package(data_root: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import lm_eval
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from neurips26.models import default_model_dir

    torch.set_num_threads(1)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    # a copy of the shipped YAML, as someone without the package's loader would write it: no custom_dataset, the
    # dataset_path pointing at the built folder
    portable = tmp_path / "portable"
    portable.mkdir()
    shutil.copy(TASKS_DIR / "locus" / "utils.py", portable / "utils.py")
    text = (TASKS_DIR / "locus" / f"{TASK}.yaml").read_text()
    text = re.sub(r"^custom_dataset: .*\n", "", text, flags=re.M)
    text = re.sub(r"^dataset_path: .*$", f"dataset_path: {data_root / 'locus'}", text, count=1, flags=re.M)
    (portable / f"{TASK}.yaml").write_text(text)
    assert "custom_dataset" not in text

    model = HFLM(pretrained=str(default_model_dir()), dtype="float32", device="cpu", batch_size=1)

    def run(include: Path) -> dict:
        return lm_eval.simple_evaluate(model=model, tasks=[TASK], limit=LIMIT, log_samples=True, bootstrap_iters=0,
                                       task_manager=TaskManager(include_path=str(include), include_defaults=False))

    plain = run(portable)
    monkeypatch.setenv("NEURIPS26_DATA", str(data_root))
    package = run(TASKS_DIR)  # the package's run: its loader reads the folder under the data root

    assert plain["configs"][TASK]["dataset_path"] == str(data_root / "locus")
    assert package["configs"][TASK]["metadata"]["data"]["config"] == "topic"  # the loader recorded what it read
    assert plain["n-samples"][TASK] == package["n-samples"][TASK] == {"original": len(
        datasets.load_dataset(str(data_root / "locus"), "topic")["test"]), "effective": LIMIT}
    for metric in ("acc,none", "macro_f1,none"):
        assert plain["results"][TASK][metric] == package["results"][TASK][metric], metric
    responses = [[(s["doc_id"], s["target"], s["filtered_resps"]) for s in run["samples"][TASK]]
                 for run in (plain, package)]
    assert responses[0] == responses[1] and len(responses[0]) == LIMIT
