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
