"""TAR and CLoVR lm-eval tasks end to end with a tiny randomly initialised VLM (hf-multimodal, CPU)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("av")

from neurips26.corpora.clovr import build as clovr  # noqa: E402
from neurips26.corpora.tar import build as tar  # noqa: E402
from neurips26.tasks import TASKS_DIR  # noqa: E402

TAR_TASKS = [f"tar_{name}" for name in ("bcq", "mcq", "bcq_openended", "mcq_openended", "open_qa", "causal_linkage",
                                         "temporal_description", "temporal_localization", "scene_description",
                                         "object_description")]
CLOVR_TASKS = ["clovr_comparative_analysis", "clovr_tracking_retrieval", "clovr_integrated_reasoning"]


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built tar and clovr folders, found by the tasks through NEURIPS26_DATA."""
    raws = tmp_path_factory.getbasetemp() / "video-raw"
    root = tmp_path_factory.mktemp("video-data")
    tar.build(raw=tar.default_raw(root=raws), out=root / "tar")
    clovr.build(raw=clovr.default_raw(root=raws), out=root / "clovr")
    return root


@pytest.fixture(scope="module")
def vlm() -> Path:
    from neurips26.corpora.video.tiny_vlm import tiny_vlm

    return tiny_vlm()


def utils(resource: str):
    spec = importlib.util.spec_from_file_location(f"{resource}_task_utils", TASKS_DIR / resource / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lm_eval_cli_runs_the_video_group(data_root: Path, vlm: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "lm_eval", "run", "--include_path", str(TASKS_DIR), "--tasks", "neurips26_video",
           "--model", "hf-multimodal", "--model_args", f"pretrained={vlm}", "--device", "cpu", "--limit", "1",
           "--batch_size", "16",
           "--metadata", json.dumps({"num_frames": 4}), "--gen_kwargs", "max_gen_toks=4",
           "--output_path", str(out), "--log_samples"]
    env = {**os.environ, "NEURIPS26_DATA": str(data_root), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(tmp_path / "hf")}
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads(next(out.rglob("results_*.json")).read_text())
    for task in TAR_TASKS + CLOVR_TASKS:
        assert results["n-samples"][task]["effective"] == 1
        assert results["configs"][task]["metadata"]["num_frames"] == 4  # the frame budget, recorded
        metadata = results["configs"][task]["metadata"]
        assert metadata["selector"] == "uniform" and metadata["version"] == 2.0
        resource = task.split("_")[0]
        manifest = data_root / resource / "manifest.json"
        assert metadata["data"] == {"resource": resource, "config": "annotations" if resource == "tar" else "questions",
                                    "version": "1.0.0", "demo": True,  # a generated release
                                    "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest()}
        protocol = metadata["protocol"]
        assert protocol["split"] == "test" and protocol["chat_template"] is True
        assert f"{protocol['metric']},none" in results["results"][task]
        assert protocol["task_metadata"] == {"num_frames": 8, "selector": "uniform", "selections": None}
        values = [v for k, v in results["results"][task].items() if "," in k and "_stderr" not in k]
        assert values and all(0.0 <= v <= 1.0 for v in values)
    # TAR's tasks have unlike metrics, so its group has no aggregate; CLoVR's all score accuracy
    assert not any("," in k for k in results["results"]["tar"]) and "acc,none" in results["results"]["clovr"]
    assert set(results["results"]["tar_temporal_localization"]) >= {"miou,none", "recall@0.5,none", "score,none"}
    sample = json.loads(next(out.rglob("samples_tar_mcq_2*.jsonl")).read_text().splitlines()[0])
    prompt = sample["arguments"]["gen_args_0"]["arg_0"]
    assert prompt.count("<image>") == 4 and "The best answer is:" in prompt
    sample = json.loads(next(out.rglob("samples_clovr_tracking_retrieval_2*.jsonl")).read_text().splitlines()[0])
    prompt = sample["arguments"]["gen_args_0"]["arg_0"]
    assert prompt.count("<image>") == 4 and "Video 3:" in prompt  # 4 frames over 3 videos: 2 + 1 + 1


def test_simple_evaluate_with_chat_template(data_root: Path, vlm: Path, monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    import lm_eval
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("NEURIPS26_DATA", str(data_root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata={"num_frames": 2})
    results = lm_eval.simple_evaluate(
        model="hf-multimodal", model_args={"pretrained": str(vlm)}, tasks=["tar_mcq", "clovr_integrated_reasoning"],
        device="cpu", limit=1, task_manager=manager, apply_chat_template=True, gen_kwargs="max_gen_toks=4",
        log_samples=True)
    assert results["configs"]["tar_mcq"]["metadata"]["num_frames"] == 2
    prompt = results["samples"]["tar_mcq"][0]["arguments"][0][0]
    assert prompt.startswith("<|im_start|>User:") and prompt.count("<image>") == 2


def test_every_document_has_one_frame_per_placeholder(data_root: Path, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.setenv("NEURIPS26_DATA", str(data_root))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    tar_utils, clovr_utils = utils("tar"), utils("clovr")
    docs = [doc for t in ("mcq", "temporal_localization", "scene_description")
            for doc in tar_utils.load_tar(t, num_frames=3)["test"]]
    docs += list(clovr_utils.load_clovr("Comparative Analysis", num_frames=5)["test"])
    for doc in docs:
        module = tar_utils if "task_type" in doc else clovr_utils
        images = module.doc_to_image(doc)
        assert module.doc_to_text(doc).count("<image>") == len(images) == (3 if "task_type" in doc else 5)
        assert images[0].mode == "RGB" and images[0].size == (160, 96)


def test_process_results_score_exactly(data_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEURIPS26_DATA", str(data_root))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    tar_utils, clovr_utils = utils("tar"), utils("clovr")
    mcq = tar_utils.load_tar("mcq")["test"][0]
    assert tar_utils.process_results(mcq, [f"The best answer is {mcq['answer']}."]) == {"acc": 1.0, "score": 1.0}
    loc = tar_utils.load_tar("temporal_localization")["test"][0]
    perfect = tar_utils.process_results(loc, [f"{loc['start']}-{loc['end']}"])
    assert perfect == {"miou": 1.0, "recall@0.3": 1.0, "recall@0.5": 1.0, "recall@0.7": 1.0, "score": 1.0}
    assert tar_utils.process_results(loc, ["I cannot tell"])["score"] == 0.0
    text = tar_utils.load_tar("open_qa")["test"][0]
    assert tar_utils.process_results(text, [text["answer"]]) == {"rougeL": 1.0, "score": 1.0}
    question = clovr_utils.load_clovr("Integrated Reasoning")["test"][0]
    wrong = "ABCD".replace(question["answer"], "")[0]
    assert clovr_utils.process_results(question, [question["answer"]]) == {"acc": 1.0}
    assert clovr_utils.process_results(question, [wrong]) == {"acc": 0.0}


def test_embedded_videos_are_served_from_the_cache(tmp_path_factory: pytest.TempPathFactory,
                                                   monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    root = tmp_path / "data"
    tar.build(raw=tar.default_raw(root=tmp_path_factory.getbasetemp() / "video-raw"), out=root / "tar",
              embed_videos=True)
    monkeypatch.setenv("NEURIPS26_DATA", str(root))
    monkeypatch.setenv("NEURIPS26_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    tar_utils = utils("tar")
    doc = tar_utils.load_tar("bcq", num_frames=2)["test"][0]
    assert doc["video_path"].startswith(str(tmp_path / "cache" / "videos"))
    assert len(tar_utils.doc_to_image(doc)) == 2


def task_yamls() -> dict[str, dict]:
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    out = {}
    for folder in ("tar", "clovr"):
        template = yaml.load((TASKS_DIR / folder / "_template_yaml").read_text(), Loader)
        out[f"{folder}/_template_yaml"] = template
        for path in sorted((TASKS_DIR / folder).glob(f"{folder}_*.yaml")):
            out[path.stem] = {**template, **yaml.load(path.read_text(), Loader)}  # lm-eval's include: top-level keys
    return out


def test_every_video_task_states_its_protocol() -> None:
    configs = task_yamls()
    assert set(TAR_TASKS + CLOVR_TASKS) <= set(configs)
    for name, config in configs.items():
        metadata = config["metadata"]
        protocol = metadata["protocol"]
        assert metadata["version"] == 2.0 and metadata["data"] == {}, name
        assert protocol["split"] == config["test_split"] == "test" and protocol["num_fewshot"] == 0, name
        assert protocol["fewshot_split"] is None and protocol["chat_template"] is True, name
        assert protocol["range"] == [0, 1] and protocol["higher_is_better"] is True, name
        assert protocol["task_metadata"] == {"num_frames": metadata["num_frames"], "selector": metadata["selector"],
                                             "selections": None}, name
        generation = {**config["generation_kwargs"], "until": list(config["generation_kwargs"]["until"])}
        assert protocol["generation"] == generation, name
        if name.endswith("_template_yaml"):
            continue
        metrics = {m["metric"] for m in config["metric_list"]}
        assert protocol["metric"] in metrics, name
        choice = name.startswith("clovr") or name in ("tar_bcq", "tar_mcq")
        # multiple choice ranks against the majority class; open-ended answers against the best answerer that knows
        # nothing, measured on the split (recorded in baseline_from)
        if choice:
            assert protocol["baseline"] == "majority", name
        else:
            assert isinstance(protocol["baseline"], float | int) and 0 <= protocol["baseline"] <= 1, name
            assert protocol["baseline_from"]["scores"][protocol["baseline_from"]["answerer"]] == protocol["baseline"]
    assert configs["tar_temporal_localization"]["metadata"]["protocol"]["metric"] == "miou"
    assert configs["tar_open_qa"]["metadata"]["protocol"]["metric"] == "rougeL"


def test_groups_average_only_like_metrics() -> None:
    import yaml

    tar_group = yaml.safe_load((TASKS_DIR / "tar" / "_tar.yaml").read_text())
    clovr_group = yaml.safe_load((TASKS_DIR / "clovr" / "_clovr.yaml").read_text())
    video_group = yaml.safe_load((TASKS_DIR / "_neurips26_video.yaml").read_text())
    assert "aggregate_metric_list" not in tar_group and "aggregate_metric_list" not in video_group
    assert [m["metric"] for m in clovr_group["aggregate_metric_list"]] == ["acc"]


def test_loaders_read_built_folders_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neurips26.errors import UserError

    monkeypatch.setenv("NEURIPS26_DATA", str(tmp_path / "empty"))
    monkeypatch.setenv("NEURIPS26_CACHE", str(tmp_path / "cache"))
    with pytest.raises(UserError, match="run `neurips26 build tar"):
        utils("tar").load_tar("mcq")
    with pytest.raises(UserError, match="run `neurips26 build clovr"):
        utils("clovr").load_clovr("Integrated Reasoning")
    assert not (tmp_path / "empty").exists() and not (tmp_path / "cache").exists()  # nothing was built


def test_loaders_record_the_data_they_read(data_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEURIPS26_DATA", str(data_root))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    data: dict = {}
    utils("clovr").load_clovr("Integrated Reasoning", num_frames=2, data=data, version=2.0)
    manifest = (data_root / "clovr" / "manifest.json").read_bytes()
    assert data == {"resource": "clovr", "config": "questions", "version": "1.0.0", "demo": True,
                    "manifest_sha256": hashlib.sha256(manifest).hexdigest()}  # a generated release: invented data
    assert json.loads(manifest)["demo"] is True


def test_constant_and_empty_answers_score_at_most_the_baseline(data_root: Path, monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.setenv("NEURIPS26_DATA", str(data_root))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    tar_utils, clovr_utils = utils("tar"), utils("clovr")
    configs = task_yamls()
    for task in TAR_TASKS + CLOVR_TASKS:
        protocol = configs[task]["metadata"]["protocol"]
        module = tar_utils if task.startswith("tar") else clovr_utils
        kwargs = configs[task]["dataset_kwargs"]
        docs = list((module.load_tar if module is tar_utils else module.load_clovr)(num_frames=1, **kwargs)["test"])
        metric = protocol["metric"]
        if protocol["baseline"] == "majority":
            golds = [d["answer"] for d in docs]
            majority = max(golds.count(g) for g in set(golds)) / len(golds)
            for letter in "ABCD":  # a constant answerer
                score = sum(module.process_results(d, [letter])[metric] for d in docs) / len(docs)
                assert score <= majority + 1e-9, (task, letter)
        else:  # open-ended: an empty answer scores at most the measured baseline
            empty = sum(module.process_results(d, [""])[metric] for d in docs) / len(docs)
            assert empty <= protocol["baseline"] + 1e-9, task
