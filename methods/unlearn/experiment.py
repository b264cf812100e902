"""One baseline end to end: load the model, unlearn the split's target roles, evaluate, write the results.

Output, under ``<out>/<split>/<method>/``: ``adapter/`` (LoRA) or ``model/`` (full weights) for trained
methods, ``system_prompt.txt`` for the refusal baseline, ``evaluation.json`` (settings, parts, combined score,
scorer accuracy, training log, RoleMoE's routing statistics), ``samples.jsonl`` (every response with its
measures) and ``lm_eval/`` (the same evaluation as lm-eval results and samples files, see ``results_files``).
The reference evaluation (``<out>/<split>/reference``) is reused when its model, data and settings match.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from neurips26 import models
from neurips26.hubfolder import built_folder
from neurips26.settings import MANIFEST

from . import data, evaluate, metrics, prompts, results_files, train
from .methods import UNLEARNING_METHODS
from .rolemoe import routing

RESOURCE = "rolebench_unlearn"


@dataclass
class Result:
    method: str
    split: str
    parts: dict[str, float]
    combined: dict[str, float] | None
    train_seconds: float
    evaluation: evaluate.Evaluation
    folder: Path
    routing: dict | None = None

    def row(self) -> dict:
        return {"method": self.method, **self.parts, **(self.combined or {}), "train_s": self.train_seconds,
                "eval_s": self.evaluation.generate_seconds + self.evaluation.score_seconds}


def dataset(data_dir: Path | None = None) -> Path:
    """The built RoleBench-Unlearn folder: ``data_dir`` itself or ``data_dir/rolebench_unlearn``; default
    ``<data root>/rolebench_unlearn`` as for the lm-eval tasks. Never builds: a missing folder is a UserError
    naming the command to run."""
    if data_dir is not None and (Path(data_dir) / MANIFEST).is_file():
        return Path(data_dir)
    return built_folder(RESOURCE, data_dir)


def targets(folder: Path, split: str) -> list[str]:
    """The target roles of a forget set."""
    import datasets

    roles = datasets.load_dataset(str(folder), "roles", split="train").to_list()
    return [r["role"] for r in sorted(roles, key=lambda r: r["rank"]) if split in r["forget_splits"]]


def settings_key(model: str, folder: Path, split: str, eval_cfg: evaluate.EvalConfig) -> str:
    """What an evaluation depends on besides the method: model, data, split and evaluation settings."""
    manifest = hashlib.sha256((folder / MANIFEST).read_bytes()).hexdigest()
    return hashlib.sha256(json.dumps([model, manifest, split, asdict(eval_cfg)]).encode()).hexdigest()[:16]


def run(method_name: str, split: str = "forget05", model_path: str | None = None, folder: Path | None = None,
        out: Path = Path("unlearn"), train_cfg: train.TrainConfig | None = None,
        eval_cfg: evaluate.EvalConfig | None = None, device: str | None = None,
        reference: dict[str, float] | None = None, progress: Callable[[str], None] | None = None) -> Result:
    """Unlearn ``split``'s target roles with one baseline, evaluate, and write everything under ``out``."""
    method = UNLEARNING_METHODS.get(method_name)
    train_cfg, eval_cfg = train_cfg or train.TrainConfig(), eval_cfg or evaluate.EvalConfig()
    folder = folder or dataset()
    model_name = str(model_path or models.default_model_dir())
    say = progress or (lambda _: None)
    say(f"{method.name}: loading {model_name}")
    model, tokenizer = train.load_model(model_name, device)
    system = prompts.refusal_instruction(targets(folder, split)) if method.refuses else ""

    start = time.perf_counter()
    if method.trains:
        say(f"{method.name}: training {train_cfg.steps} steps")
        forget = data.examples(data.load_rows(folder, split, "forget_train"))
        retain = data.examples(data.load_rows(folder, split, "retain_train"))
        model, original, log = train.run(model, tokenizer, method, forget, retain, train_cfg)
    else:
        original, log = train.Original(model), []
    train_seconds = time.perf_counter() - start
    report = routing_report(model, folder)

    evaluation = evaluate.evaluate(model, tokenizer, folder, split, original, system, eval_cfg,
                                   progress=lambda m: say(f"{method.name}: {m}"))
    if method.name == "reference":
        reference = evaluation.parts
    combined = metrics.combined(evaluation.parts, reference) if reference else None

    target = Path(out) / split / method.name
    target.mkdir(parents=True, exist_ok=True)
    if method.trains:
        train.save(model, tokenizer, target, train_cfg)
    if system:
        (target / "system_prompt.txt").write_text(system, encoding="utf-8")
    payload = {
        "method": method.name, "summary": method.summary, "split": split, "model": model_name,
        "data": str(folder), "settings_key": settings_key(model_name, folder, split, eval_cfg),
        "train": asdict(train_cfg) if method.trains else None, "eval": asdict(eval_cfg),
        "parts": evaluation.parts, "reference_parts": reference, "combined": combined,
        "scorer": evaluation.scorer, "counts": evaluation.counts, "train_seconds": train_seconds,
        "generate_seconds": evaluation.generate_seconds, "score_seconds": evaluation.score_seconds,
        "train_log": log, "routing": report,
    }
    (target / "evaluation.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    with (target / "samples.jsonl").open("w", encoding="utf-8") as fh:
        for sample in evaluation.samples:
            fh.write(json.dumps(sample, ensure_ascii=False) + "\n")
    args = model_args(method, model_name, target, train_cfg)
    results_files.write(target / "lm_eval", folder, split, evaluation, tokenizer, args,
                        sum(p.numel() for p in model.parameters()), system, eval_cfg)
    return Result(method.name, split, evaluation.parts, combined, train_seconds, evaluation, target, report)


def model_args(method, model_name: str, target: Path, train_cfg: train.TrainConfig) -> dict[str, str]:
    """lm-eval's ``model_args`` of the evaluated model: the base model and the written adapter or weights."""
    if not method.trains:
        return {"pretrained": model_name}
    if method.fit is not None:
        return {"pretrained": model_name, method.name: str(target / "adapter")}
    if train_cfg.lora:
        return {"pretrained": model_name, "peft": str(target / "adapter")}
    return {"pretrained": str(target / "model")}


def routing_report(model, folder: Path) -> dict | None:
    """A RoleMoE model's routing statistics, with the experts that each forget set's target roles route to."""
    report = getattr(model, "report", None)
    if report is None:
        return None
    forget_sets = {}
    for name in data.FORGET_SETS:
        chosen = targets(folder, name)
        forget_sets[name] = {"targets": chosen, "experts": routing.touched(report["trained"], chosen)}
    return {**report, "forget_sets": forget_sets}


def routing_table(report: dict) -> str:
    """Routing statistics as a Markdown table: untrained against trained router, and the experts per forget set."""
    lines = ["| router | I(role; expert) / H(role) | bound | overlap between roles | expert usage |",
             "|---|---:|---:|---:|---|"]
    for name in ("untrained", "trained"):
        stats = report[name]
        lines.append(f"| {name} | {stats['mi_ratio']:.3f} | {stats['mi_bound']:.3f} | {stats['overlap']:.3f} | "
                     + " ".join(f"{u:.2f}" for u in stats["usage"]) + " |")
    lines += ["", "| forget set | targets | experts they route to |", "|---|---:|---|"]
    lines += [f"| {name} | {len(info['targets'])} | {', '.join(map(str, info['experts']))} |"
              for name, info in report["forget_sets"].items()]
    return "\n".join(lines) + "\n"


def reference_parts(split: str, model_path: str | None, folder: Path, out: Path, eval_cfg: evaluate.EvalConfig,
                    device: str | None = None, progress: Callable[[str], None] | None = None) -> dict[str, float]:
    """The reference's parts: from ``<out>/<split>/reference/evaluation.json`` when its settings match, else run."""
    model_name = str(model_path or models.default_model_dir())
    saved = Path(out) / split / "reference" / "evaluation.json"
    if saved.is_file():
        payload = json.loads(saved.read_text(encoding="utf-8"))
        if payload.get("settings_key") == settings_key(model_name, folder, split, eval_cfg):
            return payload["parts"]
    return run("reference", split, model_path, folder, out, eval_cfg=eval_cfg, device=device,
               progress=progress).parts


def saved_row(out: Path, split: str, method: str) -> dict:
    """The table row of a written evaluation."""
    payload = json.loads((Path(out) / split / method / "evaluation.json").read_text(encoding="utf-8"))
    return {"method": method, **payload["parts"], **(payload["combined"] or {}), "train_s": payload["train_seconds"],
            "eval_s": payload["generate_seconds"] + payload["score_seconds"]}


HEADERS = {"forget_style": "forget style", "forget_rougeL": "forget R-L", "retain_style": "retain style",
           "retain_rougeL": "retain R-L", "general_rougeL": "general R-L", "ppl": "ppl", "forgetting": "F",
           "retention": "R", "utility": "U", "score": "score", "train_s": "train s", "eval_s": "eval s"}


def markdown_table(rows: list[dict]) -> str:
    """The results as a Markdown table (parts, F/R/U, combined score, seconds)."""
    lines = ["| method | " + " | ".join(HEADERS.values()) + " |", "|---|" + "---:|" * len(HEADERS)]
    for row in rows:
        cells = [f"{row[k]:.1f}" if k in ("ppl", "train_s", "eval_s") else f"{row[k]:.3f}" if k in row else ""
                 for k in HEADERS]
        lines.append(f"| {row['method']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
