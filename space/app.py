"""The leaderboard Space: Gradio 6 with native components.

Tabs: Leaderboard (an Overall table and one per benchmark, with search, filters,
column choice, confidence intervals, rank ranges and a score/size plot), Submit
(upload an lm-eval results file and its samples, fill the metadata, see the
verdict at once), Model page (per-task scores and the run's configuration) and
Datasets (read-only SQL over the built dataset folders).

Run locally with ``neurips26 serve`` (no login; see ``serve.py``). On a Hugging Face Space
(``SPACE_ID`` set) submitting needs a Hugging Face login and is limited to
``NEURIPS26_DAILY_LIMIT`` submissions per user per UTC day (default 5).
"""

import os
from pathlib import Path
from typing import Any

import gradio as gr
import polars as pl
import typer
from neurips26.leaderboard import modelinfo, tracks
from neurips26.leaderboard.store import Store
from neurips26.space import boards, dataset_sql, model_page, submitting
from neurips26.space.boards import BoardView, board_parts, board_views
from neurips26.space.options import DataOpt, HostOpt, PortOpt, StoreOpt

from neurips26 import settings as env
from neurips26.sql import dataset_folders

PRECISIONS = list(modelinfo.PRECISIONS)
MODEL_TYPES = list(modelinfo.MODEL_TYPES)
LICENSES = ["apache-2.0", "mit", "bsd-3-clause", "cc-by-4.0", "cc-by-nc-4.0", "llama3.1", "gemma", "other"]
DEFAULT_SQL = "SELECT state, kind, count(*) AS jurisdictions FROM locus.jurisdictions GROUP BY ALL ORDER BY ALL"

# Table text wraps (between words; anywhere in the long ids and JSON of the model page and SQL results) instead
# of being cut or spilling out of its cell, at any width.
# Headers never break inside a word ("Ra/nk"): a column is at least as wide as its longest header word.
CSS = """.gradio-container table td, .gradio-container table td * {
  white-space: normal !important; overflow-wrap: break-word; }
.gradio-container table th, .gradio-container table th * {
  overflow-wrap: normal !important; word-break: keep-all !important; hyphens: none !important; }
#model-about td *, #model-settings td *, #sql-result td * { overflow-wrap: anywhere; }"""

DEMO_NOTE = ("**Demo runs: NOT RANKED.** Runs that differ from a task protocol (a `--limit`, the demo sample's data, "
             "another few-shot or chat template setting), such as `scripts/demo`'s run of the embedded model. They "
             "are shown here so you can look at them, ordered by score, with their 95% intervals; they are never "
             "mixed with the ranked boards. Each run's reasons are on its Model page.")

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
    """The Space's Blocks over the store at ``store_root`` and the dataset folders under ``data_root``.

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
    tab_views = board_views(track_list, tasks)
    parts = board_parts(track_list, store, groups)

    with gr.Blocks(title="neurips26 leaderboard", analytics_enabled=False) as demo:
        gr.HTML(f"<style>{CSS}</style>", container=False, padding=False)  # in the app, whoever launches it
        gr.Markdown(INTRO)
        with gr.Tabs() as tabs:
            with gr.Tab("Leaderboard", id="leaderboard"):
                raw = gr.State({})
                with gr.Row():
                    search = gr.Textbox(label="Search models", placeholder="model id; separate terms with ,",
                                        elem_id="search", scale=3)
                    min_b = gr.Number(label="Min params (B)", value=0, minimum=0, elem_id="min-params")
                    max_b = gr.Number(label="Max params (B), 0: no limit", value=0, minimum=0, elem_id="max-params")
                    refresh = gr.Button("Refresh", scale=0)
                with gr.Row():
                    precisions = gr.CheckboxGroup(PRECISIONS, value=PRECISIONS, label="Precision")
                    types = gr.CheckboxGroup(MODEL_TYPES, value=MODEL_TYPES, label="Model type")
                with gr.Row():
                    licenses = gr.Dropdown([], value=[], multiselect=True, label="License (empty: any)")
                    columns = gr.CheckboxGroup(list(boards.OPTIONAL_COLUMNS), value=list(boards.DEFAULT_COLUMNS),
                                               label="Columns (Rank, Model, Score and the per-benchmark scores "
                                                     "are always shown)", scale=2)
                unranked = gr.Textbox(label="Not ranked", interactive=False, visible=False, elem_id="unranked")
                tables, pickers, board_tabs = [], [], []
                current = gr.State(0)  # the index of the board tab whose chosen board the plot shows
                with gr.Tabs():
                    for view in tab_views:
                        with gr.Tab(view.label, id=f"board-{view.key}") as board_tab:
                            if view.demo:
                                gr.Markdown(DEMO_NOTE, elem_id="demo-note")
                            if view.key == "task":
                                pickers.append(gr.Dropdown(view.choices, value=view.choices[0] if view.choices
                                                           else None, label="Task", elem_id="task-pick"))
                                task_protocol = gr.Markdown(boards.protocol_text(store, view.choices[0])
                                                            if view.choices else "", elem_id="task-protocol")
                            else:
                                pickers.append(gr.Radio(view.choices, value=view.choices[0] if view.choices
                                                        else None, label="Board", elem_id=f"pick-{view.key}",
                                                        visible=len(view.choices) > 1))
                            tables.append(gr.Dataframe(label=view.table_label, interactive=False,
                                                       elem_id=f"board-{view.key}", max_height=600, wrap=True))
                        board_tabs.append(board_tab)
                task = pickers[[v.key for v in tab_views].index("task")]  # the Per task dropdown
                plot = gr.Plot(label="Score against parameter count", elem_id="score-plot")
                gr.Markdown("Select a row to open its model page. Each track (Text LM, Video LM, each method family) "
                            "has its own overall: a submission is ranked on the boards its run completes. A "
                            "benchmark's score is defined as its track's overall, over its tasks. Runs that differ "
                            "from a task protocol are UNRANKED: they are listed on the Model page with the reason and "
                            "in the Demo runs tab, never on a board.\n\n" + boards.overall_text(store, track_list),
                            elem_id="overall-definition")

            with gr.Tab("Submit", id="submit"):
                if require_login:
                    gr.Markdown(f"Sign in with your Hugging Face account to submit (at most {daily_limit} "
                                "submissions per day).")
                    gr.LoginButton()
                else:
                    gr.Markdown("Running locally: no login needed."
                                + (f" At most {daily_limit} submissions per submitter per day." if daily_limit else ""))
                with gr.Row():
                    results_file = gr.File(label="lm-eval results file (results_*.json)", file_types=[".json"],
                                           elem_id="results-file")
                    samples_files = gr.File(label="Samples files (samples_*.jsonl, one per task: required)",
                                            file_count="multiple", file_types=[".jsonl"], elem_id="samples-files")
                with gr.Row():
                    model_id = gr.Textbox(label="Model id (ORG/NAME on the Hub)", elem_id="model-id", scale=2)
                    revision = gr.Textbox(label="Revision (commit hash, 7-64 hex)", elem_id="revision", scale=2)
                    params = gr.Textbox(label="Parameters (e.g. 135M, 7B)", elem_id="params")
                with gr.Row():
                    precision = gr.Dropdown(PRECISIONS, value=None, label="Precision", elem_id="precision")
                    model_type = gr.Dropdown(MODEL_TYPES, value=None, label="Model type", elem_id="model-type")
                    license_ = gr.Dropdown(LICENSES, value=None, allow_custom_value=True, label="License",
                                           elem_id="license")
                    submitter = gr.Textbox(label="Submitter", value="local", visible=not require_login,
                                           elem_id="submitter")
                submit = gr.Button("Submit", variant="primary", elem_id="submit-button")
                verdict = gr.Textbox(label="Verdict", interactive=False, lines=3, elem_id="verdict")
                # an empty frame would show Gradio's placeholder headers (1 2 3): name the columns instead
                submitted_scores = gr.Dataframe(None, headers=list(model_page.entry_scores(store, None).columns),
                                                label="Scores read from the file", interactive=False,
                                                elem_id="submitted-scores", wrap=True)

            with gr.Tab("Model page", id="model"):
                pick = gr.Dropdown([], value=None, label="Submission", elem_id="model-pick")
                about = gr.Dataframe(label="Submission", interactive=False, wrap=True, elem_id="model-about")
                breakdown = gr.Dataframe(label="Per-task scores", interactive=False, elem_id="model-breakdown",
                                         wrap=True)
                signatures = gr.Dataframe(label="Failure signatures that fire (from the samples; 95% intervals)",
                                          interactive=False, elem_id="model-signatures", wrap=True, max_height=420)
                command = gr.Code(label="Reproduce the run", language="shell", interactive=False)
                settings = gr.Dataframe(label="Run configuration", interactive=False, wrap=True,
                                        elem_id="model-settings", max_height=700)
                chat_template = gr.Code(label="Chat template", language="jinja2", interactive=False,
                                        elem_id="model-chat-template")

            with gr.Tab("Datasets", id="datasets"):
                gr.Markdown("Read-only SQL over the built dataset folders: one view `<resource>.<config>` per "
                            f"config; one SELECT at a time, at most {dataset_sql.MAX_SQL_ROWS} rows shown.")
                views = gr.Dataframe(label="Views", interactive=False, elem_id="views", max_height=320, wrap=True)
                sql = gr.Code(value=DEFAULT_SQL, language="sql", label="SQL", interactive=True, lines=6, elem_id="sql")
                with gr.Row():
                    run_button = gr.Button("Run", variant="primary", elem_id="run-sql", scale=0)
                    sql_status = gr.Textbox(label="Status", interactive=False, elem_id="sql-status", scale=4)
                sql_result = gr.Dataframe(label="Result", interactive=False, wrap=True, elem_id="sql-result")

        # ------------------------------------------------------------ leaderboard
        filter_inputs = [raw, current, search, min_b, max_b, precisions, types, licenses, columns, *pickers]
        cache = boards.BoardCache(store, track_list, tasks)

        def load() -> tuple[dict[str, pl.DataFrame], Any, Any]:
            loaded, problems = cache.get()
            return (loaded, gr.Dropdown(choices=boards.licenses_of(loaded)),
                    gr.Textbox(value="\n".join(problems), visible=bool(problems)))

        def load_fresh() -> tuple[dict[str, pl.DataFrame], Any, Any]:
            cache.clear()
            return load()

        def busiest_task(loaded: dict[str, pl.DataFrame]) -> Any:
            """The Per task tab opens on the task with the most submissions, not on an empty board."""
            best = boards.most_submitted(loaded, tasks)
            return gr.Dropdown(value=best) if best else gr.Dropdown()

        def render(loaded: dict[str, pl.DataFrame], active: int, text: str, low: float | None, high: float | None,
                   precision_values: list[str], type_values: list[str], license_values: list[str], chosen: list[str],
                   *picked: str | None) -> list[Any]:
            filters = boards.Filters(text, low or None, high or None, precision_values, type_values,
                                    license_values or None)
            shown = {name: boards.filter_board(board, filters) for name, board in loaded.items()}
            names = [view.board(name) for view, name in zip(tab_views, picked, strict=True)]
            frames = [boards.format_board(shown.get(name, boards.empty_board()),
                                         {part: shown[part] for part in parts.get(name, []) if part in shown})
                      for name in names]
            frames = [boards.select_columns(frame, chosen) for frame in frames]
            frames = [boards.demo_view(frame) if view.demo else frame
                      for view, frame in zip(tab_views, frames, strict=True)]
            plotted = names[active] if 0 <= active < len(names) else ""
            return ([gr.Dataframe(value=frame, datatype=boards.column_types(frame)) for frame in frames]
                    + [boards.score_plot(shown.get(plotted, boards.empty_board()), plotted)])

        def opener(view: BoardView) -> Any:
            def open_model(loaded: dict[str, pl.DataFrame], picked: str | None, shown: Any,
                           event: gr.SelectData) -> tuple[Any, Any]:
                row = dict(zip(list(shown.columns), event.row_value or [], strict=False))
                submission = boards.submission_of_row(row, loaded.get(view.board(picked), boards.empty_board()))
                if submission is None:
                    return gr.Dropdown(), gr.Tabs()
                return gr.Dropdown(choices=model_choices(), value=submission), gr.Tabs(selected="model")

            return open_model

        reload = {"fn": load, "inputs": None, "outputs": [raw, licenses, unranked]}
        redraw = {"fn": render, "inputs": filter_inputs, "outputs": [*tables, plot]}
        demo.load(**reload).then(busiest_task, raw, task).then(**redraw)
        refresh.click(load_fresh, None, reload["outputs"]).then(**redraw)
        task.change(lambda name: boards.protocol_text(store, name), task, task_protocol)
        gr.on([*(p.change for p in pickers), search.change, min_b.change, max_b.change, precisions.change,
               types.change, licenses.change, columns.change], **redraw)
        for index, board_tab in enumerate(board_tabs):
            board_tab.select(boards.constant(index), None, current).then(**redraw)

        # ------------------------------------------------------------ submit
        def fill_from(path: str | None) -> list[Any]:
            guess = submitting.prefill(submitting.uploaded_results(path)) if path else {}
            return [gr.Textbox(value=guess["model_id"]) if "model_id" in guess else gr.Textbox(),
                    gr.Textbox(value=guess["revision"]) if "revision" in guess else gr.Textbox(),
                    gr.Textbox(value=submitting.params_text(guess["params"])) if "params" in guess else gr.Textbox(),
                    gr.Dropdown(value=guess["precision"]) if "precision" in guess else gr.Dropdown()]

        results_file.upload(fill_from, results_file, [model_id, revision, params, precision])
        results_file.upload(lambda path: submitting.upload_feedback(Path(path)) if path else "", results_file,
                            verdict)

        def do_submit(user: str | None, *fields: Any) -> tuple[str, Any]:
            if user is None:
                return "Sign in with Hugging Face to submit.", None
            text, entry = submitting.submit(store, user, daily_limit, *fields)
            if entry is not None:
                cache.clear()
            return text, None if entry is None else model_page.entry_scores(store, entry.id)

        def submit_on_space(results_path: str | None, samples: list[str] | None, model_id: str, revision: str,
                            precision: str | None, params: str, model_type: str | None, license_: str | None,
                            profile: gr.OAuthProfile | None) -> tuple[str, Any]:
            return do_submit(profile.username if profile else None, results_path, samples, model_id, revision,
                             precision, params, model_type, license_)

        def submit_locally(results_path: str | None, samples: list[str] | None, model_id: str, revision: str,
                           precision: str | None, params: str, model_type: str | None, license_: str | None,
                           name: str) -> tuple[str, Any]:
            return do_submit((name or "").strip() or "local", results_path, samples, model_id, revision, precision,
                             params, model_type, license_)

        submit_inputs = [results_file, samples_files, model_id, revision, precision, params, model_type, license_]
        handler = submit_on_space if require_login else submit_locally
        if not require_login:
            submit_inputs.append(submitter)
        # One submission at a time (all users): the daily-limit count cannot race.
        submitted = submit.click(handler, submit_inputs, [verdict, submitted_scores], concurrency_limit=1)
        submitted.then(**reload).then(**redraw)

        # ------------------------------------------------------------ model page
        def model_choices() -> list[tuple[str, int]]:
            return model_page.submission_choices(store.entries(include_rejected=False))

        def first_model() -> Any:
            choices = model_choices()
            return gr.Dropdown(choices=choices, value=choices[0][1] if choices else None)

        def show_model(submission_id: int | None, loaded: dict[str, pl.DataFrame]) -> list[Any]:
            page = model_page.model_page(store, submission_id, loaded)
            return [page.about, page.breakdown, page.signatures, page.command, page.settings, page.chat_template]

        model_outputs = [about, breakdown, signatures, command, settings, chat_template]
        for view, picker, table in zip(tab_views, pickers, tables, strict=True):
            table.select(opener(view), [raw, picker, table], [pick, tabs])
        pick.change(show_model, [pick, raw], model_outputs)
        demo.load(first_model, None, pick)
        submitted.then(lambda: gr.Dropdown(choices=model_choices()), None, pick)

        # ------------------------------------------------------------ datasets
        def list_views() -> pl.DataFrame:
            return dataset_sql.dataset_views(dataset_folders(data_root))

        def query(text: str) -> tuple[str, Any]:
            frame, status = dataset_sql.run_sql(text, data_root)
            if frame.width == 0:  # an error: one empty column that says so, not Gradio's placeholder headers
                frame = pl.DataFrame({"no result": pl.Series([], dtype=pl.String)})
            return status, gr.Dataframe(value=frame, datatype=boards.column_types(frame))

        sql_queue = {"concurrency_limit": dataset_sql.SQL_EVENTS, "concurrency_id": "sql"}  # they queue in sql_workers
        demo.load(list_views, None, views).then(query, sql, [sql_status, sql_result], **sql_queue)
        run_button.click(query, sql, [sql_status, sql_result], **sql_queue)
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
