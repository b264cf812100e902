"""The options every command shares, declared once: ``--data``, ``--model``, ``--out``, ``--store`` and ``--device``.

A core module (not part of the ``neurips26.cli`` package), so that the commands living with their component
(``methods/*/cli.py``, the leaderboard, the Space) use the same declarations without importing the CLI that wires
them in. Each alias checks its value when the command line is parsed, before the command loads a model or starts
work, and a bad value is a :class:`~neurips26.errors.UserError` (one line, exit code 2):

- :data:`DataOpt`: the folder of built dataset folders, resolved by the one data rule
  (:func:`neurips26.settings.resolve_data`: ``--data``, then ``$NEURIPS26_DATA``, then ``.`` when it holds built
  folders, then the cache); :func:`resource_folder` is the built folder of one resource under it.
- :data:`ModelOpt`: a transformers causal LM, a local folder or a Hub id (:func:`neurips26.models.check_model`).
- :data:`OutOpt` and :func:`out_option`: an output folder that exists or can be made.
- :data:`StoreOpt`: the leaderboard store folder.
- :data:`DeviceOpt`: ``cpu``, ``cuda`` or ``cuda:N`` (:func:`neurips26.models.device`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from .errors import UserError
from .settings import MANIFEST, resolve_data

DataOpt = Annotated[Path | None, typer.Option(
    "--data", show_default=False,
    help="Folder holding the built dataset folders; a command reading one resource also takes that resource's "
         "built folder (default: $NEURIPS26_DATA, else . when it holds built folders, else the cache).")]


def data_root(data: Path | None) -> Path:
    """The folder holding the built dataset folders: ``--data`` resolved by the one rule."""
    return resolve_data(data).path


def resource_folder(data: Path | None, resource: str) -> Path:
    """The built ``resource`` folder for ``--data``: the folder itself when it is a built folder, else
    ``<root>/<resource>`` under the data rule's root. Never builds: a missing folder is a UserError naming the
    command that builds it."""
    from .hubfolder import built_folder  # lazy: pyarrow, for the commands that read a built folder

    if data is not None and _built_as(Path(data), resource):
        return Path(data)
    return built_folder(resource, data_root(data))


def _built_as(folder: Path, resource: str) -> bool:
    """``folder`` is a built folder of ``resource``: named so, or its manifest's builder is that resource's."""
    try:
        builder = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("builder") or {}
    except (OSError, ValueError, AttributeError):
        return False
    return folder.name == resource or str(builder.get("name", "")).rsplit(".", 1)[-1] == resource


def check_target_folder(folder: Path, option: str, named: Path | None = None) -> Path:
    """``folder`` (what ``option`` names for writing) is a folder or can be made one: its nearest existing
    ancestor is a writable folder. Checked before any work, so a run never fails only when it writes."""
    shown = folder if named is None else named
    for path in [folder, *folder.absolute().parents]:
        if path.exists():
            if not path.is_dir():
                raise UserError(f"{option} {shown}: {path} is a file, not a folder")
            if not os.access(path, os.W_OK):
                raise UserError(f"{option} {shown}: {path} is not writable")
            break
    return folder


def check_target_file(path: Path, option: str) -> Path:
    """``path`` (a file ``option`` names for writing) is not a folder, and its folder exists or can be made."""
    if path.is_dir():
        raise UserError(f"{option} {path}: a folder, not a file")
    check_target_folder(path.parent, option, named=path)
    return path


def _out(ctx: typer.Context, param: Any, value: Path | None) -> Path | None:
    if value is not None and not ctx.resilient_parsing:
        check_target_folder(Path(value), param.opts[0])
    return value


def out_option(help: str) -> Any:
    """The ``--out`` option with a command's own help line: a folder that exists or can be made (checked when the
    command line is parsed)."""
    return typer.Option("--out", help=help, callback=_out)


OutOpt = Annotated[Path, out_option("Output folder (made when missing).")]


def _model(ctx: typer.Context, value: str | None) -> str | None:
    if value is not None and not ctx.resilient_parsing:
        from .models import check_model  # lazy: the Space imports these options and never loads a model

        check_model(value, option="--model")
    return value


ModelOpt = Annotated[str | None, typer.Option(
    "--model", show_default=False, callback=_model,
    help="A transformers causal LM: a local folder or a Hub id ORG/NAME (default: the embedded "
         "SmolLM2-135M-Instruct).")]

StoreOpt = Annotated[Path | None, typer.Option(
    "--store", show_default=False,
    help="Leaderboard store folder (default: $NEURIPS26_LEADERBOARD, else ~/.cache/neurips26/leaderboard).")]


def _device(ctx: typer.Context, value: str | None) -> str | None:
    if value is not None and not ctx.resilient_parsing:
        from .models import device  # lazy: torch, only when --device is given

        device(value)
    return value


DeviceOpt = Annotated[str | None, typer.Option(
    "--device", show_default=False, callback=_device, help="cpu, cuda or cuda:N (default: cuda when present).")]
