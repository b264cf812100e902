"""Results and samples files, in lm-eval 0.4's shape, for evaluators that do not run through lm-eval.

A method's evaluator (ReDiff's decoder, a robot policy's rollouts, a geometry metric) registers its
:class:`~neurips26.protocol.Protocol` in :data:`~neurips26.protocol.PROTOCOLS` and writes each run with
:func:`write_run`: ``results_<stamp>.json`` (``results[task]["<metric>,none"]`` and its stderr, ``configs[task]``
with the protocol, the run's settings and the data provenance, ``versions``, ``n-samples``, ``config``) and
``samples_<task>_<stamp>.jsonl`` (one row per document: ``doc_id``, ``doc``, ``target``, ``resps``,
``filtered_resps`` and each metric's per-document value). :func:`neurips26.results.read_run` reads them back and
the leaderboard validates and ranks them like any lm-eval task's.

``lm_eval_version`` is written as ``"0.4"``: the version of the file format, not of a program that ran; the
writer is named under ``config.writer``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from neurips26.protocol import PROTOCOLS

FORMAT_VERSION = "0.4"


def _sha(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=_plain).encode()).hexdigest()


def _plain(value: Any) -> Any:
    """JSON for numpy scalars and arrays (anything with ``item``/``tolist``)."""
    for attr in ("tolist", "item"):
        if hasattr(value, attr):
            return getattr(value, attr)()
    raise TypeError(f"{type(value).__name__} is not JSON")


def mean_and_stderr(values: Sequence[float]) -> tuple[float, float]:
    """The mean of per-document values and its standard error (0 for one document)."""
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return mean, 0.0
    return mean, math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1) / n)


def results_object(task: str, rows: Sequence[Mapping[str, Any]], *, metrics: Sequence[str], model_name: str,
                   model_args: Mapping[str, Any], data: Mapping[str, Any], version: float = 1.0,
                   scores: Mapping[str, tuple[float, float | None]] | None = None,
                   settings: Mapping[str, Any] | None = None, extra: Mapping[str, Any] | None = None,
                   model: str = "neurips26", task_config: Mapping[str, Any] | None = None,
                   sections: Mapping[str, Any] | None = None, chat_template: str | None = None) -> dict[str, Any]:
    """The results object of one run of the registered evaluator ``task`` (see the module docstring)."""
    protocol = PROTOCOLS.get(task)
    info = PROTOCOLS.info(task)
    n = len(rows)
    values: dict[str, Any] = {}
    for metric in metrics:
        if scores is not None and metric in scores:
            value, stderr = scores[metric]
        else:
            value, stderr = mean_and_stderr([float(row[metric]) for row in rows])
        values[f"{metric},none"] = value
        values[f"{metric}_stderr,none"] = "N/A" if stderr is None else stderr
    metadata = {"version": version, "protocol": protocol.model_dump(mode="json"), "data": dict(data),
                **dict(settings or {})}
    config = {"task": task, "tag": [str(info.get("group", task))], "output_type": str(info.get("output_type", "")),
              "test_split": protocol.split, "num_fewshot": protocol.num_fewshot,
              "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": protocol.higher_is_better}
                              for m in metrics],
              **dict(task_config or {}), "metadata": metadata}
    return {
        "results": {task: {"alias": task, **values}},
        "configs": {task: config},
        "versions": {task: version},
        "n-shot": {task: protocol.num_fewshot},
        "higher_is_better": {task: {m: protocol.higher_is_better for m in metrics}},
        "n-samples": {task: {"original": n, "effective": n}},
        "config": {"model": model, "model_args": dict(model_args), "batch_size": n, "limit": None,
                   "gen_kwargs": None, "random_seed": 0, "writer": f"neurips26 {package_version('neurips26')}",
                   **dict(extra or {})},
        "model_name": model_name,
        "chat_template": chat_template,
        "chat_template_sha": None if chat_template is None else hashlib.sha256(chat_template.encode()).hexdigest(),
        "lm_eval_version": FORMAT_VERSION,
        "date": datetime.now().timestamp(),
        **dict(sections or {}),
    }


def samples_rows(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> list[dict[str, Any]]:
    """lm-eval samples rows: each input row's ``doc_id``, ``doc``, ``target`` and ``response`` in lm-eval's fields,
    its metric values and any other fields it carries, unchanged."""
    out = []
    for i, row in enumerate(rows):
        doc, target, response = row.get("doc", {}), row.get("target"), row.get("response", "")
        rest = {k: v for k, v in row.items() if k not in ("doc_id", "doc", "target", "response")}
        out.append({"doc_id": int(row.get("doc_id", i)), "doc": doc, "target": target,
                    "arguments": {"gen_args_0": {"arg_0": json.dumps(doc, sort_keys=True, default=_plain),
                                                 "arg_1": {}}},
                    "resps": [[response]], "filtered_resps": [response], "filter": "none", "metrics": list(metrics),
                    "doc_hash": _sha(doc), "prompt_hash": _sha(doc), "target_hash": _sha(target), **rest})
    return out


def write_run(folder: Path, task: str, rows: Sequence[Mapping[str, Any]], *, metrics: Sequence[str],
              model_name: str, model_args: Mapping[str, Any], data: Mapping[str, Any], version: float = 1.0,
              scores: Mapping[str, tuple[float, float | None]] | None = None,
              settings: Mapping[str, Any] | None = None, extra: Mapping[str, Any] | None = None,
              model: str = "neurips26", task_config: Mapping[str, Any] | None = None,
              sections: Mapping[str, Any] | None = None, chat_template: str | None = None) -> Path:
    """Write one run's results and samples files into ``folder``; the results file's path.

    ``rows``: one mapping per document with ``doc_id``, ``doc``, ``target``, ``response`` and a value per metric.
    ``scores``: metric -> (score, stderr or None) for metrics that are not the mean of the documents' values.
    ``data``: the provenance of the data (``resource``, ``config``, ``manifest_sha256``, ``demo``).
    ``settings``: the run's task settings, compared with the protocol's ``task_metadata`` by the leaderboard.
    ``extra`` goes into the results' ``config``, ``task_config`` into ``configs[task]`` (e.g. ``generation_kwargs``),
    ``sections`` are top-level keys of the method's own (e.g. ReDiff's ``rediff``); ``chat_template`` is the
    template the model's prompts went through (None: plain text), compared with the protocol's.
    """
    if not rows:
        raise ValueError(f"{task}: a run needs at least one document")
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().isoformat().replace(":", "-")
    results = folder / f"results_{stamp}.json"
    obj = results_object(task, rows, metrics=metrics, model_name=model_name, model_args=model_args, data=data,
                         version=version, scores=scores, settings=settings, extra=extra, model=model,
                         task_config=task_config, sections=sections, chat_template=chat_template)
    with (folder / f"samples_{task}_{stamp}.jsonl").open("w", encoding="utf-8") as out:
        for row in samples_rows(rows, metrics):
            out.write(json.dumps(row, default=_plain) + "\n")
    results.write_text(json.dumps(obj, indent=1, default=_plain), encoding="utf-8")
    return results
