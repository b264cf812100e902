"""Helpers for the leaderboard tests: a task folder with protocols, and runs derived from real lm-eval files."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import yaml
from neurips26.leaderboard.metrics import METRICS
from neurips26.tasks import TASKS_DIR

from neurips26.hubfolder import read_table

REVISION = "0123456789abcdef0123456789abcdef01234567"

PROTOCOLS = {
    "locus_domain": {"split": "test", "num_fewshot": 0, "fewshot_split": "train", "chat_template": True,
                     "metric": "acc", "higher_is_better": True, "baseline": "majority", "range": [0, 1]},
    "locus_catchline": {"split": "test", "num_fewshot": 0, "fewshot_split": "train", "chat_template": True,
                        "metric": "rougeL", "higher_is_better": True, "baseline": 0, "range": [0, 1],
                        "generation": {"until": ["\n"], "do_sample": False, "max_gen_toks": 32}},
}


def protocol_tasks(folder: Path, groups: dict[str, list[str]] | None = None,
                   protocols: dict[str, dict[str, Any]] | None = None) -> Path:
    """A task folder holding the shipped LOCUS task YAMLs named in ``groups`` (default: locus = domain +
    catchline), each with its ``metadata.protocol`` replaced by ``protocols[task]`` (none when absent), one group
    YAML per group and the tasks' ``utils.py``."""
    groups = groups or {"locus": ["locus_domain", "locus_catchline"]}
    protocols = PROTOCOLS if protocols is None else protocols
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(TASKS_DIR / "locus" / "utils.py", folder / "utils.py")
    for group, members in groups.items():
        for task in members:
            text = (TASKS_DIR / "locus" / f"{task}.yaml").read_text()
            text = re.sub(r"^  protocol:\n(?:    .*\n)*", "", text, flags=re.M)  # the shipped one: replaced below
            if task in protocols:
                block = yaml.safe_dump({"protocol": protocols[task]}, default_flow_style=True, width=10_000)
                text = text.rstrip() + "\n  " + block.strip()[1:-1].replace("protocol: ", "protocol: ", 1) + "\n"
            (folder / f"{task}.yaml").write_text(text)
        (folder / f"_{group}.yaml").write_text(yaml.safe_dump({"group": group, "task": members,
                                                                "metadata": {"version": 1.0}}))
    return folder


def meta(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {"model_id": "HuggingFaceTB/SmolLM2-135M-Instruct", "revision": REVISION, "precision": "float32",
            "params": data["config"]["model_num_parameters"], "license": "apache-2.0",
            "model_type": "instruction-tuned", "submitter": "alice", **changes}


def dump(data: dict[str, Any]) -> bytes:
    return json.dumps(data, indent=2).encode()


def variant(data: dict[str, Any], run: int = 0) -> dict[str, Any]:
    """A copy of a results dict; ``run`` changes its date, as another run of lm-eval would."""
    data = copy.deepcopy(data)
    data["date"] = data["date"] + run
    return data


def split_size(folder: Path, config: str, split: str = "test") -> int:
    """The number of documents of ``split`` of ``config`` in the built folder ``folder`` (what a complete run of
    the config's task evaluates)."""
    table = read_table(folder, config, split=split)
    assert table is not None, f"{folder} has no {config}/{split} split"
    return table.num_rows


def complete(data: dict[str, Any], manifest_sha256: str = "0" * 64) -> dict[str, Any]:
    """A copy of a ``--limit`` run's results made complete: no limit, every counted document evaluated (the split
    is the documents evaluated) and the data provenance the task loader records (read from data of manifest sha256
    ``manifest_sha256``, not the demo sample)."""
    data = copy.deepcopy(data)
    data["config"]["limit"] = None
    for task, counts in data["n-samples"].items():
        counts["original"] = counts["effective"]
        metadata = data["configs"][task].setdefault("metadata", {})
        metadata["data"] = {"resource": "locus", "config": task.removeprefix("locus_"), "version": "1.0.0",
                            **(metadata.get("data") or {}), "manifest_sha256": manifest_sha256, "demo": False}
    return data


def lettered_answer(gold: int, options: int, right: bool) -> int:
    """The option a lettered-option answerer picks: the gold one when ``right``, else the first other one (the
    argmax of :func:`fabricate`'s loglikelihoods, the first of the tied highest as lm-eval's scorer takes it)."""
    return gold if right else next(j for j in range(options) if j != gold)


def fabricate(folder: Path, template: dict[str, Any], samples: dict[str, Path], correct: dict[str, list[bool]],
              run: int = 0, digest: str = "0" * 64, hashes: str = "doc") -> tuple[Path, list[Path]]:
    """A complete run whose samples agree with its scores: document ``i`` of each task in ``correct`` is the
    real document ``i % 2`` under doc hash ``<hashes><i>`` (a multiple-choice document's gold option is
    ``i % options``), read from data of manifest sha256 ``digest``; its responses are right (or wrong) as
    ``correct`` says (multiple choice: the gold option's loglikelihood highest or lowest; generation: the
    heading or "zzz"). Every metric the task reports is recorded per document and aggregated as the task does: a
    mean with its standard error, or a corpus-level aggregate (macro-F1 of the (gold, predicted) pairs) with
    lm-eval's "N/A" stderr.
    ``run`` varies the responses without changing any score, as another model's run would."""
    data = complete(template, digest)
    for task in list(data["results"]):
        if task not in correct:
            for key in ("results", "configs", "versions", "n-shot", "n-samples", "higher_is_better", "task_hashes"):
                data.get(key, {}).pop(task, None)
    data["date"] = data["date"] + run
    files = []
    folder.mkdir(parents=True, exist_ok=True)
    for task, marks in correct.items():
        real_rows = [json.loads(line) for line in samples[task].read_text().splitlines() if line.strip()]
        rows = []
        for i, right in enumerate(marks):
            row = copy.deepcopy(real_rows[i % len(real_rows)])
            row["doc_id"], row["doc_hash"] = i, f"{hashes}{i}"
            if task == "locus_domain":
                gold, scale = i % len(row["filtered_resps"]), 1 + run / 1000
                row["target"], row["doc"]["label"] = str(gold), gold
                row["filtered_resps"] = [[str((-1.0 if (j == gold) == right else -100.0) * scale), "False"]
                                         for j in range(len(row["filtered_resps"]))]
                row["resps"] = [[resp] for resp in row["filtered_resps"]]
                row.pop("acc_norm", None)  # the lettered-option tasks report acc and macro_f1
                row["acc"] = float(right)
                row["macro_f1"] = [gold, lettered_answer(gold, len(row["filtered_resps"]), right)]
            else:
                text = (row["doc"]["heading"] if right else "zzz") + " " * run
                row["filtered_resps"], row["resps"] = [text], [[text]]
                row["exact_match"] = row["rougeL"] = float(right)
            rows.append(row)
        n = len(rows)
        reported = [key.split(",")[0] for key in data["results"][task] if key.endswith(",none")
                    and not key.split(",")[0].endswith("_stderr")]
        for metric in reported:
            values = [r[metric] for r in rows]
            aggregate = METRICS.info(metric).get("aggregate")
            if aggregate is not None:  # corpus-level: lm-eval records no stderr for a !function aggregation
                data["results"][task][f"{metric},none"] = aggregate(values)
                data["results"][task][f"{metric}_stderr,none"] = "N/A"
                continue
            mean = sum(values) / n
            data["results"][task][f"{metric},none"] = mean
            data["results"][task][f"{metric}_stderr,none"] = (sum((v - mean) ** 2 for v in values) / (n - 1) / n) ** .5
        data["n-samples"][task] = {"original": n, "effective": n}
        path = folder / f"samples_{task}_2026-01-01T00-00-00.000000.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        files.append(path)
    results = folder / "results_2026-01-01T00-00-00.000000.json"
    results.write_bytes(dump(data))
    return results, files


def real_run(root: Path) -> dict[str, Any]:
    """A real lm-eval run of the embedded model on locus_catchline and locus_domain (``--limit 2``, demo build),
    and the same run made complete (see :func:`complete`): ``file``/``data`` the complete results, ``limited``
    the run's own results, ``samples`` its samples files by task."""
    import hashlib

    from neurips26.corpora.locus.build import build as build_locus
    from neurips26.tasks import evaluation

    build_locus(out=root / "data" / "locus")
    import os

    before = os.environ.get("NEURIPS26_DATA")
    try:
        run = evaluation.run(["locus_catchline", "locus_domain"], limit=2, output=root / "results", data=root / "data")
    finally:  # run() sets NEURIPS26_DATA; keep it out of other tests
        if before is None:
            os.environ.pop("NEURIPS26_DATA", None)
        else:
            os.environ["NEURIPS26_DATA"] = before
    # the complete run claims a split of the 2 documents evaluated: a digest of its own, so that no built folder
    # (the demo build is byte-identical everywhere) is taken for the data it read
    manifest = hashlib.sha256(b"complete " + (root / "data" / "locus" / "manifest.json").read_bytes()).hexdigest()
    limited = json.loads(run.results_file.read_text())
    data = complete(limited, manifest)
    path = root / "complete" / run.results_file.name
    path.parent.mkdir()
    path.write_bytes(dump(data))
    return {"file": path, "data": data, "limited": limited, "data_root": root / "data",
            "samples": {task: next(p for p in run.samples_files if p.name.startswith(f"samples_{task}_"))
                        for task in ("locus_catchline", "locus_domain")}}
