"""One IPG run end to end: model and task, attribution per path, baselines, validation, report folder."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from neurips26 import models
from neurips26.errors import UserError
from neurips26.hubfolder import sha256_file

from . import arithmetic
from .baselines import answer_attributions
from .estimator import IPGResult, estimate_ipg
from .outcomes import SCORERS
from .policy import LMPolicy
from .report import write_report
from .scaling import SAE, Site, decoder_layers, neuron_sites, sae_site
from .validation import validate

Progress = Callable[[str, int, int], None]  # (description, advance, total)


@dataclass
class Settings:
    model: str | None = None  # folder or Hub name; None = the embedded model
    task: str = "arithmetic"  # arithmetic, arithmetic:STEPS, or a JSONL file with question and answer
    layers: list[int] | None = None  # None = the middle layer
    steps: int = 8
    samples: int = 8
    problems: int = 16
    max_new_tokens: int = 32
    temperature: float = 1.0
    sae: Path | None = None
    sae_site: str = "resid"
    module: str | None = None
    joint: bool = False
    outcome: str = "number"
    top_k: int = 10
    gamma: float = 2.0
    seeds: int = 3
    eval_samples: int = 16
    ablation: str = "zero"
    validate: bool = True
    heldout: bool = True  # validate on other problems than those attributed
    endpoints: bool = True
    batch_rows: int = 64
    seed: int = 0
    device: str = "auto"
    command: str = ""

    def check(self) -> None:
        if self.steps < 1:
            raise UserError(f"--steps must be >= 1, not {self.steps}")
        if self.samples < 2:
            raise UserError(f"--samples must be >= 2 (the baseline leaves one sample out), not {self.samples}")
        if self.problems < 1 or self.max_new_tokens < 1 or self.batch_rows < 1 or self.eval_samples < 1:
            raise UserError("--problems, --max-new-tokens, --batch-rows and --eval-samples must be >= 1")
        if self.temperature <= 0:
            raise UserError(f"--temperature must be > 0, not {self.temperature}")
        if self.outcome not in SCORERS:
            raise UserError(f"--outcome must be one of {', '.join(SCORERS)}, not {self.outcome!r}")
        if self.ablation not in ("zero", "mean"):
            raise UserError(f"--ablation must be zero or mean, not {self.ablation!r}")
        if self.gamma < 0 or self.top_k < 1 or self.seeds < 1:
            raise UserError("--gamma must be >= 0, --top-k and --seeds >= 1")
        if self.sae is not None and self.layers is not None and len(self.layers) != 1:
            raise UserError("--sae needs exactly one layer (the SAE's layer) in --layers")
        models.device(self.device)  # auto, cpu, cuda or cuda:N that this machine has


def parse_layers(text: str | None) -> list[int] | None:
    """'10,15' -> [10, 15]."""
    if text is None or not text.strip():
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(f"--layers must be comma-separated layer numbers, not {text!r}") from None


def load_task(spec: str, n: int, seed: int) -> list[tuple[str, str]]:
    """(question, answer) pairs: generated arithmetic problems, or the first ``n`` lines of a JSONL file."""
    if spec == "arithmetic" or spec.startswith("arithmetic:"):
        steps = spec.partition(":")[2] or "2"
        if not steps.isdecimal():
            raise UserError(f"--task arithmetic:STEPS needs a whole number of steps, not {steps!r}")
        return [(p.question, p.answer) for p in arithmetic.generate(n, steps=int(steps), seed=seed)]
    path = Path(spec)
    if not path.is_file():
        raise UserError(f"--task must be arithmetic, arithmetic:STEPS or a JSONL file; {spec!r} is neither")
    pairs = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()[:n]):
        try:
            row = json.loads(line)
            pairs.append((row.get("question") or row["prompt"], str(row["answer"])))
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
            raise UserError(f"{path}:{i + 1}: each line must be a JSON object with question and answer") from None
    if not pairs:
        raise UserError(f"{path}: no problems")
    return pairs


def model_source(name: str | None) -> str:
    """The folder or Hub name ``--model`` names (default: the embedded model's folder)."""
    if name is not None and not Path(name).exists() and name.count("/") != 1:
        raise UserError(f"--model {name!r} is neither a folder nor a Hub name ORG/NAME")
    return str(models.default_model_dir()) if name is None else name


def check_sites(settings: Settings) -> None:
    """``--layers`` and ``--module`` (or the SAE's layer) against the model's architecture, built without weights
    on the meta device from its config: a bad value is refused before the weights load."""
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        skeleton = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(model_source(settings.model)))
    blocks = decoder_layers(skeleton)
    layers = settings.layers if settings.layers is not None else [len(blocks) // 2]
    if settings.sae is None:
        neuron_sites(skeleton, layers, settings.module)
    elif not 0 <= layers[0] < len(blocks):
        raise UserError(f"layer {layers[0]} out of range: the model has layers 0..{len(blocks) - 1}")


def load_model(name: str | None, device: str) -> tuple[Any, Any, str]:
    """(model in float32 on ``device``, tokenizer, local folder or name)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = model_source(name)
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.float32)
    return model.to(models.device(device)), tokenizer, source


def file_digests(source: str, sae: Path | None) -> dict[str, str]:
    digests = {}
    folder = Path(source)
    if folder.is_dir():
        for f in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("config.json")):
            digests[f"model/{f.name}"] = sha256_file(f)
    if sae is not None:
        digests[f"sae/{sae.name}"] = sha256_file(sae)
    return digests


def component_rows(sites: list[Site], ipg: np.ndarray, stderr: np.ndarray,
                   baselines: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """One row per component, ranked by IPG (largest first)."""
    names = [(site, i) for site in sites for i in range(site.size)]
    order = np.argsort(-ipg, kind="stable")
    rows = []
    for rank, j in enumerate(order, 1):
        site, i = names[j]
        rows.append({"rank": rank, "component": f"{site.name}.{'f' if site.kind == 'sae' else 'n'}{i}",
                     "site": site.name, "layer": site.layer, "index": i, "kind": site.kind,
                     "ipg": float(ipg[j]), "stderr": float(stderr[j]),
                     **{k: float(v[j]) for k, v in baselines.items()}})
    return rows


def run(settings: Settings, out: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Attribute, validate and write the report folder; returns the tables and the metadata."""
    settings.check()
    if out.exists() and any(out.iterdir()) and not (out / "manifest.json").is_file():
        raise FileExistsError(f"{out}: exists, is not empty and is not an earlier IPG output; choose another --out")
    started = time.perf_counter()
    advance = progress or (lambda description, step, total: None)
    n = settings.problems  # every input is read and checked before the model's weights load
    pairs = load_task(settings.task, 2 * n if settings.validate and settings.heldout else n, settings.seed)
    held = pairs[n:] if settings.validate and settings.heldout else pairs
    pairs = pairs[:n]
    if not held:
        raise UserError(f"{settings.task}: no problems left after the first {n} for held-out validation; "
                         "give fewer --problems or use --in-sample")
    check_sites(settings)
    model, tokenizer, source = load_model(settings.model, settings.device)
    n_layers = len(decoder_layers(model))
    layers = settings.layers if settings.layers is not None else [n_layers // 2]
    if settings.sae is not None:
        d_model = model.config.get_text_config().hidden_size
        sites = [sae_site(model, layers[0], SAE.load(settings.sae, d_model), settings.sae_site)]
    else:
        sites = neuron_sites(model, layers, settings.module)
    prompts = [torch.tensor(arithmetic.prompt_ids(tokenizer, q)) for q, _ in pairs]
    answers = [a for _, a in pairs]
    references = [torch.tensor(tokenizer(arithmetic.reference(a), add_special_tokens=False)["input_ids"])
                  for a in answers]
    score = SCORERS[settings.outcome]
    policy = LMPolicy(model, sites, tokenizer, settings.temperature, settings.max_new_tokens)
    paths = [sites] if settings.joint else [[site] for site in sites]

    results: list[IPGResult] = []
    baselines: dict[str, list[np.ndarray]] = {}
    means = []
    for path in paths:
        name = "+".join(site.name for site in path)
        sub = policy.with_sites(path)
        results.append(estimate_ipg(sub, prompts, answers, score, settings.steps, settings.samples,
                                    settings.batch_rows, settings.seed, settings.endpoints,
                                    lambda n, name=name: advance(f"IPG {name}", n, len(pairs))))
        scores, mean = answer_attributions(sub, prompts, references, settings.steps,
                                           lambda n, name=name: advance(f"baselines {name}", n, len(pairs)))
        for key, value in scores.items():
            baselines.setdefault(key, []).append(value)
        means.append(mean)
    ipg = np.concatenate([r.ipg for r in results])
    stderr = np.concatenate([r.stderr for r in results])
    baseline = {k: np.concatenate(v) for k, v in baselines.items()}
    components = component_rows(sites, ipg, stderr, baseline)

    rows = []
    if settings.validate:
        rankings = {"ipg": ipg, **baseline}
        held_prompts = [torch.tensor(arithmetic.prompt_ids(tokenizer, q)) for q, _ in held]
        rows = [r.to_dict() for r in validate(  # seed + 1: sampling noise independent of the attribution's
            policy, held_prompts, [a for _, a in held], score, rankings, min(settings.top_k, policy.n_components),
            settings.seeds, settings.gamma, settings.eval_samples,
            np.concatenate(means) if settings.ablation == "mean" else None, settings.seed + 1, settings.batch_rows,
            lambda step: advance("validation", step, len(held)))]

    path_rows = []
    completeness = {}
    for path, r in zip(paths, results, strict=True):
        name = "+".join(site.name for site in path)
        path_rows += [{"path": name, "alpha": float(a), "outcome": float(o), "endpoint": False}
                      for a, o in zip(r.alphas, r.outcome, strict=True)]
        if r.j0 is not None:
            path_rows += [{"path": name, "alpha": 0.0, "outcome": r.j0, "endpoint": True},
                          {"path": name, "alpha": 1.0, "outcome": r.j1, "endpoint": True}]
            completeness[name] = {"sum_ipg": float(r.ipg.sum()), "stderr_sum": r.stderr_total,
                                  "j_gap": round(r.j1 - r.j0, 6), "gap": r.completeness_gap}
    meta = {
        "builder": "neurips26 ipg", "model": source, "model_name": Path(source).name, "task": settings.task,
        "outcome": settings.outcome, "layers": layers, "sites": [s.name for s in sites],
        "steps": settings.steps, "samples": settings.samples, "problems": len(pairs),
        "validation_problems": len(held) if settings.validate else 0,
        "validation_heldout": settings.validate and settings.heldout,
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(settings).items()},
        "command": settings.command, "completeness": completeness, "counts": asdict(policy.counts),
        "seconds": round(time.perf_counter() - started, 1), "device": str(policy.device),
    }
    inputs = {**file_digests(source, settings.sae),
              f"task/{Path(settings.task).name}": hashlib.sha256(json.dumps([pairs, held]).encode()).hexdigest()}
    write_report(out, components, rows, path_rows, meta, inputs)
    return {"components": components, "validation": rows, "path": path_rows, "meta": meta}
