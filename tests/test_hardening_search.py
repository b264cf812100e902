"""The search index under concurrency: first searches started together all succeed and share one valid index;
an index file that is not a valid index (an interrupted or foreign write) is rebuilt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from neurips26.corpora.locus.build import build as build_locus

from neurips26.search import index_ok, index_path, search


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("search_data") / "locus"
    build_locus(out=out)
    return out


def test_concurrent_first_searches_all_succeed(folder: Path, tmp_path: Path) -> None:
    env = {**os.environ, "NEURIPS26_CACHE": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "neurips26.cli", "search", "locus", "dogs", "--data", str(folder.parent),
               "--format", "json"]
    procs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    outputs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [err for _, err in outputs]
    assert len({out for out, _ in outputs}) == 1 and '"section_id"' in outputs[0][0]  # the same hits, all four
    indexes = [p.name for p in (tmp_path / "cache" / "search").iterdir() if not p.name.endswith(".lock")]
    assert len(indexes) == 1 and not indexes[0].startswith(".")  # one index, no temporary file left


def test_an_invalid_index_file_is_rebuilt(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEURIPS26_CACHE", str(tmp_path / "cache"))
    path = index_path(folder)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")  # what a failed write used to leave: an empty index, trusted for good
    assert search(folder, "dogs").num_rows > 0
    manifest = json.loads((folder / "manifest.json").read_text())
    assert index_ok(path, sum(s["rows"] for s in manifest["configs"]["sections"]["train"]))
