"""The leaderboard Space: Gradio 6 with native components.

Tabs, one function each in ``tabs.py``: Leaderboard (a board tab per track, the method families, Per task and
Demo runs, with search, filters, column choice, confidence intervals, rank ranges and a score/size plot), Submit
(upload an lm-eval results file and its samples, fill the metadata, see the verdict at once), Model page (per-task
scores, failure signatures and the run's configuration) and Datasets (read-only SQL over the built dataset
folders).

Run locally with ``neurips26 serve`` (no login; see ``serve.py``). On a Hugging Face Space
(``SPACE_ID`` set) submitting needs a Hugging Face login and is limited to
``NEURIPS26_DAILY_LIMIT`` submissions per user per UTC day (default 5).
"""

import os
from pathlib import Path

import gradio as gr
import typer
from neurips26.leaderboard import tracks
from neurips26.leaderboard.store import Store
from neurips26.space import boards, dataset_sql, submitting
from neurips26.space.boards import board_parts, board_views
from neurips26.space.options import DataOpt, HostOpt, PortOpt, StoreOpt
from neurips26.space.tabs import Context, datasets_tab, leaderboard_tab, model_tab, submit_tab

from neurips26 import settings as env

# Table text wraps (between words; anywhere in the long ids and JSON of the model page and SQL results) instead
# of being cut or spilling out of its cell, at any width.
# Headers never break inside a word ("Ra/nk"): a column is at least as wide as its longest header word.
CSS = """.gradio-container table td, .gradio-container table td * {
  white-space: normal !important; overflow-wrap: break-word; }
.gradio-container table th, .gradio-container table th * {
  overflow-wrap: normal !important; word-break: keep-all !important; hyphens: none !important; }
#model-about td *, #model-settings td *, #sql-result td * { overflow-wrap: anywhere; }"""

INTRO = """# neurips26 leaderboard
Models evaluated with [lm-eval](https://github.com/EleutherAI/lm-evaluation-harness) on the neurips26 tasks.
Scores come with 95% confidence intervals; the rank range is every rank those intervals allow.
Submit an lm-eval results file (and its samples) in the Submit tab; every run's configuration is on its
Model page, so that anyone can repeat it."""


def on_space() -> bool:
    """Whether the app runs on a Hugging Face Space."""
    return bool(os.environ.get("SPACE_ID"))


def space_daily_limit() -> int:
    """Submissions per user per UTC day on a Space (:func:`neurips26.settings.daily_limit`)."""
    return env.daily_limit()


def build_app(store_root: Path | None = None, data_root: Path | None = None, daily_limit: int | None = None,
              require_login: bool | None = None, tasks_dir: Path | None = None) -> gr.Blocks:
    """The Space's Blocks over the store at ``store_root`` and the dataset folders under ``data_root``: the four
    tabs of :mod:`neurips26.space.tabs`.

    ``tasks_dir``: the task YAMLs the board accepts (default: the shipped ones). ``require_login`` defaults to
    running on a Space; there ``daily_limit`` defaults to
    ``$NEURIPS26_DAILY_LIMIT`` (5). Locally, without ``daily_limit``, submissions are unlimited.
    """
    store = Store(Path(store_root) if store_root else env.leaderboard_dir(), tasks_dir=tasks_dir)
    data_root = Path(data_root) if data_root else env.data_root()
    require_login = on_space() if require_login is None else require_login
    if daily_limit is None and require_login:
        daily_limit = space_daily_limit()
    groups = boards.task_groups(store.tasks)
    tasks = [task for members in groups.values() for task in members]
    track_list = tracks.tracks(store.tasks, store.groups)

    with gr.Blocks(title="neurips26 leaderboard", analytics_enabled=False) as demo:
        gr.HTML(f"<style>{CSS}</style>", container=False, padding=False)  # in the app, whoever launches it
        gr.Markdown(INTRO)
        ctx = Context(demo, store, data_root, require_login, daily_limit, tasks, track_list,
                      board_views(track_list, tasks), board_parts(track_list, store, groups))
        with gr.Tabs() as tabs:
            board = leaderboard_tab(ctx)
            submitted = submit_tab(ctx, board)
            model_tab(ctx, board, submitted, tabs)
            datasets_tab(ctx)
    return demo


def launch(host: str, port: int, store: Path | None, data: Path | None) -> None:
    """Start the app on ``host:port`` over the built folders under ``data`` (default: the data root)."""
    data = dataset_sql.require_datasets(data if data is not None else env.data_root())
    build_app(store, data).queue().launch(server_name=host, server_port=port, max_file_size=submitting.MAX_UPLOAD_BYTES)


def main(host: HostOpt = "127.0.0.1", port: PortOpt = 7860, store: StoreOpt = None, data: DataOpt = None) -> None:
    """Start the leaderboard app (what a Space runs: ``python app.py``; on a Space it listens on all interfaces)."""
    if on_space() and host == "127.0.0.1" and not os.environ.get("GRADIO_SERVER_NAME"):
        host = "0.0.0.0"
    launch(host, port, store, data)


if __name__ == "__main__":
    typer.run(main)
