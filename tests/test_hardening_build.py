"""Crash-safe builds and raw folders with symbolic links.

A build killed with SIGKILL at any point leaves nothing a reader accepts (the previous build, or no folder),
and the same command then rebuilds in place, byte for byte the clean build. Links out of the raw folder are
rejected with the reason, never read.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus.build import SAMPLE_DIR

from neurips26 import hubfolder
from neurips26.errors import UserError
from neurips26.hubfolder import staging
from neurips26.sql import QueryError, dataset_folders, run_query


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def build_command(out: Path) -> list[str]:
    return [sys.executable, "-m", "neurips26.cli", "build", "locus", "--out", str(out)]


def kill_when(out: Path, ready: Callable[[Path], bool]) -> str:
    """Start ``neurips26 build locus --out out``, SIGKILL it as soon as ``ready(its staging folder)``; return
    how it ended ("killed" or "finished": a fast build can finish before the point is seen)."""
    proc = subprocess.Popen(build_command(out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stage = staging.staging_folder(out, proc.pid)
    while proc.poll() is None:
        if ready(stage):
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return "killed"
        time.sleep(0.002)
    assert proc.returncode == 0, proc.stderr.read().decode() if proc.stderr else ""
    return "finished"


def shards_written(stage: Path) -> bool:
    return any((stage / "data" / "sections").glob("*")) if (stage / "data" / "sections").is_dir() else False


def manifest_written(stage: Path) -> bool:
    return (stage / "manifest.json").is_file()


def assert_refused_everywhere(out: Path) -> None:
    """No reader takes the folder: it is absent (the partial build is hidden) and our readers say to build it."""
    assert not out.exists()
    assert not list(out.parent.glob(f"{out.name}/**/*.parquet"))
    with pytest.raises(UserError, match="neurips26 build locus"):
        hubfolder.built_folder("locus", out.parent)
    assert dataset_folders(out.parent) == {}  # the hidden staging folder, manifest or not, is no dataset
    with pytest.raises(QueryError, match="no dataset folders"):
        run_query("SELECT count(*) FROM locus.sections", dataset_folders(out.parent))


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("clean") / "locus"
    locus.build(out=out)
    return folder_bytes(out)


def test_killed_builds_leave_nothing_readable_and_rebuild_identically(tmp_path: Path,
                                                                      clean: dict[str, bytes]) -> None:
    out = tmp_path / "locus"
    ended = [kill_when(out, shards_written)]  # mid-way: shards, no manifest
    if ended[-1] == "killed":
        assert_refused_everywhere(out)
    shutil.rmtree(out, ignore_errors=True)
    ended.append(kill_when(out, manifest_written))  # after the manifest, before the rename
    if ended[-1] == "killed":
        assert_refused_everywhere(out)
        assert any(p.name.startswith(".locus.partial-") for p in tmp_path.iterdir())
    assert "killed" in ended, "the build finished before any kill point was seen"

    run = subprocess.run(build_command(out), capture_output=True, text=True)  # the same command again
    assert run.returncode == 0, run.stderr
    assert folder_bytes(out) == clean
    assert sorted(p.name for p in tmp_path.iterdir()) == ["locus"]  # the killed builds' folders are gone

    # killing a rebuild of a good folder keeps the good folder, untouched
    if kill_when(out, shards_written) == "killed":
        assert folder_bytes(out) == clean
        assert hubfolder.built_folder("locus", tmp_path) == out


def test_a_swap_interrupted_between_its_renames_is_undone(tmp_path: Path, clean: dict[str, bytes]) -> None:
    out = tmp_path / "locus"
    locus.build(out=out)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out.rename(tmp_path / f".locus.previous-{dead.pid}")  # killed after moving the old build aside
    staging.recover(out)
    assert folder_bytes(out) == clean


def test_an_old_style_partial_folder_is_refused_by_readers_and_replaced_by_a_build(
        tmp_path: Path, clean: dict[str, bytes]) -> None:
    out = tmp_path / "locus"
    (out / "data" / "sections").mkdir(parents=True)
    (out / "data" / "sections" / "train-00000-of-00001.parquet").write_bytes(b"PAR1 partial")
    (out / "data" / "sections" / ".train-part00001").write_bytes(b"PAR1")
    with pytest.raises(UserError, match="not a complete build.*neurips26 build locus"):
        hubfolder.built_folder("locus", tmp_path)
    assert dataset_folders(tmp_path) == {}
    locus.build(out=out)  # the same command: not refused as "not a dataset folder built here"
    assert folder_bytes(out) == clean


def test_a_folder_of_the_users_is_never_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    (mine / "data").mkdir(parents=True)
    (mine / "data" / "notes.parquet").write_bytes(b"mine")  # not a shard name
    with pytest.raises(FileExistsError, match="not a dataset folder built here"):
        locus.build(out=mine)
    assert (mine / "data" / "notes.parquet").read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_a_failed_add_config_leaves_the_folder_as_it_was(tmp_path: Path, clean: dict[str, bytes]) -> None:
    out = tmp_path / "locus"
    locus.build(out=out)
    table = pq.read_table(sorted((out / "data" / "jurisdictions").glob("*.parquet")))
    spec = hubfolder.ConfigSpec("extra", table.schema, "An added config.")
    with pytest.raises(KeyError):
        hubfolder.add_config(out, spec, table, {})  # the card needs metadata this call does not give
    assert folder_bytes(out) == clean
    assert sorted(p.name for p in tmp_path.iterdir()) == ["locus"]


def test_symlinks_leaving_the_raw_folder_are_rejected_with_a_reason(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    shutil.copytree(SAMPLE_DIR, raw)
    secret = tmp_path / "secret.txt"
    secret.write_text("Sec. 1-1. Password.\nhunter2\n")
    jurisdiction, other = sorted(p for p in raw.iterdir() if p.is_dir())[:2]
    os.symlink(secret, jurisdiction / "leak.txt")
    os.symlink(other, jurisdiction / "inner")  # a link to a folder
    elsewhere = tmp_path / "elsewhere" / other.name  # a jurisdiction folder linked in from elsewhere: read
    other.rename(elsewhere.parent.mkdir() or elsewhere)
    os.symlink(elsewhere, other)
    inside = next(p for p in sorted(jurisdiction.rglob("*")) if p.is_file())
    os.symlink(inside, raw / "inside-link.txt")  # inside the raw folder: read (a stray file at the top)
    out = tmp_path / "built" / "locus"
    report = locus.build(raw=raw, out=out)
    assert report.reconciles()
    errors = {e["source_file"]: e["reason"] for e in
              pq.read_table(sorted((out / "data" / "errors").glob("*.parquet"))).to_pylist()}
    rel = jurisdiction.relative_to(raw).as_posix()
    assert "outside the raw folder" in errors[f"{rel}/leak.txt"]
    assert errors[f"{rel}/inner"].startswith("symbolic link to a folder: not followed")
    # every file of the sample is parsed, the linked-in jurisdiction's too
    assert report.files_parsed == locus.build(out=tmp_path / "reference" / "locus").files_parsed
    assert errors["inside-link.txt"] == "stray file at the top of the raw folder"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["inputs"]["sha256"][f"{rel}/leak.txt"] == ""  # never read, so never hashed
    sections = pq.read_table(sorted((out / "data" / "sections").glob("*.parquet")), columns=["text"])
    assert not any("hunter2" in t for t in sections["text"].to_pylist())
