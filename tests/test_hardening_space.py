"""What a hostile submitter or visitor can do to the Space: a reproduce command that runs something else, SQL that
stalls everyone, files nested or sized to break the parser, and the CLI printing data as markup."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from neurips26.corpora.locus.build import build as build_locus
from neurips26.leaderboard.intake import Submission
from neurips26.leaderboard.modelinfo import Limits, display_fields
from neurips26.leaderboard.store import Store
from neurips26.leaderboard.tables import Writes
from neurips26.space import dataset_sql, model_page, submitting
from typer.testing import CliRunner

from neurips26.cli import app as cli_app
from neurips26.output import emit
from neurips26.sql import Limits as SqlLimits
from neurips26.sql import QueryError, dataset_folders, run_query

HOSTILE = "$(touch pwned_subst)`touch pwned_tick`;touch pwned_semicolon'\"|touch pwned_pipe&&touch pwned_and\n"
META = {"model_id": "org/model", "revision": "0123456789abcdef0123456789abcdef01234567", "precision": "float32",
        "params": 135_000_000, "license": "apache-2.0", "model_type": "pretrained", "submitter": "mallory"}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hardening_data")
    build_locus(out=root / "locus")
    return root


def hostile_results() -> dict[str, Any]:
    task = "locus_domain" + HOSTILE
    return {"results": {task: {"acc,none": 0.5}}, "configs": {task: {"num_fewshot": HOSTILE}},
            "n-shot": {task: HOSTILE}, "system_instruction": HOSTILE,
            "config": {"model": "hf " + HOSTILE, "model_args": {"pretrained": HOSTILE, "dtype": HOSTILE},
                       "batch_size": HOSTILE, "gen_kwargs": {HOSTILE: HOSTILE}, "limit": HOSTILE,
                       "random_seed": HOSTILE, "numpy_seed": 1, "torch_seed": 2, "fewshot_seed": HOSTILE}}


def test_a_hostile_reproduce_command_is_inert_in_bash(tmp_path: Path) -> None:
    command = model_page.reproduce_command(hostile_results(), "org/m" + HOSTILE, HOSTILE)
    assert command.startswith("lm_eval run")
    # stand-ins for the two programs the command names: they print their arguments, one a line
    script = ("lm_eval() { printf '<%s>\\n' \"$@\"; }\nneurips26() { printf 'TASKS'; }\n" + command + "\n")
    run = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing ran but lm_eval
    args = run.stdout.split(">\n<")
    assert "--model" in args[1:] and args[args.index("--model") + 1] == "hf " + HOSTILE
    assert args[args.index("--limit") + 1] == HOSTILE
    assert any(HOSTILE in a for a in args[args.index("--seed") + 1:args.index("--seed") + 2])


def test_a_runaway_query_is_stopped_while_others_still_answer(data_root: Path) -> None:
    answers: dict[str, Any] = {}

    def hostile() -> None:
        limits = SqlLimits(timeout_s=3.0, memory="256MB", threads=1)
        answers["hostile"] = dataset_sql.run_sql("SELECT sum(range) FROM range(100000000000)", data_root,
                                                 limits=limits)

    thread = threading.Thread(target=hostile)
    thread.start()
    frame, status = dataset_sql.run_sql("SELECT count(*) AS n FROM locus.sections", data_root)
    answered_while_running = thread.is_alive()
    thread.join()
    assert status == "1 row(s)" and frame["n"][0] > 0
    assert answered_while_running  # the trivial query did not wait for the hostile one
    frame, status = answers["hostile"]
    assert frame.is_empty() and status == "error: query stopped: it ran longer than the 3 s limit"


def test_the_row_cap_holds_whatever_the_sql_looks_like(data_root: Path) -> None:
    for sql in ("SELECT * FROM range(100000000000);\n-- c", "SELECT * FROM range(100000000000) -- c",
                "SELECT * FROM range(100000000000) /* ) */"):
        frame, status = dataset_sql.run_sql(sql, data_root, max_rows=7)
        assert status == "showing the first 7 rows" and frame.height == 7, sql
    with pytest.raises(QueryError, match="memory limit"):
        run_query("SELECT list(range) FROM range(300000000)", dataset_folders(data_root),
                  SqlLimits(memory="64MB", timeout_s=60))
    assert len(run_query("SELECT * FROM range(10)", dataset_folders(data_root), SqlLimits(max_rows=3))) == 4


def test_duckdb_spills_into_a_private_folder_removed_afterwards(data_root: Path) -> None:
    where = run_query("SELECT current_setting('temp_directory') AS t", dataset_folders(data_root))["t"][0].as_py()
    private = Path(where).parent
    assert private.name.startswith("neurips26-sql-") and not private.exists()


def deep(levels: int) -> bytes:
    return b'{"results": ' + b"[" * levels + b"]" * levels + b"}"


def stored_files(store: Store) -> set[str]:
    return {p.name for p in (store.root / "files").rglob("*") if p.is_file()}


def test_nested_and_oversized_files_are_rejected_with_one_line_reasons(tmp_path: Path) -> None:
    store = Store(tmp_path / "store", limits=Limits(results_bytes=200_000, samples_bytes=200_000))
    nested = store.submit(deep(50_000), META)
    assert nested.status == "REJECTED" and "results: JSON nested deeper than 64 levels" in nested.reason
    big = store.submit(b" " * 200_001, META)
    assert big.status == "REJECTED" and "over the limit of 200,000" in big.reason
    samples = tmp_path / "samples_locus_domain_2026-01-01T00-00-00.jsonl"
    samples.write_bytes(b'{"doc_id": 0}\n' + b"[" * 50_000 + b"]" * 50_000 + b"\n")
    results = {"results": {"locus_domain": {"acc,none": 0.5}}, "versions": {"locus_domain": 1.0},
               "config": {"model": "hf"}, "lm_eval_version": "0.4.13"}
    deep_samples = store.submit(json.dumps(results).encode(), META, [samples])
    assert deep_samples.status == "REJECTED"
    assert f"samples.{samples.name}:2: JSON nested deeper than 64 levels" in deep_samples.reason
    for entry in (nested, big, deep_samples):
        assert "\n" not in entry.reason  # the reasons on one line
    assert {e.status for e in store.entries()} == {"REJECTED"}  # recorded, nothing left PENDING
    # no orphans, and a rejected submission keeps no files (only its entry and reason)
    referenced = {s for e in store.entries() if e.status != "REJECTED" for s in (e.results_sha256, *e.samples_sha256)
                  if s}
    assert stored_files(store) == referenced == set()


def test_a_submission_with_a_missing_file_keeps_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    with pytest.raises(FileNotFoundError, match="nowhere.jsonl"):
        store.submit(b'{"results": {}}', META, [tmp_path / "nowhere.jsonl"])
    assert not (store.root / "files").exists() or stored_files(store) == set()


def test_the_upload_guess_reads_only_files_within_the_limits(tmp_path: Path) -> None:
    good = tmp_path / "results_good.json"
    good.write_text(json.dumps({"config": {"model_dtype": "torch.bfloat16"}}))
    assert submitting.prefill(submitting.uploaded_results(good)) == {"precision": "bfloat16"}
    nested, huge = tmp_path / "results_nested.json", tmp_path / "results_huge.json"
    nested.write_bytes(deep(200_000))
    huge.write_bytes(b'{"a": "' + b"x" * (6 * 2**20) + b'"}')
    assert submitting.uploaded_results(nested) == {} and submitting.uploaded_results(huge) == {}
    assert submitting.MAX_UPLOAD_BYTES == 200 * 2**20


@pytest.mark.parametrize("text", ["[/x]", "land to [be] reserved", "[bold red]loud[/]", "[link=http://e.vil]x[/link]"])
def test_cli_tables_print_data_exactly(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    emit([{"a": text}], title=f"hits for {text}")
    flat = " ".join(capsys.readouterr().out.split())  # the title may wrap
    assert f"hits for {text}" in flat and f"│ {text} │" in flat  # the title and the cell, as stored


def test_query_prints_markup_like_text_unchanged(data_root: Path) -> None:
    result = CliRunner().invoke(cli_app, ["query", "SELECT '[/x] land to [be] reserved' AS t", "--data",
                                          str(data_root)])
    assert result.exit_code == 0, result.output
    assert "[/x] land to [be] reserved" in result.output


def test_a_submission_left_pending_by_a_killed_process_is_finished(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    with store._connect(write=True) as con:  # the first transaction of a submit whose process then died
        writes = Writes()
        stuck = store._record(con, [Submission(display_fields(META))], writes)[0]
        writes.flush(con)
    assert store.entry(stuck.id).status == "PENDING"
    assert store.finish_stale(older_than_s=3600) == []  # a recent one may still be running
    finished = store.finish_stale(older_than_s=0)
    assert [e.id for e in finished] == [stuck.id]
    assert store.entry(stuck.id).status == "REJECTED" and store.entry(stuck.id).reason
