"""Files a killed run leaves behind, found and removed by the next run.

``kill -9`` (or a lost machine) runs no cleanup: a temporary file or folder named after its process id stays.
Every such name here carries the id of the process that made it (``.<index>.<pid>.building``,
``locus-spool-<pid>-<random>``), so a later run removes those whose process is gone: :func:`remove_stale`.
A process that still runs (or that belongs to another user, whose liveness cannot be read) is left alone.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (another user's counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(candidates: Iterable[Path], pattern: re.Pattern[str], also_own: bool = False) -> list[Path]:
    """Remove each of ``candidates`` whose name matches ``pattern`` (its ``pid`` group the maker's process id)
    when that process is gone (or, with ``also_own``, is this one: the caller knows it has nothing in flight
    there); a file this user does not own is never touched. Returns what was removed."""
    removed = []
    for path in candidates:
        match = pattern.fullmatch(path.name)
        if match is None:
            continue
        pid = int(match["pid"])
        if pid_alive(pid) and not (also_own and pid == os.getpid()):
            continue
        try:
            if path.lstat().st_uid != os.getuid():
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except FileNotFoundError:  # removed by another run meanwhile
            continue
        removed.append(path)
    return removed
