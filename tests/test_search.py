"""Search and SQL on a LOCUS folder built from the real shared sample: the right sections come first, the pruned
BM25 of the index scores exactly as DuckDB's ``match_bm25`` over every section, a persistent SQL session answers
what one-shot queries answer and keeps its limits, and a rebuilt folder is never served from the old index."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest
from neurips26.corpora.locus.build import build as build_locus
from typer.testing import CliRunner

from neurips26.cli import app as cli_app
from neurips26.search import Filters, fts_extension, index_path, search
from neurips26.sql import Limits, QueryError, Session, dataset_folders, run_query, shard_paths

WORDS = ("dogs running at large", "noise after midnight", "business license fee", "open burning permit",
         "council meetings quorum", "sidewalk obstruction", "junk vehicles on private property")


@pytest.fixture(scope="module")
def real(real_locus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("search_real") / "locus"
    build_locus(raw=real_locus, out=out, workers=2)
    return out


@pytest.fixture(autouse=True)
def cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """One index cache for the module (its indexes are built once), never the user's."""
    monkeypatch.setenv("NEURIPS26_CACHE", str(tmp_path_factory.getbasetemp() / "search_cache"))


def match_bm25(folder: Path, words: str, limit: int, state: str | None = None) -> list[dict]:
    """The top sections by the fts extension's own ``match_bm25``, scored over every section of ``folder``."""
    files = ", ".join(f"'{p}'" for p in shard_paths(folder)["sections"])
    with duckdb.connect(config={"autoinstall_known_extensions": False}) as con:
        con.execute(f"LOAD '{fts_extension()}'")
        con.execute(f"CREATE TABLE t AS SELECT section_id, state, heading, text FROM read_parquet([{files}])")
        con.execute("PRAGMA create_fts_index('t', 'section_id', 'heading', 'text', stemmer='porter', "
                    "stopwords='english')")
        rows = con.execute("SELECT section_id, score FROM (SELECT section_id, state, "
                           "fts_main_t.match_bm25(section_id, ?) AS score FROM t) "
                           "WHERE score IS NOT NULL AND (? IS NULL OR state = ?)",
                           [words, state, state]).fetchall()
    rows.sort(key=lambda r: (-round(r[1], 7), r[0]))  # equal scores (to 1e-7) rank by section_id
    return [{"section_id": s, "score": score} for s, score in rows[:limit]]


def test_the_pruned_bm25_ranks_and_scores_as_match_bm25_over_every_section(real: Path) -> None:
    for words in WORDS:
        for state in (None, "GA"):
            expected = match_bm25(real, words, 20, state)
            hits = search(real, words, Filters(state=state), limit=20).to_pylist()
            assert expected, words
            assert [h["section_id"] for h in hits] == [e["section_id"] for e in expected], (words, state)
            assert all(h["score"] == pytest.approx(e["score"], abs=1e-8) for h, e in zip(hits, expected, strict=True))


def test_a_known_phrase_and_a_section_number_find_their_section_first(real: Path) -> None:
    hits = search(real, "junk abandoned inoperable unregistered vehicles", limit=3).to_pylist()
    assert hits[0]["section_id"] == "adairsville:47-99"
    assert hits[0]["heading"].startswith("Junk, abandoned, inoperable or unregistered vehicles")
    hits = search(real, "1-1.11").to_pylist()
    assert (hits[0]["number"], hits[0]["jurisdiction_id"]) == ("1-1.11", "adairsville")
    assert hits[0]["score"] == 2000  # its own number; sections citing it score 1000 and come next
    assert all(h["score"] == 1000 for h in hits[1:])
    cited = search(real, "§ 47-99 vehicles", limit=50).to_pylist()
    assert cited[0]["section_id"] == "adairsville:47-99" and cited[0]["score"] > 2000  # number and words


def test_searches_from_many_threads_answer_as_one_at_a_time(real: Path) -> None:
    alone = [search(real, words, limit=5).to_pylist() for words in WORDS]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda words: search(real, words, limit=5).to_pylist(), WORDS * 3))
    assert together == alone * 3


def test_a_rebuilt_folder_is_searched_in_its_new_index(real_locus: Path, tmp_path: Path) -> None:
    out = tmp_path / "locus"
    build_locus(out=out)  # the small embedded sample: codes from GA, UT and WI
    assert search(out, "permit", Filters(state="WI")).num_rows > 0
    assert search(out, "permit", Filters(state="DC")).num_rows == 0
    first = index_path(out)
    build_locus(raw=real_locus, out=out, workers=2)  # the same folder rebuilt from the real sample: GA, UT, DC
    assert index_path(out) != first  # a new manifest, a new index; the open one is not reused
    assert search(out, "permit", Filters(state="WI")).num_rows == 0
    hits = search(out, "permit", Filters(state="DC")).to_pylist()
    assert hits and all(h["jurisdiction_id"] == "dc" for h in hits)


def test_a_session_answers_as_one_shot_queries(real: Path) -> None:
    folders = dataset_folders(real.parent)
    queries = ["SELECT * FROM locus.sections WHERE jurisdiction_id = 'adairsville' ORDER BY section_id",
               "SELECT state, count(*) AS n FROM locus.sections GROUP BY state ORDER BY state",
               "SELECT * FROM locus.counties WHERE county_fips = '13059'"]
    with Session(folders) as session:
        for sql in queries * 2:
            assert session.query(sql).equals(run_query(sql, folders)), sql


def test_a_session_keeps_its_limits_and_survives_a_stopped_query(real: Path) -> None:
    folders = dataset_folders(real.parent)
    with Session(folders, Limits(timeout_s=2.0, memory="256MB", threads=1, max_rows=3)) as session:
        spill = Path(session.query("SELECT current_setting('temp_directory') AS t")["t"][0].as_py())
        assert spill.parent.is_dir()
        with pytest.raises(QueryError, match="ran longer than the 2 s limit"):
            session.query("SELECT sum(range) FROM range(100000000000)")
        assert session.query("SELECT * FROM locus.sections").num_rows == 4  # the row cap, after the stop
        for refused in ("COPY (SELECT 1) TO 'x.csv'", "SELECT * FROM read_csv('/etc/passwd')",
                        "SET enable_external_access = true", "SELECT 1; SELECT 2"):
            with pytest.raises(QueryError):
                session.query(refused)
    assert not spill.parent.exists()  # the private spill folder goes with the session


def test_query_runs_several_statements_a_file_and_stdin_lines_on_one_connection(real: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    data = ["--data", str(real.parent), "--format", "json"]
    lookup = "SELECT count(*) AS n FROM locus.sections WHERE jurisdiction_id = '{}'"
    expected = [run_query(lookup.format(j), dataset_folders(real.parent)).to_pylist() for j in ("dc", "edison")]
    result = runner.invoke(cli_app, ["query", lookup.format("dc"), lookup.format("edison"), *data])
    assert result.exit_code == 0, result.output
    assert [json.loads(line) for line in result.stdout.splitlines()] == expected  # one JSON line per statement
    script = tmp_path / "lookups.sql"
    script.write_text(f"{lookup.format('dc')};\n-- and\n{lookup.format('edison')};\n")
    result = runner.invoke(cli_app, ["query", "--file", str(script), *data])
    assert [json.loads(line) for line in result.stdout.splitlines()] == expected
    lines = f"{lookup.format('dc')}\nSELECT nonsense FROM nowhere\n\n{lookup.format('edison')}\n"
    result = runner.invoke(cli_app, ["query", "-", *data], input=lines)
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert answers[0] == expected[0] and "nowhere" in answers[1]["error"] and answers[2] == expected[1]
    assert result.exit_code == 2  # a line failed; the next one still ran
    result = runner.invoke(cli_app, ["query", lookup.format("dc"), "SELECT * FROM nope", *data])
    assert result.exit_code == 2 and "statement 2" in result.output
