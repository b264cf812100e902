"""The options of the leaderboard app, shared by ``neurips26 serve`` and ``python app.py`` (Gradio-free)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

HostOpt = Annotated[str, typer.Option(envvar="GRADIO_SERVER_NAME", help="Interface to listen on.")]
PortOpt = Annotated[int, typer.Option(envvar="GRADIO_SERVER_PORT", help="Port to listen on.")]
StoreOpt = Annotated[Path | None, typer.Option(
    help="Leaderboard store folder (default: $NEURIPS26_LEADERBOARD, else ~/.cache/neurips26/leaderboard).")]
DataOpt = Annotated[Path | None, typer.Option(
    help="Folder holding the built dataset folders (default: $NEURIPS26_DATA, else as for eval). The app "
         "only reads them: build them first (neurips26 build <resource>).")]
