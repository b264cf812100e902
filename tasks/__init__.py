"""lm-eval task folders (YAML + ``utils.py``), shipped as package data, and the loader of their data.

Use them with lm-eval directly::

    lm_eval --include_path "$(neurips26 tasks --path)" --tasks neurips26 --model hf ...

Each resource has a folder with one YAML per task and a group YAML; the top-level group ``neurips26``
contains one group per resource. Tasks only read built dataset folders (``neurips26 build <resource>``
writes them); they never build one (see :func:`load_config`).

Provenance. lm-eval calls a task's ``custom_dataset`` with the entries of the task's ``metadata`` as keyword
arguments: a copy of the dict, but its values are the task config's own objects. So a task YAML holds a
placeholder ``data: {}`` in its ``metadata``, its loader passes its keyword arguments on to
:func:`load_config`, and :func:`load_config` fills that same ``data`` dict in place; lm-eval then writes it
into the results file as ``configs[<task>]["metadata"]["data"]``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neurips26 import settings
from neurips26.errors import UserError
from neurips26.hubfolder import built_folder, provenance, read_table

TASKS_DIR = Path(__file__).resolve().parent

__all__ = ["TASKS_DIR", "built_folder", "load_config"]


def load_config(resource: str, config: str, metadata: dict[str, Any] | None = None):
    """Every split of config ``config`` of the built ``resource`` folder (under :func:`settings.data_root`)
    as a ``datasets.DatasetDict``, recording what was read into ``metadata["data"]`` (see the module docstring).

    A missing folder or config is a :class:`~neurips26.errors.UserError` naming the command to run.
    """
    import datasets  # lazy: heavy, and listing or resolving tasks does not need it

    folder = built_folder(resource)
    splits = json.loads((folder / settings.MANIFEST).read_text(encoding="utf-8")).get("configs", {}).get(config)
    if not splits:
        raise UserError(f"{folder}: no {config!r} config; rebuild it with `neurips26 build {resource}`")
    record = provenance(folder, resource, config)
    if metadata is not None:
        if isinstance(metadata.get("data"), dict):
            metadata["data"].clear()
            metadata["data"].update(record)
        else:
            metadata["data"] = record
    return datasets.DatasetDict({split: datasets.Dataset(read_table(folder, config, split=split))
                                 for split in splits})
