"""``neurips26 serve``: start the leaderboard app locally.

Kept free of Gradio imports, so that registering this command does not slow the CLI down.
"""

from __future__ import annotations

from neurips26.space.options import DataOpt, HostOpt, PortOpt, StoreOpt


def serve(host: HostOpt = "127.0.0.1", port: PortOpt = 7860, store: StoreOpt = None, data: DataOpt = None) -> None:
    """Start the leaderboard app (Gradio): leaderboard, submit, model pages and SQL over the datasets."""
    from neurips26.space.app import launch  # lazy: Gradio loads only when the app starts

    launch(host, port, store, data)

