"""lm-eval task folders (YAML + ``utils.py``), shipped as package data.

Use them with lm-eval directly::

    lm_eval --include_path "$(neurips26 tasks --path)" --tasks neurips26 --model hf ...

Each resource has a folder with one YAML per task and a group YAML; the
top-level group ``neurips26`` contains one group per resource. Task data comes
from the built dataset folders (see :func:`dataset_folder`).
"""

from __future__ import annotations

import os
from pathlib import Path

from neurips26 import settings
from neurips26.errors import UserError

TASKS_DIR = Path(__file__).resolve().parent


def data_root() -> Path:
    """Where built dataset folders are looked for.

    ``$NEURIPS26_DATA`` when set; else the current directory when it holds built
    folders; else ``<cache>/data``, where missing resources are built from the
    embedded samples on first use.
    """
    if os.environ.get("NEURIPS26_DATA"):
        return Path(os.environ["NEURIPS26_DATA"])
    if any((p / "manifest.json").is_file() for p in Path.cwd().iterdir() if p.is_dir()):
        return Path.cwd()
    from neurips26.search import cache_dir

    return cache_dir() / "data"


def dataset_folder(resource: str) -> Path:
    """The built folder of ``resource``, built from its embedded sample when missing."""
    folder = data_root() / resource
    if not (folder / "manifest.json").is_file():
        from neurips26.corpora import builder

        builder(resource).build(out=folder)
    return folder


def built_folder(resource: str) -> Path:
    """The built folder of ``resource`` under :func:`neurips26.settings.data_root`; never builds.

    A missing folder raises :class:`~neurips26.errors.UserError` naming the one command to run.
    """
    folder = settings.data_root() / resource
    if not (folder / settings.MANIFEST).is_file():
        raise UserError(f"{folder}: no built {resource} folder; run `neurips26 build {resource}` in "
                        f"{folder.parent} (or build it elsewhere and point NEURIPS26_DATA at that folder)")
    return folder


def load_config(resource: str, config: str, metadata: dict | None = None):
    """Every split of ``config`` in the built ``resource`` folder, as a ``datasets.DatasetDict``; never builds.

    A missing folder or config is a UserError naming the command to run. What was read is recorded in
    ``metadata["data"]`` (``resource``, ``config``, builder ``version``, ``manifest_sha256``, ``demo``): lm-eval
    passes the task metadata's values as keyword arguments, so the task YAML's ``data: {}`` placeholder is the
    task config's own mapping; filling it in place makes the record land in the results file.
    """
    import hashlib
    import json

    import datasets  # lazy: third-party, slow to import; only when a task loads its data

    from neurips26 import hubfolder

    folder = built_folder(resource)
    raw = (folder / settings.MANIFEST).read_bytes()
    manifest = json.loads(raw)
    splits = manifest.get("configs", {}).get(config)
    if not splits:
        raise UserError(f"{folder}: no {config!r} config; run `neurips26 build {resource}`")
    out = datasets.DatasetDict({split: datasets.Dataset(hubfolder.read_table(folder, config, split=split))
                                for split in splits})
    if metadata is not None:
        record = {"resource": resource, "config": config, "version": manifest.get("builder", {}).get("version"),
                  "manifest_sha256": hashlib.sha256(raw).hexdigest(), "demo": bool(manifest.get("demo", False))}
        if isinstance(metadata.get("data"), dict):
            metadata["data"].clear()
            metadata["data"].update(record)
        else:
            metadata["data"] = record
    return out
