"""LOCUS builder end to end: Hub folder layout, load_dataset, determinism, bad input, real data."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus import records
from neurips26.corpora.locus.formats import line_kinds

from neurips26 import hubfolder
from tests.conftest import REAL

HEADING_WORDS = line_kinds.HEADING_WORDS

CONFIGS = ("sections", "jurisdictions", "counties", "errors", "text_coverage", "domain", "catchline", "function",
           "topic", "county_representatives",
           "coverage", "locus_v1")


def read_config(folder: Path, config: str, split: str = "train") -> list[dict]:
    return pq.read_table(sorted((folder / "data" / config).glob(f"{split}-*.parquet"))).to_pylist()


def manifest_rows(folder: Path) -> dict[tuple[str, str], int]:
    manifest = json.loads((folder / "manifest.json").read_text())
    return {(config, split): sum(s["rows"] for s in shards)
            for config, splits in manifest["configs"].items() for split, shards in splits.items()}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "locus"
    report = locus.build(out=out)
    assert report.sections > 0 and report.reconciles()
    return out


def test_folder_layout_and_card(sample: Path) -> None:
    for name in ("README.md", "croissant.json", "manifest.json"):
        assert (sample / name).is_file(), name
    text = (sample / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(text.split("---")[1])
    for key in ("pretty_name", "license", "task_categories", "size_categories", "configs", "dataset_info"):
        assert header[key], key
    rows = manifest_rows(sample)
    declared = [c for c in CONFIGS if any(c2 == c for c2, _ in rows)]
    assert [c["config_name"] for c in header["configs"]] == declared  # every config, the empty errors one too
    info = {(d["config_name"], s["name"]): s["num_examples"] for d in header["dataset_info"] for s in d["splits"]}
    assert info == rows
    assert f"{rows['sections', 'train']:,} sections" in text  # counts filled into the prose
    manifest = json.loads((sample / "manifest.json").read_text())
    for splits in manifest["configs"].values():
        for shard in (s for shards in splits.values() for s in shards):
            path = sample / shard["path"]
            assert re.fullmatch(r"(train|validation|test)-\d{5}-of-\d{5}\.parquet", path.name)
            assert hubfolder.sha256_file(path) == shard["sha256"]
            assert pq.ParquetFile(path).metadata.num_rows == shard["rows"]
            meta = pq.ParquetFile(path).metadata
            assert (meta.num_row_groups > 0) == bool(shard["rows"])  # an empty split: a shard without row groups
            if shard["rows"]:
                assert meta.row_group(0).column(0).compression == "ZSTD"


def test_load_dataset_every_config_offline(sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from datasets import load_dataset

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for (config, split), n in manifest_rows(sample).items():
        if not n:  # datasets 5.2 materialises only non-empty splits; an empty one streams as zero rows
            assert list(load_dataset(str(sample), config, split=split, streaming=True)) == [], (config, split)
            continue
        ds = load_dataset(str(sample), config, split=split)
        assert ds.num_rows == n, (config, split)
    sections = load_dataset(str(sample), "sections", split="train")
    assert {"section_id", "number", "heading", "text", "path", "history", "cross_references",
            "status", "order", "source_file"} <= set(sections.column_names)
    assert len(set(sections["section_id"])) == sections.num_rows  # ids unique


def test_sample_content_is_sound(sample: Path) -> None:
    sections = read_config(sample, "sections")
    jurisdictions = read_config(sample, "jurisdictions")
    counties = read_config(sample, "counties")
    assert len({j["jurisdiction_id"] for j in jurisdictions}) >= 5
    assert {s["status"] for s in sections} >= {"active"}
    assert all(s["heading"] and s["number"] for s in sections)
    # every county row lists the codes that apply there and the counts add up
    n_by_j = {j["jurisdiction_id"]: j["n_sections"] for j in jurisdictions}
    for c in counties:
        assert re.fullmatch(r"\d{5}", c["county_fips"])
        assert c["n_sections"] == sum(n_by_j[j] for j in c["jurisdiction_ids"])
        if c["county_code_id"]:
            assert c["jurisdiction_ids"][0] == c["county_code_id"]
    assert any(c["n_jurisdictions"] > 1 for c in counties), "sample should have a county with several codes"
    assert sum(j["n_sections"] for j in jurisdictions) == len(sections)


def test_rebuild_is_byte_identical_for_any_worker_count(sample: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers (their rows spooled as Arrow files in a temporary folder) give the one-worker folder, byte for
    byte, and leave no spool behind."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    again = tmp_path / "locus"
    locus.build(out=again, workers=2)
    for rel in ["manifest.json", "README.md", "croissant.json"] + [
            p.relative_to(sample).as_posix() for p in sample.glob("data/*/*.parquet")]:
        assert (again / rel).read_bytes() == (sample / rel).read_bytes(), rel
    assert list(temp.iterdir()) == []


def test_croissant_validates_and_loads_records(sample: Path) -> None:
    import mlcroissant as mlc

    dataset = mlc.Dataset(jsonld=str(sample / "croissant.json"))  # raises on validation errors
    records = list(zip(range(5), dataset.records("sections"), strict=False))
    assert len(records) == 5
    first = records[0][1]
    assert first["sections/section_id"].decode()  # text comes back as bytes
    meta = json.loads((sample / "croissant.json").read_text())
    for key in ("rai:dataCollection", "rai:dataBiases", "rai:dataLimitations", "rai:dataUseCases",
                "rai:personalSensitiveInformation", "rai:dataSocialImpact"):
        assert meta.get(key), f"Responsible-AI field {key} missing"
    non_empty = {c for (c, _), n in manifest_rows(sample).items() if n}
    assert {rs["name"] for rs in meta["recordSet"]} == non_empty


def test_shards_roll_over_at_the_byte_budget(tmp_path: Path) -> None:
    spec = hubfolder.ConfigSpec("t", records.ERRORS, "test")
    writer = hubfolder.SplitWriter(tmp_path, "t", records.ERRORS, shard_bytes=2_000, row_group_rows=50)
    rows = [{"source_file": f"f{i}", "jurisdiction_id": "j", "level": "file", "reason": f"r{i}" * 20}
            for i in range(500)]
    writer.write_all(rows)
    spec.shards["train"] = writer.close()
    assert len(spec.shards["train"]) > 1
    names = [Path(s.path).name for s in spec.shards["train"]]
    n = len(names)
    assert names == [f"train-{i:05d}-of-{n:05d}.parquet" for i in range(n)]
    back = pq.read_table([tmp_path / s.path for s in spec.shards["train"]]).to_pylist()
    assert back == rows  # order kept, nothing lost


def test_shards_use_a_dictionary_only_for_columns_that_repeat(tmp_path: Path) -> None:
    """Repeated values (here a label, a list of counties, a struct's path) are dictionary-encoded; unique ones
    (text, ids, scores) plain; the bytes do not depend on how the rows were batched; DuckDB reads them back."""
    import duckdb
    import pyarrow as pa

    schema = pa.schema([("id", pa.string()), ("text", pa.string()), ("label", pa.string()),
                        ("score", pa.float64()), ("counties", pa.list_(pa.string())),
                        ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())]))])
    rows = [{"id": f"s{i}", "text": f"section {i} text " * 5, "label": ("Rules", "Process")[i % 2], "score": i / 7,
             "counties": ["13015"], "image": {"bytes": str(i).encode(), "path": "img.png"}} for i in range(300)]
    digests = []
    for batch_rows in (300, 7):
        writer = hubfolder.SplitWriter(tmp_path / str(batch_rows), "t", schema, row_group_rows=100)
        for start in range(0, len(rows), batch_rows):
            writer.write_batch(pa.Table.from_pylist(rows[start:start + batch_rows], schema=schema))
        shard = writer.close()[0]
        digests.append(shard.sha256)
    path = tmp_path / "300" / shard.path
    meta = pq.ParquetFile(path).metadata.row_group(0)
    dictionary = {meta.column(i).path_in_schema for i in range(meta.num_columns)
                  if any("DICTIONARY" in e for e in meta.column(i).encodings)}
    assert dictionary == {"label", "counties.list.element", "image.path"}
    assert {meta.column(i).compression for i in range(meta.num_columns)} == {"ZSTD"}
    assert digests[0] == digests[1]
    assert duckdb.sql(f"SELECT * FROM '{path}'").arrow().read_all().to_pylist() == rows


# --- bad input --------------------------------------------------------------------------

GOOD_MUNICODE = (
    "THE CODE OF THE TOWN OF TESTVILLE\nPREFACE some front matter\n"
    "Chapter 1 - GENERAL PROVISIONS\n"
    "Sec. 1-1. - Title. This code is the code of the town. (Ord. No. 1, 1-1-2020)\n"
    "Sec. 1-2. - Definitions. Words mean what they say.\n"
)


def write_raw(root: Path, rows: list[str], files: dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "jurisdictions.csv").write_text(
        "jurisdiction_id,name,kind,state,counties,source\n" + "\n".join(rows) + "\n", encoding="utf-8")
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def test_bad_inputs_are_reported_and_good_ones_still_built(tmp_path: Path) -> None:
    raw = write_raw(tmp_path / "raw", [
        "good,Town of Testville,town,GA,Bartow County,test",
        "mixed,Town of Mixed,town,GA,Bartow County;Atlantis County,test",
        "nofolder,Town of Nowhere,town,GA,Bartow County,test",
        "badkind,Hamlet,hamlet,GA,Bartow County,test",
    ], {
        "good/code.txt": GOOD_MUNICODE.encode(),
        "mixed/code.txt": GOOD_MUNICODE.encode(),
        "mixed/empty.txt": b"",
        "mixed/truncated.xml": b'<?xml version="1.0"?>\n<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><div>',
        "mixed/junk.bin": bytes(range(256)) * 8,
        "mixed/latin1.txt": GOOD_MUNICODE.replace("town.", "caf\u00e9 town.").encode("latin-1"),
        "badkind/code.txt": GOOD_MUNICODE.encode(),
        "unlisted/code.txt": GOOD_MUNICODE.encode(),
    })
    out = tmp_path / "locus"
    report = locus.build(raw=raw, out=out)
    assert report.reconciles()
    assert report.files_in == 8
    assert report.files_parsed == 2 and report.files_rejected == 6
    errors = read_config(out, "errors")
    by_file = {e["source_file"]: e["reason"] for e in errors if e["level"] == "file"}
    assert "empty" in by_file["mixed/empty.txt"]
    assert "not well-formed" in by_file["mixed/truncated.xml"].lower() or "line" in by_file["mixed/truncated.xml"]
    assert "binary" in by_file["mixed/junk.bin"] or "no supported format" in by_file["mixed/junk.bin"]
    assert "UTF-8" in by_file["mixed/latin1.txt"]
    assert "rejected in jurisdictions.csv" in by_file["badkind/code.txt"]
    assert "not in a folder listed" in by_file["unlisted/code.txt"]
    rows = [e["reason"] for e in errors if e["level"] == "row"]
    assert any("Atlantis County" in r and "line 3" in r for r in rows)
    assert any("nofolder" in r and "missing" in r for r in rows)
    assert any("'hamlet'" in r for r in rows)
    # everything good is still built
    sections = read_config(out, "sections")
    assert sorted({s["jurisdiction_id"] for s in sections}) == ["good", "mixed"]
    assert len(sections) == 4
    mixed = next(j for j in read_config(out, "jurisdictions") if j["jurisdiction_id"] == "mixed")
    assert mixed["county_fips"] == ["13015"] and mixed["counties"] == ["Bartow County", "Atlantis County"]


def test_unusable_csv_is_a_clear_error(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "jurisdictions.csv").write_text("id,name\nx,y\n")
    with pytest.raises(locus.BuildError, match="missing column"):
        locus.build(raw=raw, out=tmp_path / "out")
    with pytest.raises(locus.BuildError, match="not found"):
        locus.build(raw=tmp_path / "nope", out=tmp_path / "out")


# --- the real shared sample -------------------------------------------------------------

@pytest.fixture(scope="module")
def real_build(real_locus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, locus.BuildReport]:
    out = tmp_path_factory.mktemp("real") / "locus"
    return out, locus.build(raw=real_locus, out=out, workers=2)


def test_real_sample_counts(real_build: tuple[Path, locus.BuildReport], locus_raw: Path) -> None:
    out, report = real_build
    assert report.reconciles()
    n_files = sum(1 for _, f, *_ in REAL for p in (locus_raw / f).rglob("*") if p.is_file())
    assert report.files_in == n_files
    sections = read_config(out, "sections")
    by_j: dict[str, list[dict]] = {}
    for s in sections:
        by_j.setdefault(s["jurisdiction_id"], []).append(s)
    # every D.C. section file is one section
    assert len(by_j["dc"]) == len(list((locus_raw / "dc-code/titles/8/sections").glob("*.xml")))
    # every Sec./Secs. line of a Municode export is one section (Adairsville comes from its TEI twin), and so is
    # the text under a heading that no section line starts (numbered by the heading: `Appendix A`)
    for jid, folder, *_ in REAL[:6]:
        text = next((locus_raw / folder).glob("*.txt")).read_text(encoding="utf-8-sig")
        # Fairmount's charter numbers its sections "Section 1.10. - ..."; Baldwin has one "[Sec. 4.3. - ...]";
        # Edison's personnel policies "1.01. - ..."
        lines = re.findall(r"^(?:\[?Secs?\. |Section [0-9.]+\. - |\d+\.\d+\. - [A-Z])", text, re.M)
        numbered = [s for s in by_j[jid] if not re.match(rf"(?:{HEADING_WORDS}) ", s["number"])]
        assert len(numbered) == len(lines), jid
        numbers = Counter(s["number"] for s in by_j[jid])
        for number in re.findall(r"^Sec\. (\S+?)\. - ", text, re.M):
            assert numbers[number] > 0, (jid, number)
    files = {f["path"]: f for f in json.loads((out / "build_report.json").read_text())["files"]}
    assert files["adairsville/ga-muni-adairsville-code-full.txt"]["status"] == "duplicate"
    assert {s["format"] for s in by_j["adairsville"]} == {"tei-xml"}
    # Spanish Fork: the .txt twins and the JSON schema are not a supported code format
    errors = {e["source_file"]: e["reason"] for e in read_config(out, "errors") if e["level"] == "file"}
    assert "spanish-fork/municipal_code_v1_1.schema.json" in errors
    assert all(e.startswith("spanish-fork/") for e in errors), errors
    ids = [s["section_id"] for s in sections]
    assert len(ids) == len(set(ids))
    # the access layer
    counties = {c["county_fips"]: c for c in read_config(out, "counties")}
    assert counties["13059"]["county_code_id"] == "athens-clarke"
    assert counties["11001"]["jurisdiction_ids"] == ["dc"]
    assert counties["13015"]["jurisdiction_ids"] == ["adairsville"]


def test_query_and_search_on_real_sample(real_build: tuple[Path, locus.BuildReport],
                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from neurips26.search import Filters, index_path, search
    from neurips26.sql import dataset_folders, run_query

    monkeypatch.setenv("NEURIPS26_CACHE", str(tmp_path / "cache"))
    out, _ = real_build
    folders = dataset_folders(out.parent)
    n = run_query("SELECT count(*) AS n FROM locus.sections WHERE jurisdiction_id = 'dc'", folders)
    assert n.to_pylist()[0]["n"] == 625
    hits = search(out, "1-1.11").to_pylist()
    assert hits[0]["number"] == "1-1.11" and hits[0]["jurisdiction_id"] == "adairsville"
    index = index_path(out)
    built_at = index.stat().st_mtime_ns
    hits = search(out, "dogs running at large", Filters(state="UT"), limit=5).to_pylist()
    assert hits and all(h["state"] == "UT" for h in hits)
    assert index.stat().st_mtime_ns == built_at  # reused, not rebuilt
    hits = search(out, "council meeting", Filters(county="13059"), limit=5).to_pylist()
    assert hits and {h["jurisdiction_id"] for h in hits} == {"athens-clarke"}


def test_query_cannot_write_attach_install_or_read_elsewhere(sample: Path, tmp_path: Path) -> None:
    from neurips26.sql import QueryError, dataset_folders, run_query

    folders = dataset_folders(sample.parent)
    ok = run_query("SELECT count(*) AS n FROM locus.jurisdictions", folders).to_pylist()[0]["n"]
    assert ok >= 5
    target = sample / "data" / "x.csv"
    refused = [
        f"COPY (SELECT 1) TO '{target}'",
        f"ATTACH '{tmp_path / 'x.duckdb'}' AS x",
        "INSTALL httpfs",
        "LOAD fts",
        "SELECT * FROM read_csv('/etc/passwd')",
        f"SELECT * FROM read_parquet('{shutil.which('python') or '/bin/sh'}')",
        "CREATE TABLE t AS SELECT 1",
        "SELECT 1; SELECT 2",
        "SET enable_external_access = true",
    ]
    for sql in refused:
        with pytest.raises(QueryError):
            run_query(sql, folders)
    assert not target.exists()


def test_build_refuses_to_overwrite_a_folder_it_did_not_build(tmp_path: Path) -> None:
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "data").mkdir()
    (precious / "data" / "thesis.tex").write_text("years of work")
    with pytest.raises(FileExistsError, match="not a dataset folder"):
        locus.build(out=precious)
    assert (precious / "data" / "thesis.tex").read_text() == "years of work"
