"""Round 2 of the hardening: what hostile files, arguments and lines did before, each answered now by one line,
exit code 2, nothing stored.

Holes: 1 (deep JSON read before the depth check), 2 (non-UTF-8 arguments and stdin lines), 4 (terminal escapes in
table output), 5 (model_args smuggled into the reproduce command; a revision read as a number), 7 (a rejected
submission's files kept).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from lm_eval.utils import simple_parse_args_string
from neurips26.corpora.locus.records import natural_key
from neurips26.leaderboard.store import Store
from neurips26.space import model_page, submitting
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.cli.evaluate import batch_size_value
from neurips26.errors import UserError
from neurips26.results import ResultsError, read_run
from neurips26.search import search
from neurips26.sql import QueryError
from tests.hardening_fixtures import HOSTILE_TEXT, META, nested, results_object, tiny_folder

runner = CliRunner()
SUBMIT = ["--model", META["model_id"], "--revision", META["revision"], "--precision", "float32", "--params", "1"]


def one_error_line(result) -> str:
    """The run's stderr, checked to be one ``error:`` line and exit code 2 (no traceback)."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.stderr


# -- hole 1: deep JSON ----------------------------------------------------------------------------------------

def test_submit_of_a_100000_level_nested_file_is_one_line_and_stores_nothing(tmp_path: Path) -> None:
    deep = tmp_path / "results_2026-01-01T00-00-00.json"
    deep.write_bytes(nested(100_000))
    store = tmp_path / "store"
    result = runner.invoke(app, ["submit", str(deep), *SUBMIT, "--store", str(store)])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit | None), result.exception
    assert "REJECTED" in result.output and "results: JSON nested deeper than 64 levels" in result.output
    assert [p for p in store.rglob("files/**/*") if p.is_file()] == []


def test_the_space_names_a_deep_upload_instead_of_raising(tmp_path: Path) -> None:
    deep = tmp_path / "results.json"
    deep.write_bytes(nested(100_000))
    assert submitting.results_problem(deep) == "results.json: JSON nested deeper than 64 levels"
    assert submitting.upload_feedback(deep).startswith("This file cannot be submitted: results.json: JSON nested")


def test_read_run_checks_depth_and_size_before_parsing(tmp_path: Path) -> None:
    deep = tmp_path / "results_x.json"
    deep.write_bytes(nested(5_000))
    with pytest.raises(ResultsError, match="nested deeper"):
        read_run(deep)
    (tmp_path / "results_x.json").write_text(json.dumps(results_object()))
    (tmp_path / "samples_locus_domain_2026-01-01T00-00-00.jsonl").write_bytes(b"{}\n" + nested(3_000) + b"\n")
    with pytest.raises(ResultsError, match=r"samples_locus_domain_2026-01-01T00-00-00.jsonl:2: JSON nested"):
        read_run(tmp_path / "results_x.json")


# -- hole 2: one decoding rule ---------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["search", "locus", "dog\udcff"], ["query", "SELECT 'x\udcfe'"]])
def test_a_non_utf8_argument_is_one_line_naming_the_byte(command: list[str]) -> None:
    stderr = one_error_line(runner.invoke(app, command))
    assert "is not UTF-8" in stderr and ("0xff" in stderr or "0xfe" in stderr)


def test_stdin_query_answers_a_bad_line_and_goes_on(tmp_path: Path) -> None:
    tiny_folder(tmp_path)
    lines = b"SELECT 1 AS one\nSELECT '\xff\xfe' AS bad\nSELECT 2 AS two\n"
    result = runner.invoke(app, ["query", "-", "--data", str(tmp_path), "--format", "json"], input=lines)
    assert result.exit_code == 2
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert answers[0] == [{"one": 1}] and answers[2] == [{"two": 2}]
    assert "stdin line 2: byte 0xff at position 9 is not UTF-8" in answers[1]["error"]
    assert "1 of 3 statements from stdin failed" in result.stderr


def test_the_space_functions_answer_lone_surrogates(tmp_path: Path) -> None:
    from neurips26.space import dataset_sql

    folder = tiny_folder(tmp_path)
    frame, status = dataset_sql.run_sql("SELECT '\ud800'", tmp_path)
    assert frame.is_empty() and status.startswith("error: SQL: U+D800 is a lone surrogate")
    with pytest.raises(QueryError, match="search query: U\\+D800"):
        search(folder, "dog \ud800")


# -- hole 4: terminal escapes ----------------------------------------------------------------------------------

def test_table_output_shows_escapes_instead_of_sending_them(tmp_path: Path) -> None:
    tiny_folder(tmp_path)
    result = runner.invoke(app, ["query", "SELECT heading FROM locus.sections WHERE state = 'WI'",
                                 "--data", str(tmp_path), "--max-width", "200"])
    assert result.exit_code == 0, result.output
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in result.stdout
    assert "\\x1b]0;pwned\\x07" in result.stdout and "\\u202e" in result.stdout
    failed = runner.invoke(app, ["query", f"SELECT nope AS \"{HOSTILE_TEXT}\" FROM locus.sections",
                                 "--data", str(tmp_path)])
    assert failed.exit_code == 2 and "\x1b" not in failed.stderr


# -- hole 5: model_args ----------------------------------------------------------------------------------------

def test_reproduce_command_rebuilds_model_args_from_an_allow_list(tmp_path: Path) -> None:
    results = results_object()
    results["config"]["model_args"] = {"pretrained": "evil/other", "trust_remote_code": True, "revision": "main",
                                       "dtype": "float32,pretrained=evil/model,trust_remote_code=True",
                                       "max_length": 2048, "peft": "evil/adapter"}
    command = model_page.reproduce_command(results, "ORG/m", "0123456")
    script = "lm_eval() { printf '%s\\n' \"$@\"; }\nneurips26() { :; }\n" + command + "\n"
    args = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.splitlines()
    parsed = simple_parse_args_string(args[args.index("--model_args") + 1])  # as lm-eval will read it
    assert parsed == {"pretrained": "ORG/m", "revision": "0123456", "max_length": 2048}
    assert "evil" not in args[args.index("--model_args") + 1]
    comment = command.splitlines()[-1]
    assert comment.startswith("# left out of --model_args") and "'trust_remote_code'" in comment
    assert all(shlex.split(line, comments=True) == [] for line in command.splitlines() if line.startswith("#"))


# -- hole 7: rejected submissions keep no files -----------------------------------------------------------------

def test_a_rejected_submission_leaves_no_files_in_the_store(tmp_path: Path) -> None:
    results = tmp_path / "results_2026-01-01T00-00-00.json"
    results.write_text(json.dumps(results_object("no_such_task")))
    zeros = tmp_path / "samples_no_such_task_2026-01-01T00-00-00.jsonl"
    zeros.write_bytes(b"\x00" * 2_000_000)
    store = Store(tmp_path / "store")
    entry = store.submit(results, META, [zeros])
    assert entry.status == "REJECTED" and entry.reason
    assert [p for p in (tmp_path / "store" / "files").rglob("*") if p.is_file()] == []
    assert store.entry(entry.id).status == "REJECTED"  # the entry and its reason stay


def test_a_rejection_does_not_take_a_file_another_submission_holds(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    samples = tmp_path / "samples_locus_domain_2026-01-01T00-00-00.jsonl"
    samples.write_text(json.dumps({"doc_id": 0, "doc": {}, "target": "a", "acc": 1.0}) + "\n")
    kept = store._keep(samples.read_bytes())
    with store._connect(write=True) as con:  # another stored, not rejected submission holding those bytes
        con.execute("INSERT INTO submissions (id, submitted_at, model_id, revision, precision, license, model_type,"
                    " submitter, results_sha256, samples_names, samples_sha256) VALUES (99, now(), 'a/b', 'abcdef0',"
                    " 'float32', 'x', 'other', 'x', 'r', [?], [?])", [samples.name, kept])
        con.execute("INSERT INTO statuses VALUES (1000000, 99, 'VALID', NULL, now())")
    results = tmp_path / "results_2026-01-01T00-00-00.json"
    results.write_text(json.dumps(results_object("no_such_task")))
    assert store.submit(results, META, [samples]).status == "REJECTED"
    assert store.file_path(kept).is_file()


def test_a_digit_int_cannot_read_is_not_taken_for_a_number() -> None:
    """'²' passes str.isdigit() but not int(): a raw file, a batch size or a step count spelt with it is named."""
    assert natural_key("sec-\u00b2-10.txt") == ["sec-\u00b2-", 10, ".txt"]
    with pytest.raises(UserError, match="batch-size"):
        batch_size_value("\u00b2")
    assert batch_size_value("auto:\u0663") == "auto:\u0663"  # an Arabic-Indic three is a decimal digit int() reads
