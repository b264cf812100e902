"""Round 2 of the hardening, raw files and killed runs: hidden raw files skipped without a word (hole 6), UTF-16
files and XML entities (hole 8), files left behind by ``kill -9`` (hole 10)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus import raw as locus_raw
from neurips26.corpora.locus.build import SAMPLE_DIR

from neurips26 import search as search_module
from neurips26.hubfolder import rawfiles
from tests.hardening_fixtures import tiny_folder

XXE = ('<!DOCTYPE TEI [<!ENTITY xxe SYSTEM "file:///etc/hostname"> <!ENTITY county "Putnam County">]>\n')


def dead_pid() -> int:
    """The id of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture(scope="module")
def hostile_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[locus.BuildReport, dict[str, str]]:
    """The sample with hidden files and folders, a UTF-16 copy of a text export and a TEI file declaring an external
    entity, built once: (report, source_file -> error reason)."""
    tmp = tmp_path_factory.mktemp("hostile_raw")
    raw = tmp / "raw"
    shutil.copytree(SAMPLE_DIR, raw)
    (raw / "harrow-mill-ga" / ".notes.txt").write_text("Sec. 1-1. Hidden.\nnever read\n")
    (raw / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (raw / "sage-hollow-ut" / ".git").mkdir()
    (raw / "sage-hollow-ut" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    text = (raw / "quillan-springs-ga" / "ga-muni-quillan-springs-code-full.txt").read_text(encoding="utf-8")
    (raw / "quillan-springs-ga" / "utf16-export.txt").write_bytes(text.encode("utf-16"))
    tei = (raw / "putnam-county-ga" / "ga-muni-putnam-county-code-full-markup.xml").read_text(encoding="utf-8")
    declaration_end = tei.index("?>") + 2 if tei.startswith("<?xml") else 0
    (raw / "putnam-county-ga" / "xxe-copy.xml").write_text(tei[:declaration_end] + "\n" + XXE + tei[declaration_end:])
    out = tmp / "built" / "locus"
    report = locus.build(raw=raw, out=out)
    errors = {e["source_file"]: e["reason"] for e in
              pq.read_table(sorted((out / "data" / "errors").glob("*.parquet"))).to_pylist()}
    return report, errors


# -- hole 6 ----------------------------------------------------------------------------------------------------

def test_hidden_raw_files_are_counted_and_reported(hostile_build: tuple[locus.BuildReport, dict[str, str]]) -> None:
    report, errors = hostile_build
    assert report.reconciles()
    assert errors["harrow-mill-ga/.notes.txt"].startswith("hidden file (its name starts with '.'): not read")
    assert errors[".DS_Store"].startswith("hidden file")
    assert errors["sage-hollow-ut/.git"].startswith("hidden folder")
    reference = locus.build(out=Path(tempfile.mkdtemp()) / "locus")
    assert report.files_in >= reference.files_in + 5  # 3 hidden entries, the UTF-16 copy, the XXE copy


def test_walk_lists_hidden_names_with_their_reason(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / ".hidden.txt").write_text("x")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "inner.txt").write_text("x")
    (tmp_path / "a" / "seen.txt").write_text("x")
    ok, refused = rawfiles.readable(tmp_path)
    assert [p.name for p in ok] == ["seen.txt"]
    assert {p.relative_to(tmp_path).as_posix(): why.split(":")[0] for p, why in refused} == {
        ".cache": "hidden folder (its name starts with '.')", "a/.hidden.txt": "hidden file (its name starts with '.')"}


# -- hole 8 ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-8"])
def test_as_utf8_reads_a_bom_file_as_text(encoding: str) -> None:
    text = '<?xml version="1.0" encoding="UTF-16"?>\n<TEI>Sec. 1-1. Café — § 2.</TEI>\n'
    data = ("\ufeff" + text).encode(encoding)  # the BOM as the tool that wrote the file put it
    assert rawfiles.bom_encoding(data) is not None
    assert rawfiles.as_utf8(data).decode("utf-8") == text.replace('encoding="UTF-16"', 'encoding="UTF-8"')
    assert rawfiles.as_utf8(b"plain bytes \xff") == b"plain bytes \xff"  # no BOM: unchanged
    with pytest.raises(rawfiles.EncodingProblem, match="UTF-16-LE byte-order mark but byte"):
        rawfiles.as_utf8(b"\xff\xfeA\x00\x00\xd8")  # a lone surrogate half


def test_entity_warning_names_external_and_internal_entities() -> None:
    data = ('<?xml version="1.0"?>\n' + XXE + "<TEI><p>&xxe; &county;</p></TEI>").encode()
    assert rawfiles.entity_declarations(data) == [("xxe", 'SYSTEM "file:///etc/hostname"'), ("county", "internal")]
    warning = rawfiles.entity_warning(data)
    assert warning and "external entity xxe (SYSTEM \"file:///etc/hostname\") not read" in warning
    assert rawfiles.entity_warning(b"<TEI><p>no doctype</p></TEI>") is None


def test_a_utf16_export_is_read_and_an_xxe_is_named(hostile_build: tuple[locus.BuildReport, dict[str, str]]) -> None:
    _, errors = hostile_build
    assert "binary data" not in errors.get("quillan-springs-ga/utf16-export.txt", "")
    assert "external entity xxe" in errors.get("putnam-county-ga/xxe-copy.xml", "")


# -- hole 10 ---------------------------------------------------------------------------------------------------

def test_a_search_index_build_killed_with_sigkill_leaves_nothing_after_the_next_search(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tiny_folder(tmp_path / "data")
    cache = tmp_path / "cache"
    monkeypatch.setenv("NEURIPS26_CACHE", str(cache))
    killed = ("import os, sys\nfrom pathlib import Path\nimport neurips26.search as s\nbuild = s._build_index\n"
              "def build_then_die(path, scratch, shards):\n    build(path, scratch, shards)\n"
              "    os.kill(os.getpid(), 9)\n"
              f"s._build_index = build_then_die\ns.search(Path({str(folder)!r}), 'dog')\n")
    run = subprocess.run([sys.executable, "-c", killed], env={**os.environ, "NEURIPS26_CACHE": str(cache)})
    assert run.returncode == -signal.SIGKILL
    left = sorted(p.name for p in (cache / "search").iterdir() if not p.name.endswith(".lock"))
    assert any(n.endswith(".building") for n in left) and any(n.endswith(".scratch") for n in left), left
    live = cache / "search" / f".other-index.duckdb.{os.getppid()}.building"  # a build still running elsewhere
    live.write_bytes(b"")
    assert search_module.search(folder, "dog").num_rows == 1
    left = sorted(p.name for p in (cache / "search").iterdir() if not p.name.endswith(".lock"))
    assert left == sorted([search_module.index_path(folder).name, live.name])


def test_a_killed_builds_spool_folder_is_removed_by_the_next_build(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / f"locus-spool-{dead_pid()}-k1ll3d"
    stale.mkdir()
    (stale / "caddis-lake-wi.arrow").write_bytes(b"half")
    live = tmp_path / f"locus-spool-{os.getppid()}-running"
    live.mkdir()
    errors: list[dict] = []
    jurisdictions = locus_raw.read_jurisdictions(SAMPLE_DIR, errors)[:2]
    results = list(locus_raw.run([(SAMPLE_DIR, j) for j in jurisdictions], workers=2))
    assert [r.jurisdiction_id for r in results] == [j.jurisdiction_id for j in jurisdictions]
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name]
