"""The Space's four tabs, one function each: the tab's components and the events it owns.

:func:`neurips26.space.app.build_app` calls :func:`leaderboard_tab`, :func:`submit_tab`, :func:`model_tab` and
:func:`datasets_tab` in that order inside its ``gr.Blocks``. What a later tab wires to an earlier one is handed on
as the earlier tab's return value: a submission redraws the boards (:class:`LeaderboardTab`'s ``reload`` and
``redraw``), and a board row opens its model page (the Model page tab selects rows of the boards' tables).
The logic lives in the Gradio-free modules (``boards``, ``submitting``, ``model_page``, ``dataset_sql``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
import polars as pl
from neurips26.leaderboard import modelinfo
from neurips26.leaderboard.store import Store
from neurips26.leaderboard.tracks import Track
from neurips26.space import boards, dataset_sql, model_page, submitting
from neurips26.space.boards import BoardView

from neurips26.sql import dataset_folders

PRECISIONS = list(modelinfo.PRECISIONS)
MODEL_TYPES = list(modelinfo.MODEL_TYPES)
LICENSES = ["apache-2.0", "mit", "bsd-3-clause", "cc-by-4.0", "cc-by-nc-4.0", "llama3.1", "gemma", "other"]
DEFAULT_SQL = "SELECT state, kind, count(*) AS jurisdictions FROM locus.jurisdictions GROUP BY ALL ORDER BY ALL"

DEMO_NOTE = ("**Demo runs: NOT RANKED.** Runs that differ from a task protocol (a `--limit`, the demo sample's data, "
             "another few-shot or chat template setting), such as `scripts/demo`'s run of the embedded model. They "
             "are shown here so you can look at them, ordered by score, with their 95% intervals; they are never "
             "mixed with the ranked boards. Each run's reasons are on its Model page.")

BOARD_NOTE = ("Select a row to open its model page. Each track (Text LM, Video LM, each method family) has its own "
              "overall: a submission is ranked on the boards its run completes. A benchmark's score is defined as its "
              "track's overall, over its tasks. Runs that differ from a task protocol are UNRANKED: they are listed "
              "on the Model page with the reason and in the Demo runs tab, never on a board.\n\n")


@dataclass(frozen=True)
class Context:
    """What the tabs read: the app, the store, the dataset folders and the board layout."""

    demo: gr.Blocks
    store: Store
    data_root: Path
    require_login: bool
    daily_limit: int | None
    tasks: list[str]
    track_list: list[Track]
    tab_views: list[BoardView]
    parts: dict[str, list[str]]


@dataclass(frozen=True)
class LeaderboardTab:
    """The Leaderboard tab's parts that other tabs use: the loaded boards, one table and picker per board tab, and
    the events (as ``.then`` keyword arguments) that reload the boards and redraw the tables."""

    raw: gr.State
    tables: list[gr.Dataframe]
    pickers: list[gr.Dropdown | gr.Radio]
    cache: boards.BoardCache
    reload: dict[str, Any]
    redraw: dict[str, Any]


def leaderboard_tab(ctx: Context) -> LeaderboardTab:
    """The Leaderboard tab: filters, one tab per board view (a track, the method families, Per task, Demo runs),
    the score/size plot and the definition of each overall; boards load with the app and on Refresh."""
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
        task_protocol = None
        with gr.Tabs():
            for view in ctx.tab_views:
                with gr.Tab(view.label, id=f"board-{view.key}") as board_tab:
                    first = view.choices[0] if view.choices else None
                    if view.demo:
                        gr.Markdown(DEMO_NOTE, elem_id="demo-note")
                    if view.key == "task":
                        pickers.append(gr.Dropdown(view.choices, value=first, label="Task", elem_id="task-pick"))
                        task_protocol = gr.Markdown(boards.protocol_text(ctx.store, first) if first else "",
                                                    elem_id="task-protocol")
                    else:
                        pickers.append(gr.Radio(view.choices, value=first, label="Board", elem_id=f"pick-{view.key}",
                                                visible=len(view.choices) > 1))
                    tables.append(gr.Dataframe(label=view.table_label, interactive=False,
                                               elem_id=f"board-{view.key}", max_height=600, wrap=True))
                board_tabs.append(board_tab)
        task = pickers[[v.key for v in ctx.tab_views].index("task")]  # the Per task dropdown
        plot = gr.Plot(label="Score against parameter count", elem_id="score-plot")
        gr.Markdown(BOARD_NOTE + boards.overall_text(ctx.store, ctx.track_list), elem_id="overall-definition")

    cache = boards.BoardCache(ctx.store, ctx.track_list, ctx.tasks)

    def load() -> tuple[dict[str, pl.DataFrame], Any, Any]:
        loaded, problems = cache.get()
        return (loaded, gr.Dropdown(choices=boards.licenses_of(loaded)),
                gr.Textbox(value="\n".join(problems), visible=bool(problems)))

    def load_fresh() -> tuple[dict[str, pl.DataFrame], Any, Any]:
        cache.clear()
        return load()

    def busiest_task(loaded: dict[str, pl.DataFrame]) -> Any:
        """The Per task tab opens on the task with the most submissions, not on an empty board."""
        best = boards.most_submitted(loaded, ctx.tasks)
        return gr.Dropdown(value=best) if best else gr.Dropdown()

    def render(loaded: dict[str, pl.DataFrame], active: int, text: str, low: float | None, high: float | None,
               precision_values: list[str], type_values: list[str], license_values: list[str], chosen: list[str],
               *picked: str | None) -> list[Any]:
        filters = boards.Filters(text, low or None, high or None, precision_values, type_values,
                                 license_values or None)
        shown = {name: boards.filter_board(board, filters) for name, board in loaded.items()}
        names = [view.board(name) for view, name in zip(ctx.tab_views, picked, strict=True)]
        frames = [boards.format_board(shown.get(name, boards.empty_board()),
                                      {part: shown[part] for part in ctx.parts.get(name, []) if part in shown})
                  for name in names]
        frames = [boards.select_columns(frame, chosen) for frame in frames]
        frames = [boards.demo_view(frame) if view.demo else frame
                  for view, frame in zip(ctx.tab_views, frames, strict=True)]
        plotted = names[active] if 0 <= active < len(names) else ""
        return ([gr.Dataframe(value=frame, datatype=boards.column_types(frame)) for frame in frames]
                + [boards.score_plot(shown.get(plotted, boards.empty_board()), plotted)])

    filter_inputs = [raw, current, search, min_b, max_b, precisions, types, licenses, columns, *pickers]
    reload = {"fn": load, "inputs": None, "outputs": [raw, licenses, unranked]}
    redraw = {"fn": render, "inputs": filter_inputs, "outputs": [*tables, plot]}
    ctx.demo.load(**reload).then(busiest_task, raw, task).then(**redraw)
    refresh.click(load_fresh, None, reload["outputs"]).then(**redraw)
    if task_protocol is not None:
        task.change(lambda name: boards.protocol_text(ctx.store, name), task, task_protocol)
    gr.on([*(p.change for p in pickers), search.change, min_b.change, max_b.change, precisions.change,
           types.change, licenses.change, columns.change], **redraw)
    for index, board_tab in enumerate(board_tabs):
        board_tab.select(boards.constant(index), None, current).then(**redraw)
    return LeaderboardTab(raw, tables, pickers, cache, reload, redraw)


def submit_tab(ctx: Context, board: LeaderboardTab) -> Any:
    """The Submit tab: a results file and its samples, the metadata (prefilled from the file), the verdict and the
    scores read from the file; a stored submission reloads the boards. Returns the submit event, for ``.then``."""
    with gr.Tab("Submit", id="submit"):
        if ctx.require_login:
            gr.Markdown(f"Sign in with your Hugging Face account to submit (at most {ctx.daily_limit} "
                        "submissions per day).")
            gr.LoginButton()
        else:
            gr.Markdown("Running locally: no login needed."
                        + (f" At most {ctx.daily_limit} submissions per submitter per day." if ctx.daily_limit else ""))
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
            license_ = gr.Dropdown(LICENSES, value=None, allow_custom_value=True, label="License", elem_id="license")
            submitter = gr.Textbox(label="Submitter", value="local", visible=not ctx.require_login,
                                   elem_id="submitter")
        submit = gr.Button("Submit", variant="primary", elem_id="submit-button")
        verdict = gr.Textbox(label="Verdict", interactive=False, lines=3, elem_id="verdict")
        # an empty frame would show Gradio's placeholder headers (1 2 3): name the columns instead
        submitted_scores = gr.Dataframe(None, headers=list(model_page.entry_scores(ctx.store, None).columns),
                                        label="Scores read from the file", interactive=False,
                                        elem_id="submitted-scores", wrap=True)

    def fill_from(path: str | None) -> list[Any]:
        guess = submitting.prefill(submitting.uploaded_results(path)) if path else {}
        return [gr.Textbox(value=guess["model_id"]) if "model_id" in guess else gr.Textbox(),
                gr.Textbox(value=guess["revision"]) if "revision" in guess else gr.Textbox(),
                gr.Textbox(value=submitting.params_text(guess["params"])) if "params" in guess else gr.Textbox(),
                gr.Dropdown(value=guess["precision"]) if "precision" in guess else gr.Dropdown()]

    results_file.upload(fill_from, results_file, [model_id, revision, params, precision])
    results_file.upload(lambda path: submitting.upload_feedback(Path(path)) if path else "", results_file, verdict)

    def do_submit(user: str | None, *fields: Any) -> tuple[str, Any]:
        if user is None:
            return "Sign in with Hugging Face to submit.", None
        text, entry = submitting.submit(ctx.store, user, ctx.daily_limit, *fields)
        if entry is not None:
            board.cache.clear()
        return text, None if entry is None else model_page.entry_scores(ctx.store, entry.id)

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

    inputs = [results_file, samples_files, model_id, revision, precision, params, model_type, license_]
    handler = submit_on_space if ctx.require_login else submit_locally
    if not ctx.require_login:
        inputs.append(submitter)
    # One submission at a time (all users): the daily-limit count cannot race.
    submitted = submit.click(handler, inputs, [verdict, submitted_scores], concurrency_limit=1)
    submitted.then(**board.reload).then(**board.redraw)
    return submitted


def model_tab(ctx: Context, board: LeaderboardTab, submitted: Any, tabs: gr.Tabs) -> None:
    """The Model page tab: one submission's details, per-task scores, failure signatures, the command that
    reproduces its run, its configuration and chat template. A board row selected opens its page; a submission
    adds itself to the choices."""
    with gr.Tab("Model page", id="model"):
        pick = gr.Dropdown([], value=None, label="Submission", elem_id="model-pick")
        about = gr.Dataframe(label="Submission", interactive=False, wrap=True, elem_id="model-about")
        breakdown = gr.Dataframe(label="Per-task scores", interactive=False, elem_id="model-breakdown", wrap=True)
        signatures = gr.Dataframe(label="Failure signatures that fire (from the samples; 95% intervals)",
                                  interactive=False, elem_id="model-signatures", wrap=True, max_height=420)
        command = gr.Code(label="Reproduce the run", language="shell", interactive=False)
        settings = gr.Dataframe(label="Run configuration", interactive=False, wrap=True, elem_id="model-settings",
                                max_height=700)
        chat_template = gr.Code(label="Chat template", language="jinja2", interactive=False,
                                elem_id="model-chat-template")

    def model_choices() -> list[tuple[str, int]]:
        return model_page.submission_choices(ctx.store.entries(include_rejected=False))

    def first_model() -> Any:
        choices = model_choices()
        return gr.Dropdown(choices=choices, value=choices[0][1] if choices else None)

    def show_model(submission_id: int | None, loaded: dict[str, pl.DataFrame]) -> list[Any]:
        page = model_page.model_page(ctx.store, submission_id, loaded)
        return [page.about, page.breakdown, page.signatures, page.command, page.settings, page.chat_template]

    def opener(view: BoardView) -> Any:
        def open_model(loaded: dict[str, pl.DataFrame], picked: str | None, shown: Any,
                       event: gr.SelectData) -> tuple[Any, Any]:
            row = dict(zip(list(shown.columns), event.row_value or [], strict=False))
            submission = boards.submission_of_row(row, loaded.get(view.board(picked), boards.empty_board()))
            if submission is None:
                return gr.Dropdown(), gr.Tabs()
            return gr.Dropdown(choices=model_choices(), value=submission), gr.Tabs(selected="model")

        return open_model

    for view, picker, table in zip(ctx.tab_views, board.pickers, board.tables, strict=True):
        table.select(opener(view), [board.raw, picker, table], [pick, tabs])
    pick.change(show_model, [pick, board.raw], [about, breakdown, signatures, command, settings, chat_template])
    ctx.demo.load(first_model, None, pick)
    submitted.then(lambda: gr.Dropdown(choices=model_choices()), None, pick)


def datasets_tab(ctx: Context) -> None:
    """The Datasets tab: the views of the built folders and read-only SQL over them (queued in ``sql_workers``)."""
    with gr.Tab("Datasets", id="datasets"):
        gr.Markdown("Read-only SQL over the built dataset folders: one view `<resource>.<config>` per "
                    f"config; one SELECT at a time, at most {dataset_sql.MAX_SQL_ROWS} rows shown.")
        views = gr.Dataframe(label="Views", interactive=False, elem_id="views", max_height=320, wrap=True)
        sql = gr.Code(value=DEFAULT_SQL, language="sql", label="SQL", interactive=True, lines=6, elem_id="sql")
        with gr.Row():
            run_button = gr.Button("Run", variant="primary", elem_id="run-sql", scale=0)
            sql_status = gr.Textbox(label="Status", interactive=False, elem_id="sql-status", scale=4)
        sql_result = gr.Dataframe(label="Result", interactive=False, wrap=True, elem_id="sql-result")

    def list_views() -> pl.DataFrame:
        return dataset_sql.dataset_views(dataset_folders(ctx.data_root))

    def query(text: str) -> tuple[str, Any]:
        frame, status = dataset_sql.run_sql(text, ctx.data_root)
        if frame.width == 0:  # an error: one empty column that says so, not Gradio's placeholder headers
            frame = pl.DataFrame({"no result": pl.Series([], dtype=pl.String)})
        return status, gr.Dataframe(value=frame, datatype=boards.column_types(frame))

    sql_queue = {"concurrency_limit": dataset_sql.SQL_EVENTS, "concurrency_id": "sql"}  # they queue in sql_workers
    ctx.demo.load(list_views, None, views).then(query, sql, [sql_status, sql_result], **sql_queue)
    run_button.click(query, sql, [sql_status, sql_result], **sql_queue)
