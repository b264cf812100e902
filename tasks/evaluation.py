"""Run our lm-eval tasks: ``neurips26 eval`` wraps ``lm_eval.simple_evaluate``.

It indexes only our task folder (``include_defaults=False``), picks CUDA when
present, and writes lm-eval's usual ``results_<date>.json`` and
``samples_<task>_<date>.jsonl`` files under ``<output>/<model name>/``. It builds
nothing: a task whose built folder is missing stops the run with the command to
run (``neurips26 build <resource>``). The results' top-level ``config`` gets
``neurips26_data``: per task, the data it read (see :func:`neurips26.tasks.load_config`).
Without model arguments it runs the embedded default model (SmolLM2-135M-Instruct,
see ``neurips26/models.py``).

On a GPU machine with the ``gpu`` extra (vLLM)::

    pip install -e ".[gpu]"
    neurips26 eval --model vllm --tasks neurips26 \
        --model-args pretrained=HuggingFaceTB/SmolLM2-135M-Instruct,dtype=auto,gpu_memory_utilization=0.8
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neurips26.tasks import TASKS_DIR, built_folder

from neurips26 import models, settings
from neurips26.errors import UnknownNameError, UserError
from neurips26.options import check_target_folder
from neurips26.results import parse_model_args


@dataclass
class EvalRun:
    """One run: lm-eval's results dict and the files it wrote."""

    results: dict[str, Any]
    results_file: Path | None
    samples_files: list[Path]


def task_manager(metadata: dict[str, Any] | None = None):
    """lm-eval's TaskManager over our tasks folder only; ``metadata`` goes to every task, like lm_eval's --metadata."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata=metadata)


@functools.cache
def list_tasks() -> dict[str, list[str]]:
    """{"groups": [...], "tasks": [...]} known in our tasks folder (read once per process; do not modify)."""
    manager = task_manager()
    return {"groups": sorted(manager.all_groups), "tasks": sorted(manager.all_subtasks)}


def run(tasks: list[str], model: str = "hf", model_args: str | None = None, *, limit: float | None = None,
        num_fewshot: int | None = None, batch_size: int | str = 1, output: Path = Path("results"),
        device: str | None = None, data: Path | None = None, log_samples: bool = True,
        apply_chat_template: bool | None = None, gen_kwargs: str | None = None, seed: int = 0,
        metadata: dict[str, Any] | None = None, use_cache: Path | None = None) -> EvalRun:
    """Evaluate ``model`` on ``tasks`` and write lm-eval's results (and samples) files.

    ``metadata`` are task arguments, as lm_eval's ``--metadata`` (e.g. ``{"num_frames": 16}`` for the video
    tasks, or ``{"selections": "frameselect", "selector": "dpp"}`` to show a frame selector's stored frames).
    ``apply_chat_template`` None means :func:`chat_template_choice`. The choice and its reason go to the
    results' ``config["neurips26_chat_template"]``; files go under
    ``<output>/<model id>/`` (``HuggingFaceTB__SmolLM2-135M-Instruct`` for the embedded model), not under a
    cache path. ``use_cache`` is lm-eval's ``--use_cache``: the model's answers kept in that SQLite file, so a
    later run of the same model on some of the same requests answers them from it.
    """
    import lm_eval
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.utils import sanitize_model_name
    from neurips26.tasks.answerers import MODELS as REFERENCE_MODELS  # lazy: registers lm-eval models; loads lm-eval

    # every check before any weights are loaded: a bad value costs no model load
    check_model_type(model)
    args = parse_model_args(model_args)
    if model in REFERENCE_MODELS:  # the answerers that know nothing: no weights to load
        pass
    elif not args and model == "hf":
        args = {"pretrained": None, "dtype": "float32"}  # the embedded model, converted below once all else is checked
    elif "pretrained" not in args:
        raise UserError(f"--model {model} needs --model-args pretrained=<model id or folder>")
    if args.get("pretrained"):
        models.check_model(args["pretrained"], args.get("revision"))
    device = models.device(device)
    check_target_folder(Path(output), "--output")
    if data is not None:
        settings.set_data_root(data)
    known = list_tasks()
    unknown = [t for t in tasks if t not in known["groups"] + known["tasks"]]
    if unknown:
        raise UnknownNameError(f"unknown task(s) {', '.join(unknown)}; "
                               f"known: {', '.join(known['groups'] + known['tasks'])}")
    check_built(tasks)
    if "pretrained" in args and args["pretrained"] is None:
        args["pretrained"] = str(models.default_model_dir())
    model_id = models.model_id(model, args)
    if apply_chat_template is None:
        apply_chat_template, why = chat_template_choice(tasks, args.get("pretrained"), model_id)
    else:
        why = "--apply-chat-template" if apply_chat_template else "--no-apply-chat-template"
    output = Path(output)
    before = set(output.rglob("*.json*")) if output.exists() else set()
    tracker = EvaluationTracker(output_path=str(output))
    results = lm_eval.simple_evaluate(
        model=model, model_args=args, tasks=tasks, num_fewshot=num_fewshot, batch_size=batch_size,
        device=device, limit=limit, log_samples=log_samples, evaluation_tracker=tracker,
        task_manager=task_manager(metadata), apply_chat_template=apply_chat_template, gen_kwargs=gen_kwargs,
        random_seed=seed, numpy_random_seed=seed, torch_random_seed=seed, fewshot_random_seed=seed,
        bootstrap_iters=1000, use_cache=None if use_cache is None else str(use_cache),
    )
    samples = results.pop("samples", None) if log_samples else None
    results["config"]["neurips26_data"] = data_read(results)
    results["config"]["neurips26_chat_template"] = {"applied": bool(apply_chat_template), "reason": why}
    tracker.general_config_tracker.model_name = model_id  # results under <output>/<model id>, not a cache path
    tracker.general_config_tracker.model_name_sanitized = sanitize_model_name(model_id)
    tracker.save_results_aggregated(results=results, samples=samples)
    if samples:
        for task_name in results["configs"]:
            tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
    written = set(output.rglob("*.json*")) - before
    results_file = next((p for p in written if p.name.startswith("results_")), None)
    samples_files = sorted(p for p in written if p.name.startswith("samples_"))
    return EvalRun(results, results_file, samples_files)


def data_read(results: dict[str, Any]) -> dict[str, Any]:
    """Per task, the data provenance its loader recorded (``configs[task]["metadata"]["data"]``)."""
    return {task: config["metadata"]["data"] for task, config in sorted(results.get("configs", {}).items())
            if isinstance(config.get("metadata"), dict) and config["metadata"].get("data")}


def leaf_tasks(names: list[str]) -> list[str]:
    """``names`` with every group replaced by its tasks (recursively), in order, without repeats."""
    from neurips26.tasks.protocol import group_members, task_configs  # lazy: reads every task YAML

    members = group_members(task_configs(TASKS_DIR))
    out: list[str] = []
    for name in names:
        for leaf in leaf_tasks(members[name]) if name in members else [name]:
            if leaf not in out:
                out.append(leaf)
    return out


def chat_template_choice(tasks: list[str], pretrained: str | None, name: str) -> tuple[bool, str]:
    """Whether a run applies the chat template when the user did not say, and why: a chat model
    (:func:`neurips26.models.is_instruct`) is prompted through its own template; for another model, what the
    tasks' protocols say when they agree, else off. When the tasks' standard runs (their protocols) differ from the
    choice, the reason says so: a run that differs from a protocol is stored unranked for that task."""
    from neurips26.tasks.protocol import shipped_protocols  # lazy: reads every task YAML

    protocols = shipped_protocols()
    standard = {t: protocols[t].protocol.chat_template for t in leaf_tasks(tasks) if t in protocols}
    instruct, why = models.is_instruct(pretrained, name)
    if instruct:
        on, reason = True, why
    elif len(set(standard.values())) == 1:
        on = next(iter(standard.values()))
        return on, f"the protocols of {', '.join(tasks)} say chat template {'on' if on else 'off'} (the standard run)"
    else:
        on, reason = False, ("the tasks' protocols differ on the chat template; " if standard else
                             "no task protocol; ") + why
    differ = sorted(t for t, wanted in standard.items() if wanted != on)
    if differ:
        flag = "--no-apply-chat-template" if on else "--apply-chat-template"
        reason += (f"; the standard run of {', '.join(differ)} has it {'off' if on else 'on'} (unranked there; "
                   f"{flag} for their standard run)")
    return on, reason


def check_model_type(model: str) -> None:
    """``model`` must be an lm-eval model type whose code can be imported here (vLLM needs the ``gpu`` extra)."""
    import lm_eval.models  # noqa: F401  (registers lm-eval's model types)
    from lm_eval.api.registry import MODEL_REGISTRY, get_model

    known = sorted(MODEL_REGISTRY.keys())
    if model not in known:
        raise UnknownNameError(f"unknown model type {model!r} (--model); known: {', '.join(known)}")
    try:
        get_model(model)
    except ImportError as exc:
        hint = " (pip install -e \".[gpu]\" on a CUDA machine)" if model.startswith("vllm") else ""
        raise UserError(f"--model {model} needs the Python package {exc.name or exc}, which is not installed"
                        f"{hint}") from None


def check_built(tasks: list[str]) -> None:
    """Every resource the tasks read has a built folder (:func:`neurips26.tasks.built_folder` names the command
    that builds a missing one): checked before a model is loaded."""
    from neurips26.tasks.protocol import task_configs  # lazy: reads every task YAML

    leaves = set(leaf_tasks(tasks))
    folders = {path.parent.name for path, config in task_configs(TASKS_DIR).items()
               if isinstance(config.get("task"), str) and config["task"] in leaves}
    for resource in sorted(folders):
        built_folder(resource)
