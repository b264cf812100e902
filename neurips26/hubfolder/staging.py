"""Atomic builds: a build writes into a hidden sibling folder and is renamed into place only once complete.

``<parent>/<name>`` is the built folder; a build in progress lives in ``<parent>/.<name>.partial-<pid>``,
which nothing reads (``datasets.load_dataset("<name>")``, ``neurips26 query`` and the task loaders only see
``<parent>/<name>``). :func:`commit_build` swaps the finished folder in with two renames, keeping the previous
build until the new one is in place. A killed build therefore leaves either the previous build or nothing
(never shards without a manifest) plus a hidden partial folder, which the next build of the same folder
removes: rerunning the same command is always a clean restart.

Folder names (``<parent>/``):

- ``.<name>.partial-<pid>``: a build in progress (or a killed one, when process ``<pid>`` is gone);
- ``.<name>.previous-<pid>``: the previous build during the swap; put back if the swap was interrupted.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from neurips26.leftovers import pid_alive
from neurips26.settings import MANIFEST

# What a build writes into its folder. A folder holding only these, with a data/ of nothing but shards, is
# the output of a build that was stopped before it wrote its manifest (older versions of the package wrote
# in place), never something of the user's.
BUILD_OUTPUTS = frozenset({"data", "videos", "README.md", "croissant.json", MANIFEST, "build_report.json",
                           "ipg.png"})
_SHARD = re.compile(r"^[\w.-]+/(?:[\w.-]+-\d{5}-of-\d{5}\.parquet|\.[\w.-]+-part\d{5})$")
_HIDDEN = re.compile(r"^\.(?P<name>.+)\.(?P<kind>partial|previous)-(?P<pid>\d+)$")


class ForeignFolderError(FileExistsError):
    """``--out`` holds something that is not a dataset folder built here; it is left alone."""


def staging_folder(out: Path, pid: int | None = None) -> Path:
    """Where a build of ``out`` by process ``pid`` (default: this one) writes until it is committed."""
    out = Path(out)
    return out.parent / f".{out.name}.partial-{pid if pid is not None else os.getpid()}"


def is_staging(folder: Path) -> bool:
    """True for a build-in-progress folder (``.<name>.partial-<pid>``)."""
    match = _HIDDEN.match(Path(folder).name)
    return bool(match) and match["kind"] == "partial"


def is_complete(folder: Path) -> bool:
    """True when ``folder`` is a finished build (it has its manifest)."""
    return (Path(folder) / MANIFEST).is_file()


def is_build_output(folder: Path) -> bool:
    """True when ``folder`` is missing, empty, a finished build, or holds only what a build writes."""
    folder = Path(folder)
    if not folder.exists():
        return True
    if not folder.is_dir():
        return False
    if is_complete(folder) or not any(folder.iterdir()):
        return True
    data = folder / "data"
    if not data.is_dir() or not all(p.name in BUILD_OUTPUTS for p in folder.iterdir()):
        return False
    files = [p for p in data.rglob("*") if not p.is_dir()]
    return bool(files) and all(_SHARD.match(p.relative_to(data).as_posix()) for p in files)


def _alive(pid: int) -> bool:
    return pid == os.getpid() or pid_alive(pid)


def recover(out: Path) -> None:
    """Clean up after killed builds of ``out``: put back a previous build whose swap was interrupted, remove
    partial folders whose process is gone."""
    out = Path(out)
    if not out.parent.is_dir():
        return
    for path in sorted(out.parent.iterdir()):
        match = _HIDDEN.match(path.name)
        if not match or match["name"] != out.name or _alive(int(match["pid"])):
            continue
        if match["kind"] == "previous" and not out.exists() and is_complete(path):
            path.rename(out)
        else:
            shutil.rmtree(path, ignore_errors=True)


def begin_build(out: Path, *, keep: bool = False) -> Path:
    """Start a build of ``out``: the empty staging folder to write into (a copy of ``out`` when ``keep``).

    Refuses (:class:`ForeignFolderError`) an ``out`` holding anything a build did not write, so a mistyped
    ``--out`` never deletes anything of the user's. Nothing in ``out`` changes until :func:`commit_build`.
    """
    out = Path(out)
    if not is_build_output(out):
        raise ForeignFolderError(f"{out}: exists, is not empty and is not a dataset folder built here "
                                 f"(no {MANIFEST}); choose an empty or new --out")
    recover(out)
    stage = staging_folder(out)
    shutil.rmtree(stage, ignore_errors=True)
    if keep and out.is_dir():
        shutil.copytree(out, stage, copy_function=_link_or_copy)
    stage.mkdir(parents=True, exist_ok=True)
    return stage


def commit_build(stage: Path, out: Path) -> Path:
    """Put the finished build ``stage`` in place of ``out`` (the previous build is removed once it is)."""
    stage, out = Path(stage), Path(out)
    if not is_complete(stage):
        raise FileNotFoundError(f"{stage}: the build wrote no {MANIFEST}; {out} is left as it was")
    previous = out.parent / f".{out.name}.previous-{os.getpid()}"
    if out.exists():
        if not is_build_output(out):  # something of the user's appeared while building
            raise ForeignFolderError(f"{out}: is not a dataset folder built here; the build stays in {stage}")
        out.rename(previous)
    stage.rename(out)
    shutil.rmtree(previous, ignore_errors=True)
    return out


@contextmanager
def building(out: Path, *, keep: bool = False) -> Iterator[Path]:
    """``with building(out) as stage:`` write the folder into ``stage``; it replaces ``out`` when the block
    ends normally and is removed when it raises (``out`` is then as it was)."""
    stage = begin_build(out, keep=keep)
    try:
        yield stage
    except BaseException:
        abandon_build(stage)
        raise
    commit_build(stage, out)


def abandon_build(stage: Path) -> None:
    """Remove a staging folder after a failed build (``out`` was never touched)."""
    shutil.rmtree(stage, ignore_errors=True)


def _link_or_copy(src: str, dst: str) -> None:
    """Hard-link shards and videos (written once, replaced by new files, never rewritten in place); copy the
    text files a build rewrites (card, manifest, Croissant)."""
    if not (src.endswith(".parquet") or f"{os.sep}videos{os.sep}" in src):
        shutil.copy2(src, dst)
        return
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
