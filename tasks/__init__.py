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


def load_config(resource: str, config: str, metadata: dict | None = None):
    """Every split of ``config`` in the built ``resource`` folder, as a ``datasets.DatasetDict``.

    Reads only (never builds): a missing folder or config is a UserError naming the command to run. What was
    read is recorded in ``metadata["data"]`` (resource, config, builder version, sha256 of manifest.json,
    whether the folder is a demo build), so it lands in the results file's task config.
    """
    import hashlib
    import json

    import datasets

    from neurips26 import hubfolder, settings
    from neurips26.errors import UserError

    folder = settings.data_root() / resource
    manifest_path = folder / settings.MANIFEST
    if not manifest_path.is_file():
        raise UserError(f"no built {resource} folder at {folder}: run `neurips26 build {resource}`")
    raw = manifest_path.read_bytes()
    manifest = json.loads(raw)
    splits = manifest.get("configs", {}).get(config)
    if not splits:
        raise UserError(f"{folder}: no {config!r} config; run `neurips26 build {resource}`")
    out = datasets.DatasetDict({split: datasets.Dataset(hubfolder.read_table(folder, config, split=split))
                                for split in splits})
    if metadata is not None:  # lm-eval passes a copy of the task's metadata: a `data: {}` placeholder in the
        # task YAML is the same dict as the task config's, so updating it in place reaches the results file
        info = {"resource": resource, "config": config, "version": manifest.get("builder", {}).get("version"),
                "manifest_sha256": hashlib.sha256(raw).hexdigest(), "demo": bool(manifest.get("demo"))}
        if isinstance(metadata.get("data"), dict):
            metadata["data"].update(info)
        else:
            metadata["data"] = info
    return out
