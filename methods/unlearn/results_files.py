"""An evaluation of ``neurips26 unlearn`` written as lm-eval 0.4 writes a run of the ``rolebench_unlearn`` tasks.

``results_<date>.json`` (per task: the measures, their stderr, ``ppl`` as exp of the mean NLL; ``configs`` with
the task's split, generation settings and the data provenance; ``n-samples``; ``versions``; the run's ``config``
with the base model and the adapter in ``model_args``; the chat template and the refusal baseline's system
instruction with their sha256) and one ``samples_<task>_<date>.jsonl`` per task (per document: the document as the
task loads it, its target, the prompt, the response and its measures). The leaderboard's RoleBench-Unlearn board
recomputes every document's measures with the tasks' own scorer and accepts the files like those of
``neurips26 eval``; runs with ``--eval-limit`` are stored as unranked there.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from neurips26.hubfolder import provenance

from . import data, evaluate, prompts

RESOURCE, TASK_VERSION = "rolebench_unlearn", 2.0
TASKS = {"forget": ("rolebench_unlearn_forget", "forget_test"), "retain": ("rolebench_unlearn_retain", "retain_test"),
         "general": ("rolebench_unlearn_general", "test")}
METRICS = {"forget": ("forget_style", "forget_rougeL"), "retain": ("retain_style", "retain_rougeL"),
           "general": ("general_rougeL",)}
VALUE_KEYS = {"forget_style": "style", "retain_style": "style", "forget_rougeL": "rougeL", "retain_rougeL": "rougeL",
              "general_rougeL": "rougeL"}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _mean_stderr(values: list[float]) -> tuple[float, float | str]:
    n = len(values)
    mean = sum(values) / n
    return mean, (math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n) if n > 1 else "N/A")


def documents(folder: Path, split: str, name: str) -> tuple[list[dict], int]:
    """(the documents of one task in the order the tasks load them, the size of its split)."""
    rows = data.load_general(folder) if name == "general" else data.load_rows(folder, split, TASKS[name][1])
    return rows, len(rows)


def write(target: Path, folder: Path, split: str, evaluation: evaluate.Evaluation, tokenizer,
          model_args: Mapping[str, Any], num_parameters: int, system: str = "",
          cfg: evaluate.EvalConfig | None = None) -> Path:
    """Write the results file and the three samples files into ``target``; the results file's path."""
    cfg = cfg or evaluate.EvalConfig()
    target.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().isoformat().replace(":", "-")
    # the tasks' own generation settings; another max_new_tokens is an override, as lm-eval's --gen_kwargs
    generation = {"until": list(prompts.STOP), "do_sample": False, "max_gen_toks": prompts.MAX_NEW_TOKENS}
    override = f"max_gen_toks={cfg.max_new_tokens}" if cfg.max_new_tokens != prompts.MAX_NEW_TOKENS else None
    used = {**generation, "max_gen_toks": cfg.max_new_tokens}
    out: dict[str, Any] = {"results": {}, "configs": {}, "versions": {}, "n-shot": {}, "higher_is_better": {},
                           "n-samples": {}}
    for name, (task, test_split) in TASKS.items():
        docs, size = documents(folder, split, name)
        samples = [s for s in evaluation.samples if s["set"] == name]
        docs = docs[:len(samples)]
        rows = []
        for doc_id, (doc, sample) in enumerate(zip(docs, samples, strict=True)):
            prompt = (prompts.general_prompt(doc["instruction"]) if name == "general"
                      else prompts.role_prompt(doc["role"], doc["question"]))
            context = prompts.render(tokenizer, prompt, system)
            values = {metric: sample[VALUE_KEYS[metric]] for metric in METRICS[name]} | {"ppl": sample["nll"]}
            rows.append({"doc_id": doc_id, "doc": doc, "target": doc["references"][0],
                         "arguments": [[context, used]], "resps": [[sample["response"]]],
                         "filtered_resps": [sample["response"]], "filter": "none", "metrics": list(values),
                         "doc_hash": _sha(json.dumps(doc, indent=2, ensure_ascii=False, default=str)),
                         "prompt_hash": _sha(context), "target_hash": _sha(str(doc["references"][0])), **values})
        with (target / f"samples_{task}_{stamp}.jsonl").open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        results: dict[str, Any] = {"alias": task}
        for metric in METRICS[name]:
            results[f"{metric},none"], results[f"{metric}_stderr,none"] = _mean_stderr([r[metric] for r in rows])
        results["ppl,none"], results["ppl_stderr,none"] = math.exp(sum(r["ppl"] for r in rows) / len(rows)), "N/A"
        metadata: dict[str, Any] = {"version": TASK_VERSION}
        if name != "general":
            metadata["split"] = split
        metadata["data"] = provenance(folder, RESOURCE, "general" if name == "general" else split)
        out["results"][task] = results
        out["configs"][task] = {"task": task, "output_type": "generate_until", "test_split": test_split,
                                "num_fewshot": 0, "generation_kwargs": generation, "metadata": metadata}
        out["versions"][task], out["n-shot"][task] = TASK_VERSION, 0
        out["higher_is_better"][task] = {m: name != "forget" for m in METRICS[name]} | {"ppl": False}
        out["n-samples"][task] = {"original": size, "effective": len(rows)}
    template = getattr(tokenizer, "chat_template", None)
    import lm_eval  # lazy: only to record the version whose file format this is

    out.update({
        "config": {"model": "hf", "model_args": dict(model_args), "model_num_parameters": num_parameters,
                   "model_dtype": "torch.float32", "batch_size": cfg.batch_size, "limit": cfg.limit,
                   "gen_kwargs": override, "random_seed": 0, "written_by": "neurips26 unlearn"},
        "model_name": str(model_args.get("pretrained", "")), "lm_eval_version": lm_eval.__version__,
        "chat_template": template, "chat_template_sha": _sha(template) if template else None,
        "system_instruction": system or None, "system_instruction_sha": _sha(system) if system else None,
        "date": datetime.now().timestamp(),
    })
    path = target / f"results_{stamp}.json"
    path.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
