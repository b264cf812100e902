"""``neurips26 serve``: start the leaderboard app locally.

Kept free of Gradio imports, so that registering this command does not slow the CLI down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neurips26 import settings


def serve(
    host: Annotated[str, typer.Option(envvar="GRADIO_SERVER_NAME", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(envvar="GRADIO_SERVER_PORT", help="Port to listen on.")] = 7860,
    store: Annotated[Path | None, typer.Option(
        help="Leaderboard store folder (default: $NEURIPS26_LEADERBOARD, else ~/.cache/neurips26/leaderboard).")
    ] = None,
    data: Annotated[Path | None, typer.Option(
        help="Folder holding the built dataset folders (default: $NEURIPS26_DATA, else as for eval). The app "
             "only reads them: build them first (neurips26 build <resource>).")] = None,
) -> None:
    """Start the leaderboard app (Gradio): leaderboard, submit, model pages and SQL over the datasets."""
    from neurips26.space.app import build_app  # lazy: Gradio loads only when the app starts
    from neurips26.space.dataset_sql import require_datasets  # lazy: DuckDB loads only when the app starts


    data = require_datasets(data if data is not None else settings.data_root())
    build_app(store, data).queue().launch(server_name=host, server_port=port)
