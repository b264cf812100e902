"""The options of the leaderboard app, shared by ``neurips26 serve`` and ``python app.py`` (Gradio-free).

``--store`` and ``--data`` are the command line's own (:mod:`neurips26.options`), declared once."""

from __future__ import annotations

from typing import Annotated

import typer

from neurips26.options import DataOpt, StoreOpt

__all__ = ["DataOpt", "HostOpt", "PortOpt", "StoreOpt"]

HostOpt = Annotated[str, typer.Option(envvar="GRADIO_SERVER_NAME", help="Interface to listen on.")]
PortOpt = Annotated[int, typer.Option(envvar="GRADIO_SERVER_PORT", help="Port to listen on.")]
