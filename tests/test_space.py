"""The Space's tabs (filters, columns, limits, run settings, SQL), its store wiring, the app and its deployment."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import tomllib
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from importlib.metadata import packages_distributions
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gradio as gr
import polars as pl
import pyarrow as pa
import pytest
import typer
import yaml
from neurips26.corpora.locus.build import build as build_locus
from neurips26.leaderboard import diagnosis, tracks
from neurips26.leaderboard.catalog import shipped_tasks
from neurips26.leaderboard.store import Store
from neurips26.space import app, boards, dataset_sql, model_page, submitting
from neurips26.space.bundle import bundle
from neurips26.space.serve import serve
from typer.testing import CliRunner

from neurips26.errors import UserError
from neurips26.stats import wilson
from tests.board_fixtures import protocol_tasks, real_run

ROOT = Path(__file__).resolve().parents[1]
MODEL = "org/model-7b"


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real lm-eval run made complete (see ``tests.board_fixtures.real_run``)."""
    return real_run(tmp_path_factory.mktemp("space_eval"))


@pytest.fixture(scope="module")
def board_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return protocol_tasks(tmp_path_factory.mktemp("space_tasks"))
REVISION = "0123456789abcdef0123456789abcdef01234567"


def board(*rows: dict[str, Any]) -> pl.DataFrame:
    """A raw leaderboard (``ranking.leaderboard`` columns) from partial rows."""
    base = {"model_id": "org/m", "revision": REVISION, "precision": "bfloat16", "params": 7_000_000_000,
            "license": "apache-2.0", "model_type": "pretrained", "submission_id": 1, "score": 0.5, "stderr": 0.05,
            "ci_low": 0.4, "ci_high": 0.6, "rank": 1, "rank_best": 1, "rank_worst": 1, "n": 100}
    return pl.DataFrame([{**base, **row} for row in rows], schema=boards.BOARD_SCHEMA)


SAMPLE = board(
    {"model_id": "org/Small-135M", "params": 135_000_000, "precision": "float32", "model_type": "instruction-tuned",
     "license": "apache-2.0", "submission_id": 1, "score": 0.30, "ci_low": 0.2, "ci_high": 0.4, "rank": 3,
     "rank_best": 2, "rank_worst": 3},
    {"model_id": "org/mid-1.5b", "params": 1_500_000_000, "precision": "bfloat16", "model_type": "pretrained",
     "license": "mit", "submission_id": 2, "score": 0.45, "ci_low": 0.35, "ci_high": 0.55, "rank": 2,
     "rank_best": 1, "rank_worst": 3},
    {"model_id": "other/big-70b", "params": 70_000_000_000, "precision": "int4", "model_type": "merged",
     "license": "llama3.1", "submission_id": 3, "score": 0.60, "ci_low": 0.5, "ci_high": 0.7, "rank": 1,
     "rank_best": 1, "rank_worst": 2},
)


# -- leaderboard tables ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("filters", "expected"), [
    (boards.Filters(), [1, 2, 3]),
    (boards.Filters(search="SMALL"), [1]),
    (boards.Filters(search="small, big"), [1, 3]),
    (boards.Filters(search="org/"), [1, 2]),
    (boards.Filters(min_params_b=1.5), [2, 3]),
    (boards.Filters(max_params_b=1.5), [1, 2]),
    (boards.Filters(min_params_b=0.1, max_params_b=2), [1, 2]),
    (boards.Filters(precisions=["int4", "float32"]), [1, 3]),
    (boards.Filters(precisions=[]), []),
    (boards.Filters(model_types=["pretrained"]), [2]),
    (boards.Filters(licenses=["mit", "llama3.1"]), [2, 3]),
    (boards.Filters(search="org", precisions=["bfloat16"], licenses=["mit"]), [2]),
])
def test_filters(filters: boards.Filters, expected: list[int]) -> None:
    assert sorted(boards.filter_board(SAMPLE, filters)["submission_id"].to_list()) == expected


def test_format_board_shows_intervals_rank_ranges_and_task_columns() -> None:
    task_scores = {"task_a": board({"submission_id": 3, "score": 0.71234}), "task_b": board({"submission_id": 1})}
    frame = boards.format_board(SAMPLE, task_scores)
    assert frame.columns[:6] == ["Rank", "Rank range", "Model", boards.SCORE, "task_a", "task_b"]
    assert frame["Model"].to_list() == ["other/big-70b", "org/mid-1.5b", "org/Small-135M"]  # by rank
    assert frame["Rank range"].to_list() == ["1–2", "1–3", "2–3"]
    # one number format, the interval beside the score in one cell
    assert frame[boards.SCORE].to_list() == ["0.600 [0.500, 0.700]", "0.450 [0.350, 0.550]", "0.300 [0.200, 0.400]"]
    assert frame["Params (B)"].to_list() == [70.0, 1.5, 0.135]
    assert frame["task_a"].to_list() == ["0.712", "", ""]
    assert frame["task_b"].to_list() == ["", "", "0.500"]
    assert boards.format_board(boards.empty_board()).height == 0


@pytest.mark.parametrize(("value", "text"), [(1.0, "1.00"), (0.5, "0.500"), (0.1858, "0.186"), (0.0, "0.00"),
                                             (12.345, "12.3"), (100.0, "100"), (0.000123, "0.000123"), (None, "")])
def test_one_number_format(value: float | None, text: str) -> None:
    assert boards.sig3(value) == text


def test_column_choice_keeps_rank_model_score_and_task_columns() -> None:
    frame = boards.format_board(SAMPLE, {"task_a": SAMPLE})
    assert boards.select_columns(frame, []).columns == ["Rank", "Model", boards.SCORE, "task_a"]
    chosen = boards.select_columns(frame, ["License", "± SE", "unknown"])
    assert chosen.columns == ["Rank", "Model", boards.SCORE, "task_a", "± SE", "License"]
    assert set(boards.column_types(chosen)) <= {"str", "number"}  # never markdown or html
    assert boards.column_types(chosen) == ["number", "str", "str", "str", "str", "str"]


def test_per_task_opens_on_the_task_with_most_submissions() -> None:
    loaded = {"task_a": board(), "task_b": SAMPLE, "task_c": board({"submission_id": 1})}
    assert boards.most_submitted(loaded, ["task_a", "task_b", "task_c"]) == "task_b"
    assert boards.most_submitted({}, ["task_a", "task_b"]) == "task_a"
    assert boards.most_submitted({}, []) is None


def test_a_clicked_row_leads_to_its_submission() -> None:
    assert boards.submission_of_row({"Model": "org/mid-1.5b", "Submission": 2}, SAMPLE) == 2
    assert boards.submission_of_row({"Model": "other/big-70b", "Precision": "int4"}, SAMPLE) == 3
    assert boards.submission_of_row({"Model": "nobody/none"}, SAMPLE) is None


def test_score_plot_draws_points_or_says_there_are_none() -> None:
    fig = boards.score_plot(SAMPLE, "Overall $x$")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and len(ax.texts) == 3
    assert boards.score_plot(boards.empty_board(), "Overall").axes[0].texts[0].get_text() == "No submissions to plot"


def test_plot_labels_never_overlap() -> None:
    crowded = pl.concat([board({"model_id": f"org/model-{i}" + "-Instruct" * (i % 4), "submission_id": i,
                                "params": 7_000_000_000 + i, "score": 0.5 + i * 1e-4, "ci_low": 0.45,
                                "ci_high": 0.55}) for i in range(12)])
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    fig = boards.score_plot(crowded, "Overall")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    boxes = [Text.get_window_extent(text, renderer) for text in fig.axes[0].texts]  # the text, not its line
    assert len(boxes) == 12
    assert all(box.x1 <= fig.bbox.x1 and box.y0 >= 0 and box.y1 <= fig.bbox.y1 for box in boxes), "a label is cut"
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), "two model labels overlap"


@pytest.mark.parametrize("wanted", [[0.5] * 5, [1.0, 0.99, 0.98, 0.1, 0.0], [0.0] * 3])
def test_label_heights_keep_their_gap_and_order(wanted: list[float]) -> None:
    placed = boards.label_heights(wanted, gap=0.1)
    assert all(a - b >= 0.1 - 1e-9 for a, b in zip(placed, placed[1:], strict=False))
    assert min(placed) >= 0


# -- submitting --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "count"), [
    ("134515008", 134_515_008), ("135M", 135_000_000), ("7B", 7_000_000_000), ("1.5b", 1_500_000_000),
    (" 70 B ", 70_000_000_000), ("2k", 2000), (7, 7),
])
def test_parse_params(text: Any, count: int) -> None:
    assert submitting.parse_params(text) == count


@pytest.mark.parametrize("text", ["", "lots", "7 GB", "-5", None])
def test_parse_params_refuses(text: Any) -> None:
    with pytest.raises(ValueError, match="is not a count"):
        submitting.parse_params(text)


def test_daily_limit_counts_the_submitters_utc_day() -> None:
    now = datetime(2026, 5, 2, 0, 30, tzinfo=UTC)
    entries = [SimpleNamespace(submitter="alice", submitted_at=now - timedelta(minutes=10)),
               SimpleNamespace(submitter="alice", submitted_at="2026-05-02T00:05:00"),  # naive ISO is UTC
               SimpleNamespace(submitter="alice", submitted_at=now - timedelta(hours=1)),  # yesterday (UTC)
               SimpleNamespace(submitter="bob", submitted_at=now)]
    assert submitting.submissions_on(entries, "alice", now.date()) == 2
    assert submitting.limit_reached(entries, "alice", 3, now) is None
    assert submitting.limit_reached(entries, "alice", None, now) is None
    refused = submitting.limit_reached(entries, "alice", 2, now)
    assert refused is not None and refused.startswith("LIMIT:") and "daily limit is 2" in refused
    assert submitting.limit_reached(entries, "bob", 2, now) is None
    later = datetime(2026, 5, 2, 1, 0, tzinfo=timezone(timedelta(hours=2)))  # 2026-05-01 23:00 UTC
    assert submitting.submissions_on(entries, "alice", submitting.as_utc(later).date()) == 1
    assert submitting.limit_reached(entries, "alice", 1, later) is not None


def results_file(value: float = 0.5, **changes: Any) -> dict[str, Any]:
    """A results dict as lm-eval 0.4 writes it for our tasks (every metric ``value`` or the nearest value in its
    range, stderr 0.05, n 20)."""
    specs = shipped_tasks()
    data: dict[str, Any] = {
        "results": {name: {"alias": name, **{f"{m},{spec.filters[0]}": min(max(value, r.lo), r.hi)
                                             for m, r in spec.metrics.items()},
                           **{f"{m}_stderr,{spec.filters[0]}": 0.05 for m in spec.metrics}}
                    for name, spec in specs.items()},
        "configs": {name: {"task": name, "num_fewshot": 3, "output_type": spec.output_type, **spec.prompt}
                    for name, spec in specs.items()},
        "versions": {name: spec.version for name, spec in specs.items()},
        "n-shot": {name: 3 for name in specs},
        "n-samples": {name: {"original": 40, "effective": 20} for name in specs},
        "config": {"model": "hf", "model_args": "pretrained=/models/local,dtype=bfloat16,trust_remote_code=True",
                   "model_num_parameters": 7_000_000_000, "model_dtype": "torch.bfloat16", "model_sha": REVISION,
                   "batch_size": "auto", "device": "cuda:0", "limit": None, "gen_kwargs": None, "random_seed": 0,
                   "numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234},
        "lm_eval_version": "0.4.13", "transformers_version": "5.24.0", "date": 1_777_000_000.5,
        "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}", "chat_template_sha": "c0ffee",
        "system_instruction": "Answer briefly.", "fewshot_as_multiturn": True, "model_name": "/models/local",
    }
    data.update(changes)
    return data


def test_prefill_reads_what_lm_eval_recorded() -> None:
    assert submitting.prefill(results_file()) == {"revision": REVISION, "precision": "bfloat16",
                                                  "params": 7_000_000_000}
    hub = results_file(config={"model_args": {"pretrained": "org/name", "revision": "abc1234"}})
    assert submitting.prefill(hub) == {"model_id": "org/name", "revision": "abc1234"}
    assert submitting.prefill({}) == {}


def test_run_settings_and_reproduce_command() -> None:
    task = sorted(shipped_tasks())[0]
    data = results_file()
    data["configs"][task]["generation_kwargs"] = {"until": ["\n"], "max_gen_toks": 32}
    settings = {(r["scope"], r["setting"]): r["value"] for r in model_page.run_settings(data).to_dicts()}
    assert settings[("run", "lm_eval_version")] == "0.4.13"
    assert settings[("run", "date")] == "2026-04-24 03:06:40 UTC"
    assert settings[("chat", "chat template applied")] == "true"
    assert settings[("chat", "chat_template_sha")] == "c0ffee"
    assert settings[(task, "num_fewshot")] == "3"
    assert settings[(task, "generation_kwargs")] == '{"max_gen_toks": 32, "until": ["\\n"]}'
    assert settings[(task, "samples (effective of original)")] == "20 of 40"
    assert ("run", "limit") not in settings  # unset values are left out
    lines = model_page.reproduce_command(data, MODEL, REVISION).split(" \\\n  ")
    assert lines[:3] == ["lm_eval run", '--include_path "$(neurips26 tasks --path)"',
                         f"--tasks {','.join(sorted(shipped_tasks()))}"]
    # model_args from the file: loading options only (no trust_remote_code), the submission's model and revision
    assert f"--model_args pretrained={MODEL},revision={REVISION},dtype=bfloat16" in lines
    for line in ("--num_fewshot 3", "--batch_size auto", "--apply_chat_template", "--fewshot_as_multiturn",
                 "--system_instruction 'Answer briefly.'", "--seed 0,1234,1234,1234", "--log_samples"):
        assert line in lines
    assert not any(line.startswith("--limit") for line in lines)
    data["n-shot"][task] = 0
    command = model_page.reproduce_command(data, MODEL, REVISION)
    assert "--num_fewshot" not in command and command.endswith("run each task on its own")


def test_submit_through_the_store(tmp_path: Path, real: dict[str, Any], board_tasks: Path) -> None:
    store = Store(tmp_path / "store", tasks_dir=board_tasks)
    good, nan = real["file"], tmp_path / "results_nan.json"
    samples = list(real["samples"].values())
    broken = json.loads(good.read_text())
    broken["results"]["locus_domain"]["acc,none"] = math.nan
    nan.write_text(json.dumps(broken))
    fields = [MODEL, REVISION[:7], "float32", "135M", "instruction-tuned", "apache-2.0"]

    text, entry = submitting.submit(store, "alice", 3, good, samples, *fields)
    assert text == f"VALID: {MODEL} @ 0123456 (float32) is accepted as submission #1 and is now on the leaderboard."
    assert entry.status == "VALID"
    text, again = submitting.submit(store, "alice", 3, good, samples, *fields)
    assert text.startswith("DUPLICATE: these results were already submitted as #1") and again.id == 1

    text, entry = submitting.submit(store, "alice", 3, good, samples, "bad id!", "xyz", None, "lots", None, "")
    assert entry is None and text.startswith("REJECTED: the submission is not valid\n")
    for label in ("Model id", "Revision", "Precision", "Parameters", "License", "Model type"):
        assert f"\n- {label}: " in text  # the labels the form shows
    assert "- Precision: choose one of float32, float16" in text and "- License: required" in text
    assert "Input should be" not in text and "Value error" not in text and "at least 1 item" not in text
    assert len(store.entries()) == 1  # refused by the form, not stored
    cut = tmp_path / "results_cut.json"
    cut.write_bytes(good.read_bytes()[:100])
    text, entry = submitting.submit(store, "alice", 3, cut, samples, "bad id!", "xyz", None, "lots", None, "")
    assert text.splitlines()[1].startswith("- Results file: results_cut.json is not JSON (line ")  # the file first

    text, entry = submitting.submit(store, "alice", 3, nan, samples, *fields)
    assert entry.status == "REJECTED" and text == f"REJECTED: {entry.reason}" and "not finite" in text
    limited = tmp_path / "results_limited.json"
    limited.write_text(json.dumps(real["limited"]))
    text, entry = submitting.submit(store, "alice", 3, limited, samples, *fields)  # the same model, run with a limit
    assert entry.status == "UNRANKED"
    assert text.startswith("UNRANKED: stored as submission #3 and shown on its model page")
    assert "run with --limit 2" in text
    text, entry = submitting.submit(store, "alice", 3, good, samples, *fields)
    assert entry is None and text.startswith("LIMIT: alice has made 3 submission(s) today")
    assert submitting.submit(store, "bob", 2, None, [], *fields) == ("Choose a results file (results_*.json) first.",
                                                                     None)

    track_list = tracks.tracks(store.tasks, store.groups)
    assert [t.board for t in track_list] == ["locus"]  # a task folder of its own: a track whose overall is its group
    loaded, unranked = boards.load_boards(store, track_list, store.tasks)
    assert set(loaded) == {"locus", *store.tasks, f"{boards.DEMO}locus"}
    ranked = {name for name, board in loaded.items()
              if not name.startswith(boards.DEMO) and board["model_id"].to_list() == [MODEL]}
    assert ranked == {"locus", *store.tasks} and not unranked
    # the limited run (#3, UNRANKED) is on the demo view only, never beside the ranked one
    assert loaded[f"{boards.DEMO}locus"]["submission_id"].to_list() == [3]
    assert boards.licenses_of(loaded) == ["apache-2.0"]
    assert model_page.submission_choices(store.entries()) == [
        (f"{MODEL} @ 0123456 · float32 · #1", 1), (f"{MODEL} @ 0123456 · float32 · #3 · unranked", 3)]
    page = model_page.model_page(store, 1, loaded)
    about = dict(zip(page.about["field"], page.about["value"], strict=True))
    assert about["model"] == MODEL and about["parameters"] == "135,000,000" and about["status"] == "VALID"
    assert about["why not ranked"] == ""
    primary = page.breakdown.filter(pl.col("Task") == "locus_domain").filter(pl.col("Metric") == "acc")
    acc = real["data"]["results"]["locus_domain"]["acc,none"]
    assert primary["Value"].to_list() == [boards.sig3(acc)]
    n = primary["n"][0]
    low, high = wilson(acc, n)  # acc is a proportion: Wilson's interval, wide at the small n of the fixture
    assert primary["95% CI"].to_list() == [boards.interval(float(low), float(high))] and high > low
    assert primary["Rank (range)"].to_list() == ["1 (1)"]
    assert page.breakdown.filter(pl.col("Metric") == "rougeL")["95% CI"].to_list()[0].startswith("[")  # bootstrap
    assert f"pretrained={MODEL}" in page.command
    assert page.chat_template == real["data"]["chat_template"]  # the template the run applied (its own, by default)
    assert "<|im_start|>" in page.chat_template
    # the failure signatures that fire, from the kept samples, with intervals and an example each
    assert page.signatures.columns == list(model_page.SIGNATURE_SCHEMA) and page.signatures.height >= 1
    stored = [r for r in diagnosis.signatures(store, 1) if r["fires"]]
    assert page.signatures["Signature"].to_list() == ([r["signature"] for r in stored] or ["(none fires)"])
    if stored:
        assert page.signatures["Share (95% CI)"][0].endswith("]") and page.signatures["Example"][0].startswith("doc ")
    unranked_page = model_page.model_page(store, 3, loaded)
    about = dict(zip(unranked_page.about["field"], unranked_page.about["value"], strict=True))
    assert about["status"] == "UNRANKED" and "locus_domain: run with --limit 2" in about["why not ranked"]
    assert unranked_page.breakdown.height == 4 and set(unranked_page.breakdown["Rank (range)"]) == {""}
    assert model_page.model_page(store, 99, loaded).about.height == 0
    assert "only submissions with every task in scope are ranked" in boards.overall_text(store, track_list)
    assert boards.protocol_text(store, "locus_domain").startswith(
        f"`locus_domain` v{store.tasks['locus_domain'].version:g}: ranked by **acc** (higher is better, range [0, 1]) "
        "on the test split in full, 0-shot")
    assert f"v{real['data']['versions']['locus_domain']:g}:" in boards.protocol_text(store, "locus_domain")


# -- datasets ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("space_data")
    build_locus(out=root / "locus")
    return root


def test_sql_is_read_only_and_capped(data_root: Path) -> None:
    frame, status = dataset_sql.run_sql("SELECT count(*) AS n FROM locus.sections;", data_root)
    assert status == "1 row(s)" and frame["n"][0] > 10
    frame, status = dataset_sql.run_sql("SELECT section_id FROM locus.sections ORDER BY section_id -- sorted",
                                        data_root, max_rows=5)
    assert status == "showing the first 5 rows" and frame.height == 5
    assert frame["section_id"].to_list() == sorted(frame["section_id"].to_list())
    for sql, message in [("DROP TABLE locus.sections", "only SELECT queries are allowed"),
                         ("SELECT 1; SELECT 2", "exactly one statement"),
                         ("SELECT * FROM read_csv('/etc/passwd')", "error: "),
                         ("SELECT * FROM nowhere", "nowhere")]:
        frame, status = dataset_sql.run_sql(sql, data_root)
        assert status.startswith("error: ") and message in status and frame.is_empty()
    frame, status = dataset_sql.run_sql("  ", data_root)
    assert frame.is_empty() and status.startswith("Write one SELECT")
    views = dataset_sql.dataset_views({"locus": data_root / "locus"})
    assert "locus.sections" in views["view"].to_list()


def test_nested_columns_show_as_text() -> None:
    frame = dataset_sql.displayable(pa.table({"a": [[1, 2], None], "b": [b"\x00\x01", b"x"], "c": ["x", "<b>y</b>"],
                                              "d": [date(2026, 1, 2), None], "e": [Decimal("1.50"), Decimal("2")]}))
    assert frame.to_dicts() == [{"a": "[1, 2]", "b": "0001", "c": "x", "d": "2026-01-02", "e": 1.5},
                                {"a": None, "b": "78", "c": "<b>y</b>", "d": None, "e": 2.0}]
    assert boards.column_types(frame) == ["str", "str", "str", "str", "number"]


# -- the app -----------------------------------------------------------------------------------------------------


def components(demo: gr.Blocks, kind: type) -> list[Any]:
    return [block for block in demo.blocks.values() if isinstance(block, kind)]


def test_local_app_needs_no_login(tmp_path: Path, data_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPACE_ID", raising=False)
    demo = app.build_app(tmp_path / "store", data_root)
    assert not components(demo, gr.LoginButton)
    submitter = next(c for c in components(demo, gr.Textbox) if c.elem_id == "submitter")
    assert submitter.visible is True
    tabs = {c.label for c in components(demo, gr.Tab)}
    groups = boards.task_groups(shipped_tasks())
    # the board tabs follow the tracks: Text LM, Video LM, the method families, Per task, Demo runs (no 29-task
    # overall that no model can complete)
    assert {"Leaderboard", "Submit", "Model page", "Datasets", "Text LM", "Video LM", "Methods", "Per task",
            "Demo runs"} <= tabs and "Overall" not in tabs and not set(groups) & tabs
    text = next(c for c in components(demo, gr.Radio) if c.elem_id == "pick-text")
    assert [value for _, value in text.choices] == ["Text LM overall", "locus", "rolebench_unlearn",
                                                     "locus_analysis_gold"]
    methods = next(c for c in components(demo, gr.Radio) if c.elem_id == "pick-methods")
    assert {"fic", "rediff", "robot_actions"} <= {value for _, value in methods.choices}
    task_pick = next(c for c in components(demo, gr.Dropdown) if c.elem_id == "task-pick")
    assert [value for _, value in task_pick.choices] == [t for members in groups.values() for t in members]


def test_space_app_needs_a_login_and_has_a_daily_limit(tmp_path: Path, data_root: Path, real: dict[str, Any],
                                                        board_tasks: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPACE_ID", "org/leaderboard")
    monkeypatch.setenv("NEURIPS26_DAILY_LIMIT", "1")
    # OAuth's session middleware needs gradio[oauth] (the Space installs it); the routes are not under test here.
    monkeypatch.setattr("gradio.routes.attach_oauth", lambda app: None)
    demo = app.build_app(tmp_path / "store", data_root, tasks_dir=board_tasks)
    assert len(components(demo, gr.LoginButton)) == 1
    submitter = next(c for c in components(demo, gr.Textbox) if c.elem_id == "submitter")
    assert submitter.visible is False
    assert any("at most 1 submissions per day" in (c.value or "") for c in components(demo, gr.Markdown))

    submit = next(f.fn for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "submit_on_space")
    assert gr.utils.is_special_typed_parameter("profile", gr.utils.get_type_hints(submit))  # Gradio injects it
    fields = [real["file"], list(real["samples"].values()), MODEL, REVISION, "float32", "135M", "pretrained",
              "apache-2.0"]
    assert submit(*fields, profile=None) == ("Sign in with Hugging Face to submit.", None)
    alice = gr.OAuthProfile({"name": "Alice", "preferred_username": "alice", "profile": "", "picture": ""})
    text, scores = submit(*fields, profile=alice)
    assert text.startswith("VALID") and scores.height > 0
    assert [e.submitter for e in Store(tmp_path / "store").entries()] == ["alice"]
    text, _ = submit(*fields[:2], "org/other", *fields[3:], profile=alice)
    assert text.startswith("LIMIT: alice has made 1 submission(s) today")
    monkeypatch.delenv("NEURIPS26_DAILY_LIMIT")
    assert app.space_daily_limit() == 5


def test_serve_command(tmp_path: Path, data_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launched: dict[str, Any] = {}

    class FakeBlocks:
        def queue(self) -> FakeBlocks:
            return self

        def launch(self, **kwargs: Any) -> None:
            launched.update(kwargs)

    def fake_build_app(store: Path | None, data: Path | None) -> FakeBlocks:
        launched.update(store=store, data=data)
        return FakeBlocks()

    monkeypatch.setattr(app, "build_app", fake_build_app)
    cli = typer.Typer()
    cli.command()(serve)
    result = CliRunner().invoke(cli, ["--port", "8123", "--store", str(tmp_path), "--data", str(data_root)])
    assert result.exit_code == 0, result.output
    assert launched == {"store": tmp_path, "data": data_root, "server_name": "127.0.0.1", "server_port": 8123,
                        "max_file_size": submitting.MAX_UPLOAD_BYTES}
    (tmp_path / "empty").mkdir()  # the app reads built folders and never builds: it names the command instead
    result = CliRunner().invoke(cli, ["--store", str(tmp_path), "--data", str(tmp_path / "empty")])
    assert isinstance(result.exception, UserError) and "run `neurips26 build locus`" in str(result.exception)
    helped = CliRunner().invoke(cli, ["--help"], env={"COLUMNS": "200"})
    assert all(option in helped.output for option in ("--host", "--port", "--store", "--data"))
    probe = "import sys, neurips26.space.serve; print('gradio' in sys.modules)"
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert imported.stdout.strip() == "False"  # registering the command keeps the CLI fast


# -- deployment --------------------------------------------------------------------------------------------------


def pins(lines: list[str]) -> dict[str, str]:
    """Normalized distribution name (extras dropped) -> its version specifier."""
    out = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line:
            name, spec = re.match(r"([A-Za-z0-9._-]+)(?:\[[^\]]*\])?\s*(.*)", line).groups()
            out[re.sub(r"[-_.]+", "-", name).lower()] = spec.replace(" ", "")
    return out


def test_space_readme_header_and_requirements() -> None:
    header = yaml.safe_load((ROOT / "space" / "README.md").read_text().split("---")[1])
    assert header["sdk"] == "gradio" and header["sdk_version"] == gr.__version__
    assert header["app_file"] == "app.py" and header["hf_oauth"] is True and header["python_version"] == "3.11"
    for key in ("title", "emoji", "colorFrom", "colorTo", "pinned", "license"):
        assert key in header
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pinned = pins(project["dependencies"] + project["optional-dependencies"]["space"])
    required = pins((ROOT / "space" / "requirements.txt").read_text().splitlines())
    assert required["gradio"] == f"=={gr.__version__}"
    for name, spec in required.items():
        assert pinned.get(name) == spec, name
    assert not {"torch", "transformers", "lm-eval"} & set(required)


IMPORTS_SCRIPT = """
import ast, json, subprocess, sys, tempfile
from pathlib import Path
import app, neurips26
from neurips26.leaderboard import tracks
from neurips26.leaderboard.store import Store
from neurips26.metric import METRICS
from neurips26.space import boards, dataset_sql
with tempfile.TemporaryDirectory() as tmp:
    # the data folder is built in another process: the Space reads built folders, it never loads the builders
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                    "from neurips26.corpora.locus.build import build; build(out=Path(sys.argv[1]))",
                    str(Path(tmp) / "data" / "locus")], check=True)
    app.build_app(Path(tmp) / "store", Path(tmp) / "data")
    store = Store(Path(tmp) / "store")
    loaded, _ = boards.load_boards(store, tracks.tracks(store.tasks, store.groups))
    boards.score_plot(loaded["Text LM overall"], "Text LM overall")
    dataset_sql.run_sql("SELECT 1", Path(tmp) / "data")
here = Path.cwd()
files = sorted({str(Path(m.__file__).relative_to(here)) for m in list(sys.modules.values())
                if getattr(m, "__file__", None) and Path(m.__file__).resolve().is_relative_to(here)})
names = set()
for name in files:
    for node in ast.walk(ast.parse((here / name).read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
print(json.dumps({"package": neurips26.__file__, "files": files, "metrics": METRICS.names(),
                  "imports": sorted(names - set(sys.stdlib_module_names) - {"neurips26", "app"})}))
"""


def test_the_bundled_space_runs_and_its_requirements_cover_its_imports(tmp_path: Path) -> None:
    out = bundle(tmp_path / "space")
    assert {p.name for p in out.iterdir() if not p.name.endswith(".dist-info")} == {"app.py", "README.md",
                                                                                "requirements.txt", "neurips26"}
    assert len(list(out.glob("neurips26-*.dist-info/entry_points.txt"))) == 1  # how the registries find modules
    for folder, packaged in [("tasks", "tasks"), ("corpora/locus/sample", "corpora/locus/sample")]:
        source, bundled = ROOT / folder, out / "neurips26" / packaged
        missing = sorted(str(path.relative_to(ROOT)) for path in source.rglob("*")
                         if path.is_file() and "__pycache__" not in path.parts
                         and not (bundled / path.relative_to(source)).is_file())
        assert not missing, f"left out of the wheel (see package-data in pyproject.toml): {missing}"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "NEURIPS26_CACHE": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, "-c", IMPORTS_SCRIPT], cwd=out, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert Path(found["package"]).resolve().is_relative_to(out.resolve())  # the copy, not the checkout
    assert "neurips26/space/boards.py" in found["files"] and "neurips26/leaderboard/store.py" in found["files"]
    assert {"acc", "max_coverage", "fic_p_sharded"} <= set(found["metrics"])  # found through the entry points
    assert not any(name.startswith("neurips26/corpora/") for name in found["files"])  # never builds
    distributions = packages_distributions()
    required = pins((out / "requirements.txt").read_text().splitlines())
    for module in found["imports"]:
        names = {re.sub(r"[-_.]+", "-", d).lower() for d in distributions.get(module, [module])}
        assert names & set(required), f"{module} ({', '.join(names)}) is imported but not in requirements.txt"
    helped = subprocess.run([sys.executable, "app.py", "--help"], cwd=out, env={**env, "COLUMNS": "120"},
                            capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0, helped.stderr[-3000:]
    assert "--host" in helped.stdout and "--port" in helped.stdout and "--store" in helped.stdout


def test_upload_feedback_says_what_the_file_holds_or_why_not(tmp_path: Path, real: dict[str, Any]) -> None:
    said = submitting.upload_feedback(real["file"])
    assert said.startswith(f"Read {real['file'].name}: lm-eval 0.4.13 results for ") and "locus_domain" in said
    cut = tmp_path / "results_cut.json"
    cut.write_bytes(real["file"].read_bytes()[:50])
    assert submitting.upload_feedback(cut).startswith("This file cannot be submitted: results_cut.json is not JSON")
    other = tmp_path / "other.json"
    other.write_text("[1, 2]")
    assert "not an lm-eval results file" in submitting.upload_feedback(other)
