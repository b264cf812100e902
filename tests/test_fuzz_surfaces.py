"""Every input surface fuzzed: command-line arguments and stdin lines, SQL (through the CLI session and the Space),
results and samples files (mutated real ones), raw LOCUS files (names, encodings, BOMs, entities, sizes).

Properties: never a traceback; a refusal is one line that names the file, field or value, with exit code 2;
nothing of a rejected submission is stored; every raw file is counted once in the build report.

Hypothesis runs from the profile ``neurips26-fuzz`` (fixed seed: ``derandomize``; about two minutes in all);
``NEURIPS26_FUZZ_LONG=1`` picks ``neurips26-fuzz-long`` (ten times the examples, a random seed each run).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lm_eval.utils import simple_parse_args_string
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus.build import SAMPLE_DIR
from neurips26.leaderboard.store import Store
from neurips26.space import dataset_sql, model_page, submitting
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.sql import Limits, QueryError, Session, dataset_folders
from tests.hardening_fixtures import META, results_object, tiny_folder

LONG = os.environ.get("NEURIPS26_FUZZ_LONG") == "1"
_common = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                                       HealthCheck.function_scoped_fixture]}
settings.register_profile("neurips26-fuzz", max_examples=20, derandomize=True, **_common)
settings.register_profile("neurips26-fuzz-long", max_examples=200, derandomize=False, **_common)
PROFILE = settings.get_profile("neurips26-fuzz-long" if LONG else "neurips26-fuzz")


def examples(n: int) -> settings:
    """The profile with ``n`` examples (ten times more with NEURIPS26_FUZZ_LONG=1)."""
    return settings(PROFILE, max_examples=n * 10 if LONG else n)


runner = CliRunner()
ROOT = Path(tempfile.mkdtemp(prefix="neurips26-fuzz-"))
FOLDER = tiny_folder(ROOT)
SERVER_PATHS = (str(ROOT), tempfile.gettempdir() + "/neurips26-sql-")


def assert_one_line_or_ok(result: Any) -> None:
    """Exit 0, or exit 2 with one ``error:`` line on stderr; never an exception."""
    assert result.exit_code in (0, 2), (result.exit_code, result.output[-2000:], result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code == 2 and "error:" in result.stderr:
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) >= 1 and "Traceback" not in result.stderr


# -- command-line arguments and stdin ---------------------------------------------------------------------------

# bytes as the shell passes them: Python decodes argv with surrogateescape
arguments = st.one_of(st.binary(max_size=300), st.binary(min_size=50_000, max_size=100_000), st.just(b""),
                      st.sampled_from([b"6-21", b"\xff\xfe", b"\x1b[31m", b"\x00", b"'; DROP TABLE x; --"]))


@examples(30)
@given(arg=arguments, command=st.sampled_from(["search", "query"]))
def test_any_argument_gets_an_answer_or_one_line(arg: bytes, command: str) -> None:
    text = arg.decode("utf-8", "surrogateescape")
    args = ["search", "locus", text] if command == "search" else ["query", text]
    result = runner.invoke(app, [*args, "--data", str(ROOT)])
    assert_one_line_or_ok(result)
    if not text.strip() or "\x00" in text:
        return
    if any(0xDC80 <= ord(c) <= 0xDCFF for c in text):
        assert result.exit_code == 2 and "is not UTF-8" in result.stderr


line_bytes = st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" "))


@examples(20)
@given(lines=st.lists(st.one_of(line_bytes, st.sampled_from([b"SELECT 1 AS x", b"-- comment", b"",
                                                            b"SELECT * FROM locus.sections"])), max_size=8))
def test_every_stdin_line_is_answered_once(lines: list[bytes]) -> None:
    result = runner.invoke(app, ["query", "-", "--data", str(ROOT), "--format", "json"],
                           input=b"\n".join(lines) + b"\n")
    assert_one_line_or_ok(result)
    counted = [line for line in lines if line.strip() and not line.strip().startswith(b"--")
               and line.strip() != b"\xef\xbb\xbf"]
    answers = result.stdout.splitlines()
    assert len(answers) <= len(counted)  # a line is answered at most once (a BOM-only or blank line not at all)
    for answer in answers:
        json.loads(answer)  # each answer is one JSON line: rows or {"error": ...}


# -- SQL --------------------------------------------------------------------------------------------------------

values = st.one_of(st.integers(min_value=-(10**40), max_value=10**40).map(str),
                   st.text(max_size=40).map(lambda s: "'" + s.replace("'", "''") + "'"),
                   st.sampled_from(["NULL", "1e308", "'\\x00'", "repeat('x', 100000)", "current_setting('threads')",
                                    "[1, 2, 3]", "{'a': 1}", "'\u202e'"]))
tables = st.sampled_from(["locus.sections", "locus.counties", "range(5)", "duckdb_settings()", "sqlite_master",
                          "(SELECT 1 AS a)", "read_parquet('/etc/passwd')", "locus.nope"])
statements = st.one_of(
    st.builds(lambda v, t, w: f"SELECT {v} AS v FROM {t} WHERE {w}", values, tables,
              st.sampled_from(["true", "1 = 0", "state = 'GA'", "length(text) > 3"])),
    st.builds(lambda t: f"PIVOT {t} ON state USING count(*)", tables),
    st.builds(lambda a, b: f"{a}; {b}", values.map(lambda v: f"SELECT {v}"), values.map(lambda v: f"SELECT {v}")),
    st.text(max_size=200))


@examples(60)
@given(sql=statements)
def test_sql_is_answered_or_refused_and_public_sql_shows_no_server_path(sql: str) -> None:
    for limits in (Limits(timeout_s=10), Limits(timeout_s=10, public=True, max_value_bytes=50_000)):
        with Session(dataset_folders(ROOT), limits) as session:
            try:
                table = session.query(sql)
            except QueryError as exc:
                shown = str(exc)
            else:
                shown = json.dumps(table.to_pylist(), default=str)
        if limits.public:
            assert not any(path in shown for path in SERVER_PATHS), shown


@examples(10)
@given(sql=statements)
def test_the_space_sql_returns_a_status_for_anything(sql: str) -> None:
    frame, status = dataset_sql.run_sql(sql, ROOT)
    assert isinstance(status, str) and status
    assert not any(path in status for path in SERVER_PATHS)


# -- results and samples files ----------------------------------------------------------------------------------

junk = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
                 st.floats(allow_nan=True), st.text(max_size=30), st.lists(st.integers(), max_size=3),
                 st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
                 st.sampled_from(["float32,pretrained=evil/m,trust_remote_code=True", "a\nb", "x=y", "0123456"]))
paths = st.sampled_from([("config", "model_args"), ("config", "model_args", "dtype"), ("results",),
                         ("results", "locus_domain"), ("results", "locus_domain", "acc,none"), ("configs",),
                         ("versions", "locus_domain"), ("n-samples", "locus_domain", "original"), ("config",),
                         ("lm_eval_version",), ("config", "model_args", "trust_remote_code")])


def mutate(data: dict[str, Any], path: tuple[str, ...], value: Any, wrap: int) -> Any:
    """``data`` with the value at ``path`` replaced by ``value`` (parents made dicts), then nested ``wrap`` levels."""
    node = data
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = value
    out: Any = data
    for _ in range(wrap):
        out = {"results": out} if wrap % 2 else [out]
    return out


@examples(25)
@given(path=paths, value=junk, wrap=st.sampled_from([0, 0, 0, 1, 70]),
       encoding=st.sampled_from(["utf-8", "utf-8", "utf-16", "latin-1", "utf-8-sig"]),
       samples_line=st.one_of(st.just(None), st.binary(max_size=200), junk.map(lambda v: json.dumps(v).encode())))
def test_mutated_results_are_answered_and_rejected_ones_keep_no_files(path: tuple[str, ...], value: Any, wrap: int,
                                                                      encoding: str, samples_line: bytes | None
                                                                      ) -> None:
    tmp = Path(tempfile.mkdtemp(dir=ROOT))
    data = mutate(results_object(), path, value, wrap)
    text = json.dumps(data, default=str)
    results = tmp / "results_2026-01-01T00-00-00.json"
    results.write_bytes(text.encode(encoding, "replace"))
    samples = []
    if samples_line is not None:
        samples.append(tmp / "samples_locus_domain_2026-01-01T00-00-00.jsonl")
        samples[0].write_bytes(samples_line + b"\n")
    assert isinstance(submitting.upload_feedback(results), str)
    assert isinstance(submitting.results_problem(results), str | None)
    command = model_page.reproduce_command(data if isinstance(data, dict) else {}, "ORG/m", "0123456")
    if command:
        model_args = command.split("--model_args ")[1].split(" \\")[0].strip("'")
        parsed = simple_parse_args_string(model_args)
        assert parsed["pretrained"] == "ORG/m" and parsed["revision"] == "0123456"
        assert "trust_remote_code" not in parsed
    store = Store(tmp / "store")
    entry = store.submit(results, META, samples)
    assert entry.status in ("VALID", "UNRANKED", "REJECTED")
    if entry.status == "REJECTED":
        assert entry.reason
        assert [p for p in (tmp / "store").rglob("files/**/*") if p.is_file()] == []
    result = runner.invoke(app, ["submit", str(results), "--model", "org/model", "--revision", "abcdef0",
                                 "--precision", "float32", "--params", "1", "--store", str(tmp / "cli-store"),
                                 *sum((["--samples", str(p)] for p in samples), [])])
    assert result.exit_code in (0, 2) and isinstance(result.exception, SystemExit | None), repr(result.exception)
    shutil.rmtree(tmp, ignore_errors=True)


# -- raw LOCUS files --------------------------------------------------------------------------------------------

names = st.one_of(st.text(alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=["Cs"]),
                          min_size=1, max_size=30),
                  st.sampled_from([".hidden", ".DS_Store", "Sec. 1-1.txt", "ﾃｽﾄ.xml", "a b.html", "-rf.txt"]))
contents = st.one_of(
    st.binary(max_size=400),
    st.sampled_from(["Sec. 1-1. - Dogs.\nEvery dog shall be licensed.\n", "<TEI>x</TEI>"]).flatmap(
        lambda text: st.sampled_from(["utf-8", "utf-16", "utf-8-sig", "latin-1", "utf-32"]).map(
            lambda enc: text.encode(enc))),
    st.just(b'<?xml version="1.0"?><!DOCTYPE TEI [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            b'<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><p>Sec. 1-1. - A.\n&x;</p></body></text></TEI>'),
    st.just(b"Sec. 1-1. - Big.\n" + b"word " * 200_000))


@examples(4)
@given(files=st.lists(st.tuples(names, contents), min_size=1, max_size=4, unique_by=lambda f: f[0]))
@example(files=[("\u00b2", b"Sec. 1-1. - A.\n")])  # found by the long run: '²' is a digit to isdigit(), not to int()
def test_every_raw_file_is_counted_once(files: list[tuple[str, bytes]]) -> None:
    tmp = Path(tempfile.mkdtemp(dir=ROOT))
    raw = tmp / "raw"
    raw.mkdir()
    shutil.copy(SAMPLE_DIR / "jurisdictions.csv", raw / "jurisdictions.csv")
    shutil.copytree(SAMPLE_DIR / "harrow-mill-ga", raw / "harrow-mill-ga")
    written = 1
    for name, data in files:
        try:
            (raw / "harrow-mill-ga" / name).write_bytes(data)
        except OSError:  # a name this file system refuses (too long in bytes)
            continue
        written += 1
    report = locus.build(raw=raw, out=tmp / "out" / "locus")
    assert report.reconciles()
    assert report.files_in == written
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module", autouse=True)
def _cleanup() -> Any:
    yield
    dataset_sql.workers().close()
    shutil.rmtree(ROOT, ignore_errors=True)
