"""LOCUS-v1 compatibility both ways, and the representative county layer.

The LOCUS-v1 fixtures are Parquet files the tests write: two shards in the paper's
full schema, one file in the published card's shape, and bad files.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus import counties, records, v1, v1_ingest

from neurips26 import hubfolder
from neurips26.errors import UserError

CLI = [sys.executable, "-m", "neurips26.cli"]
TEXT = ("No person shall keep any dog that runs at large upon the streets, sidewalks or public places of the "
        "city, and the owner shall be liable for a fine for each day the violation continues. ")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def full_row(doc: str, index: int, state: str, name: str, kind: str, geoid: str, county: tuple[str, str],
             header: str, k: int) -> dict:
    """A row in the paper's schema with every label filled (values vary with k)."""
    function = records.FUNCTIONS[k % 4]
    substantive = function != "Context"
    return {
        "document_id": doc, "section_index": index, "state": state, "jurisdiction_name": name,
        "jurisdiction_type": kind, "jurisdiction_geoid": geoid, "represented_county_fips": [county[0]],
        "represented_county_name": [county[1]], "header": header, "content": f"{TEXT}({k})",
        "is_substantive": substantive, "function": function, "function_votes": 2 + k % 2,
        "topic": records.TOPICS[k % 5] if substantive else None, "topic_votes": 3 if substantive else None,
        "annotator1_function": function, "annotator2_function": function, "annotator3_function": "Rules",
        "annotator1_topic": records.TOPICS[k % 5] if substantive else None, "annotator2_topic": None,
        "annotator3_topic": "Other", "annotator1_confidence": 0.5 + k / 100, "annotator2_confidence": 0.9,
        "annotator3_confidence": None, "opacity": k / 7 - 1, "paternalism": -k / 3, "enforcement_discretion": 0.25,
        "problem_salience": None if k % 3 else 1.5,
    }


ADAIRSVILLE = ("GA", "City of Adairsville", "city", "1300564", ("13015", "Bartow County"))
BARTOW = ("GA", "Bartow County", "county", "13015", ("13015", "Bartow County"))
SPANISH_FORK = ("UT", "Spanish Fork City", "city", "4971290", ("49049", "Utah County"))
SHARD_0 = ([full_row("ga-adairsville", i, *ADAIRSVILLE, f"Sec. 6-{i}. - Dogs at large", i) for i in (2, 0, 1)]
           + [full_row("ga-bartow", i, *BARTOW, f"Sec. 10-{i}. - Burning permits", 10 + i) for i in range(2)])
SHARD_1 = ([full_row("ut-spanish-fork", i, *SPANISH_FORK, f"{i}.04.010 Nuisances", 20 + i) for i in range(3)]
           + [full_row("ga-adairsville-zoning", 0, *ADAIRSVILLE, "Sec. 1-1. - Zoning districts", 30)])
CARD = [  # the published card's columns, plus one the schema does not know
    {"header": f"Section {i}. Noise", "content": f"{TEXT}[{i}]", "is_substantive": True, "function": "Rules",
     "topic": "Nuisance", "source_jurisdiction_type": "city", "state": "UT", "city": "Provo",
     "county": "Utah County", "enforcement_discretion": 0.1 * i, "opacity": None, "paternalism": 0.0,
     "problem_salience": -0.5, "scraped_at": "2025-01-01"}
    for i in range(2)
]


def card_as_v1(row: dict) -> dict:
    """What the ingester makes of a card-shaped row: aliases renamed, missing columns null."""
    out = dict.fromkeys(records.V1_COLUMNS)
    out.update({k: v for k, v in row.items() if k in records.V1_COLUMNS})
    out.update(jurisdiction_name=row["city"], jurisdiction_type=row["source_jurisdiction_type"],
               represented_county_name=[row["county"]])
    return out


@pytest.fixture(scope="module")
def download(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LOCUS-v1 folder as a user downloaded it, plus card-shaped and bad files."""
    root = tmp_path_factory.mktemp("v1")
    (root / "data").mkdir()
    pq.write_table(pa.Table.from_pylist(SHARD_0, schema=v1.V1_SCHEMA), root / "data/train-00000-of-00002.parquet")
    pq.write_table(pa.Table.from_pylist(SHARD_1, schema=v1.V1_SCHEMA), root / "data/train-00001-of-00002.parquet")
    (root / "README.md").write_text("---\nlicense: cc-by-nc-4.0\n---\n")  # the card, not data
    (root / ".cache" / "huggingface").mkdir(parents=True)  # what huggingface_hub leaves in a local_dir
    (root / ".cache" / "huggingface" / "train-00000-of-00002.parquet.metadata").write_text("abc\n")
    (root / "card").mkdir()
    pq.write_table(pa.Table.from_pylist(CARD), root / "card/published.parquet")
    odd = {"header": ["a", "b", "c"], "content": ["x", "y", "z"], "state": ["ZZ", "GA", "GA"],
           "city": ["Nowhere", "Adel", "Adel"], "source_jurisdiction_type": ["city", "hamlet", "city"],
           "jurisdiction_geoid": [None, None, "13-075"]}
    pq.write_table(pa.table(odd), root / "card/odd_rows.parquet")  # every row is rejected, with its reason
    (root / "bad").mkdir()
    (root / "bad/notes.parquet").write_text("not parquet at all")
    pq.write_table(pa.table({"header": ["x"], "state": ["GA"], "city": ["Adel"]}), root / "bad/no_content.parquet")
    pq.write_table(pa.table({"header": ["x"], "content": [7], "jurisdiction_geoid": ["1300564"]}),
                   root / "bad/int_content.parquet")
    damaged = root / "bad/damaged.parquet"  # the footer reads, the data pages do not
    pq.write_table(pa.table({"header": ["h" * 500] * 20, "content": [TEXT] * 20, "jurisdiction_geoid": ["13015"] * 20}),
                   damaged)
    data = bytearray(damaged.read_bytes())
    data[10:200] = b"\xff" * 190
    damaged.write_bytes(bytes(data))
    return root


@pytest.fixture(scope="module")
def built(download: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``neurips26 build locus --from-locus-v1`` run as a user runs it; the data root holding ./locus."""
    root = tmp_path_factory.mktemp("data")
    result = run("build", "locus", "--from-locus-v1", str(download), "--out", "locus", cwd=root)
    assert result.returncode == 0, result.stderr
    assert "files in 8 = parsed 4 + duplicate 0 + rejected 4 (reconciles)" in " ".join(result.stdout.split())
    return root


def read(folder: Path, config: str, split: str = "train") -> list[dict]:
    return pq.read_table(sorted((folder / "data" / config).glob(f"{split}-*.parquet"))).to_pylist()


def test_bad_files_are_reported_and_the_good_ones_built(built: Path) -> None:
    errors = {e["source_file"]: e for e in read(built / "locus", "errors")}
    assert "not a Parquet file" in errors["bad/notes.parquet"]["reason"]
    assert "missing required column(s) content" in errors["bad/no_content.parquet"]["reason"]
    assert "bad/damaged.parquet: cannot be read" in errors["bad/damaged.parquet"]["reason"]
    reason = errors["bad/int_content.parquet"]["reason"]
    assert "bad/int_content.parquet" in reason and "'content'" in reason and "int64" in reason
    assert errors["card/published.parquet"]["level"] == "record"
    assert "scraped_at" in errors["card/published.parquet"]["reason"]  # reported, kept nowhere
    assert "README.md" not in errors and not any(".cache" in name for name in errors)
    card = yaml.safe_load((built / "locus" / "README.md").read_text().split("---")[1])
    assert card["license"] == "cc-by-nc-4.0"  # LOCUS-v1's license travels with its rows
    rows = sorted(e["reason"] for e in read(built / "locus", "errors") if e["source_file"] == "card/odd_rows.parquet")
    assert rows == ["row 0: state 'ZZ' is not a USPS state code; row skipped",
                    "row 1: jurisdiction_type 'hamlet' is not a known kind (consolidated, county, parish, borough, "
                    "township, town, village, district, city, municipal, place); row skipped",
                    "row 2: jurisdiction_geoid '13-075' is not a numeric GEOID; row skipped"]
    assert all(e["level"] == "file" for name, e in errors.items() if name.startswith("bad/"))


def test_round_trip_locus_v1_gives_back_the_same_rows(built: Path) -> None:
    back = read(built / "locus", "locus_v1")
    expected = SHARD_0 + SHARD_1 + [card_as_v1(r) for r in CARD]

    def key(r: dict) -> tuple:
        return r["header"], r["content"]

    assert sorted(back, key=key) == sorted(expected, key=key)  # same rows, same values
    # documented order: jurisdictions contiguous, then document_id, then section_index
    by_jurisdiction = [r["jurisdiction_geoid"] or r["jurisdiction_name"] for r in back]
    runs = [j for i, j in enumerate(by_jurisdiction) if i == 0 or by_jurisdiction[i - 1] != j]
    assert len(runs) == len(set(runs)) == 4
    full = [(r["jurisdiction_geoid"], r["document_id"], r["section_index"]) for r in back if r["document_id"]]
    assert full == sorted(full, key=lambda t: (runs.index(t[0]), t[1], t[2]))
    # written beside the sections, it is what locus_v1_table reads back from the built folder
    assert pa.Table.from_pylist(back, schema=v1.V1_SCHEMA).equals(v1.locus_v1_table(built / "locus"))
    # the configs agree with it
    sections = read(built / "locus", "sections")
    assert [s["text"] for s in sections] == [r["content"] for r in back]
    assert sections[0]["section_id"] == "ga-bartow:0" and sections[0]["number"] == "10-0"
    jurisdictions = {j["jurisdiction_id"]: j for j in read(built / "locus", "jurisdictions")}
    assert set(jurisdictions) == {"1300564", "13015", "4971290", "provo-ut"}
    assert jurisdictions["13015"]["kind"] == "county" and jurisdictions["provo-ut"]["county_fips"] == ["49049"]


def test_written_back_locus_v1_ingests_to_the_same_table(built: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    report = locus.build(from_locus_v1=built / "locus" / "data" / "locus_v1", out=again)
    assert report.files_rejected == 0
    assert v1.locus_v1_table(again).equals(v1.locus_v1_table(built / "locus"))


def test_query_search_and_counties_work_on_ingested_rows(built: Path) -> None:
    result = run("query", "SELECT jurisdiction_id, count(*) AS n FROM locus.locus_v1 v JOIN locus.sections s "
                 "ON s.text = v.content WHERE v.function = 'Rules' GROUP BY ALL ORDER BY 1", cwd=built)
    assert result.returncode == 0, result.stderr
    rules = sum(r["function"] == "Rules" for r in SHARD_0 + SHARD_1 + CARD)
    assert "provo-ut" in result.stdout and "4971290" in result.stdout
    from neurips26.sql import dataset_folders, run_query

    n = run_query("SELECT count(*) AS n FROM locus.locus_v1 WHERE function = 'Rules'", dataset_folders(built))
    assert n.to_pylist() == [{"n": rules}]
    result = run("search", "locus", "6-1", cwd=built)  # section number taken from the header
    assert result.returncode == 0, result.stderr
    assert "Dogs at large" in result.stdout
    from neurips26.search import Filters, search

    hits = search(built / "locus", "dog running at large", Filters(county="49049"), limit=20).to_pylist()
    assert {h["jurisdiction_id"] for h in hits} == {"4971290", "provo-ut"}
    reps = {r["county_fips"]: r for r in read(built / "locus", "county_representatives")}
    assert reps["13015"]["jurisdiction_id"] == "13015" and reps["13015"]["rule"] == counties.OWN
    assert reps["49049"]["jurisdiction_id"] == "4971290"  # 3 sections against Provo's 2
    assert reps["49049"]["rule"] == counties.BY_SECTIONS and reps["49049"]["n_candidates"] == 2


def test_lm_eval_tasks_build_from_ingested_rows(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lm_eval.tasks import TaskManager
    from neurips26.tasks import TASKS_DIR

    catchline = {s: read(built / "locus", "catchline", s) for s in ("train", "validation", "test")}
    assert all(catchline.values())
    monkeypatch.setenv("NEURIPS26_DATA", str(built))
    task = TaskManager(include_path=str(TASKS_DIR)).load(["locus_catchline"])["tasks"]["locus_catchline"]
    docs = list(task.test_docs())
    assert [d["heading"] for d in docs] == [r["heading"] for r in catchline["test"]]
    # the domain set needs the code's chapter headings, which LOCUS-v1 rows do not carry: a clear error
    assert not any(read(built / "locus", "domain", s) for s in ("train", "validation", "test"))
    with pytest.raises(UserError, match="empty test split .*no chapter headings.* evaluate locus_catchline"):
        TaskManager(include_path=str(TASKS_DIR)).load(["locus_domain"])


def test_label_tasks_use_the_released_labels(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a LOCUS-v1 ingest, locus_function/topic ask for LOCUS-v1's own majority labels."""
    from neurips26.tasks import evaluation

    released = {r["section_id"]: r for r in read(built / "locus", "v1_source")}
    monkeypatch.setenv("NEURIPS26_DATA", str(built))  # restored after the test (run() sets it too)
    run = evaluation.run(["locus_function", "locus_topic"], limit=2, output=tmp_path,
                         data=built)
    for task, field in [("locus_function", "function"), ("locus_topic", "topic")]:
        samples = [json.loads(line) for f in run.samples_files if f.name.startswith(f"samples_{task}_")
                   for line in f.read_text().splitlines()]
        assert samples and "acc,none" in run.results["results"][task]
        metadata = run.results["configs"][task]["metadata"]  # the protocol and the data it was computed on
        assert metadata["protocol"]["metric"] == "acc" and metadata["protocol"]["baseline"] == "majority"
        manifest = (built / "locus" / "manifest.json").read_bytes()
        assert metadata["data"] == {"resource": "locus", "config": field, "version": "1.1.0",
                                    "manifest_sha256": hashlib.sha256(manifest).hexdigest(), "demo": False}
        for sample in samples:
            label = released[sample["doc"]["section_id"]][field]
            assert sample["doc"]["answer"] == label and sample["doc"]["label_source"] == "released"


def test_scores_join_into_locus_v1(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the analysis layer's scores land: ``locus_v1_table(folder, scores)`` and ``write_locus_v1``."""
    sections = read(built / "locus", "sections")
    scores = pa.table({"section_id": [s["section_id"] for s in sections[:2]],
                       "function": ["Process", "Enforcement"], "opacity": [9.0, -9.0]})
    table = v1.locus_v1_table(built / "locus", scores).to_pylist()
    before = read(built / "locus", "locus_v1")
    assert [r["function"] for r in table[:2]] == ["Process", "Enforcement"]
    assert [r["opacity"] for r in table[:2]] == [9.0, -9.0]
    assert all(r["function"] is None for r in table[2:])  # the scores cover only two sections
    assert [r["topic"] for r in table] == [r["topic"] for r in before]  # columns not scored are kept
    # written into a copy of the folder: config, manifest and card stay consistent and load
    folder = tmp_path / "locus"
    shutil.copytree(built / "locus", folder)
    v1.write_locus_v1(folder, scores)
    assert read(folder, "locus_v1") == table
    manifest = json.loads((folder / "manifest.json").read_text())
    [shard] = manifest["configs"]["locus_v1"]["train"]
    assert hubfolder.sha256_file(folder / shard["path"]) == shard["sha256"]
    from datasets import load_dataset

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert load_dataset(str(folder), "locus_v1", split="train")["function"][:2] == ["Process", "Enforcement"]
    assert yaml.safe_load((folder / "README.md").read_text().split("---")[1])["license"] == "cc-by-nc-4.0"
    with pytest.raises(v1.V1Error, match="bogus"):
        v1.locus_v1_table(built / "locus", scores.append_column("bogus", pa.array([1, 2])))
    with pytest.raises(v1.V1Error, match=f"section_id '{sections[0]['section_id']}' appears more than once"):
        v1.locus_v1_table(built / "locus", pa.concat_tables([scores, scores]))
    with pytest.raises(v1.V1Error, match="section_id"):
        v1.locus_v1_table(built / "locus", scores.drop_columns(["section_id"]))


def test_scored_round_trip(built: Path, tmp_path: Path) -> None:
    """The whole loop: ingested (``built``), scored by ``neurips26 score locus``, written back as LOCUS-v1."""
    root = tmp_path / "data"
    shutil.copytree(built / "locus", root / "locus")
    result = run("score", "locus", "--data", str(root), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    scores = read(root / "locus", "scores")
    back = read(root / "locus", "locus_v1")
    before = read(built / "locus", "locus_v1")
    assert [s["section_id"] for s in scores] == [s["section_id"] for s in read(built / "locus", "sections")]
    unchanged = ("document_id", "section_index", "state", "jurisdiction_name", "jurisdiction_type",
                 "jurisdiction_geoid", "represented_county_fips", "represented_county_name", "header", "content")
    assert [{c: r[c] for c in unchanged} for r in back] == [{c: r[c] for c in unchanged} for r in before]
    for row, score in zip(back, scores, strict=True):  # the labels are the scores
        for c in ("function", "is_substantive", "topic", "opacity", "paternalism", "enforcement_discretion",
                  "problem_salience"):
            assert row[c] == score[c], c
    assert {r["function"] for r in back} <= set(records.FUNCTIONS)
    assert read(root / "locus", "v1_source") == read(built / "locus", "v1_source")  # the released labels stay
    card = yaml.safe_load((root / "locus" / "README.md").read_text().split("---")[1])
    assert card["license"] == "cc-by-nc-4.0"  # scoring keeps LOCUS-v1's license
    assert {"scores", "locus_v1"} <= {c["config_name"] for c in card["configs"]}


def test_raw_build_of_the_real_sample_writes_locus_v1(real_locus: Path, tmp_path: Path) -> None:
    out = tmp_path / "locus"
    locus.build(raw=real_locus, out=out, workers=2)
    sections, table = read(out, "sections"), read(out, "locus_v1")
    assert len(table) == len(sections)
    assert [r["content"] for r in table] == [s["text"] for s in sections]
    assert all(r[c] is None for r in table for c in v1.LABELS)  # nothing scored yet
    dc = next(r for r in table if r["document_id"] == "dc")
    assert dc["represented_county_fips"] == ["11001"] and dc["jurisdiction_type"] == "district"
    assert pq.read_schema(next((out / "data" / "locus_v1").glob("*.parquet"))).remove_metadata() == \
        v1.V1_SCHEMA.remove_metadata()


def test_bad_locus_v1_folder_and_both_sources_are_clear_errors(tmp_path: Path, download: Path) -> None:
    with pytest.raises(v1.V1Error, match="LOCUS-v1 folder not found"):
        locus.build(from_locus_v1=tmp_path / "nope", out=tmp_path / "out")
    with pytest.raises(locus.BuildError, match="not both"):
        locus.build(raw=tmp_path, from_locus_v1=download, out=tmp_path / "out")
    result = run("build", "tar", "--from-locus-v1", str(download), cwd=tmp_path)
    assert result.returncode == 2 and "--from-locus-v1 applies to locus" in result.stderr


def test_section_ids_of_repeated_and_missing_keys(tmp_path: Path) -> None:
    """``<document_id>:<section_index>`` in output order, ``<jurisdiction_id>:<k>`` where either is missing, ``~k``
    for the k-th occurrence of an id in the whole download: repeats split across files, a document_id in two
    jurisdictions, an empty document_id sorting with the missing ones, a document_id equal to the jurisdiction's
    id (whose ids can meet the made-up ones). Every id is unique."""
    def row(doc: str | None, index: int | None, who: tuple, k: int) -> dict:
        return {**full_row(doc, index, *who, f"Sec. {k}. - Dogs", k), "document_id": doc}

    first = [row("d", 1, ADAIRSVILLE, 0), row(None, 5, ADAIRSVILLE, 1), row("", 1, ADAIRSVILLE, 2),
             row("1300564", 0, ADAIRSVILLE, 3), row("d", 1, BARTOW, 4), row("d", 2, BARTOW, 5)]
    second = [row("d", 1, ADAIRSVILLE, 6), row("", None, ADAIRSVILLE, 7), row("1300564", 2, ADAIRSVILLE, 8),
              row("d", 1, BARTOW, 9), row("d", 1, BARTOW, 10)]
    (tmp_path / "in").mkdir()
    for name, rows in (("a", first), ("b", second)):
        pq.write_table(pa.Table.from_pylist(rows, schema=v1.V1_SCHEMA), tmp_path / "in" / f"{name}.parquet")
    locus.build(from_locus_v1=tmp_path / "in", out=tmp_path / "locus")
    ids = {r["text"]: r["section_id"] for r in read(tmp_path / "locus", "sections")}
    ids = [ids[f"{TEXT}({k})"] for k in range(11)]
    # Bartow County (13015) comes first: ("d", 1) k4, k9, k10, then ("d", 2) k5
    assert ids[4:6] + ids[9:] == ["d:1", "d:2", "d:1~2", "d:1~3"]
    # Adairsville (1300564), in output order: ("", 1) k2, (None, 5) k1, ("", None) k7, ("1300564", 0) k3,
    # ("1300564", 2) k8, ("d", 1) k0 and k6 (Bartow's ids went first); the made-up id of k7 (position 2) meets k8's
    assert ids[:4] + ids[6:9] == ["d:1~4", "1300564:1", ":1", "1300564:0", "d:1~5", "1300564:2", "1300564:2~2"]
    assert len(set(ids)) == len(ids)


def test_ingest_writes_the_bytes_of_a_serial_build(tmp_path: Path) -> None:
    """The ingest writes sections, v1_source and locus_v1 each in a thread of its own, beside the rest of the build:
    with several row groups per config and codes split across files, a rebuild gives the same folder byte for byte,
    sections and v1_source are the shards one writer makes of every row at once, and locus_v1 the shards the
    raw-code path makes from the built sections and v1_source."""
    n, codes = 20_000, 40
    code = [i * codes // n for i in range(n)]
    rows = pa.table({
        "document_id": [f"doc-{k}" for k in code], "section_index": list(range(n)), "state": ["GA"] * n,
        "jurisdiction_name": [f"City {k}" for k in code], "jurisdiction_type": ["city"] * n,
        "jurisdiction_geoid": [f"13{k:05d}" for k in code],
        "header": [f"Sec. {k}-{i}. - Dogs at large" for i, k in enumerate(code)],
        "content": [f"{TEXT}({i})" for i in range(n)],
        "function": [records.FUNCTIONS[i % 4] for i in range(n)], "topic": [records.TOPICS[i % 5] for i in range(n)],
        "is_substantive": [i % 4 != 0 for i in range(n)]})
    (tmp_path / "in").mkdir()
    for name, (start, stop) in {"a": (0, 7_001), "b": (7_001, 13_500), "c": (13_500, n)}.items():
        pq.write_table(rows.slice(start, stop - start), tmp_path / "in" / f"{name}.parquet")
    first, again = tmp_path / "locus", tmp_path / "again"
    locus.build(from_locus_v1=tmp_path / "in", out=first)
    locus.build(from_locus_v1=tmp_path / "in", out=again)
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (first / rel).read_bytes() == (again / rel).read_bytes(), rel

    meta = pq.ParquetFile(next((first / "data" / "locus_v1").glob("*.parquet"))).metadata
    assert meta.num_rows == n and meta.num_row_groups == 3
    serial = tmp_path / "serial"
    sections, source = v1_ingest.read_v1(tmp_path / "in").tables
    for config, schema, table in (("sections", records.SECTIONS, sections), ("v1_source", records.V1_SOURCE, source)):
        writer = hubfolder.SplitWriter(serial, config, schema)
        writer.write_batch(table)
        writer.close()
    shutil.copytree(first / "data" / "county_representatives", serial / "data" / "county_representatives")
    shutil.copytree(first / "data" / "jurisdictions", serial / "data" / "jurisdictions")
    v1.write_shards(serial)
    for config in ("sections", "v1_source", "locus_v1"):
        shard = "train-00000-of-00001.parquet"
        assert (serial / "data" / config / shard).read_bytes() == (first / "data" / config / shard).read_bytes()
