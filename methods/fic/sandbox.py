"""Run untrusted Python (a model's completion and its unit tests) in a confined subprocess.

The child is a fresh ``python -I`` (isolated: no user site, no ``PYTHON*`` variables) in a new temporary
directory (its working directory and ``HOME``/``TMPDIR``), with an empty environment, its own process group, and
resource limits: CPU seconds, address space, file size, open files and no child processes. Before the untrusted
code runs, an audit hook (which cannot be removed) refuses:

* opening a file for writing, and creating, removing, renaming or changing any path, outside the temp dir;
* every socket operation (no network), ``subprocess``, ``os.system``, ``os.exec*``, ``os.fork``, ``os.kill``;
* ``ctypes`` (which could step around the hook).

The parent kills the whole process group at the wall-clock limit. This confines an accidental or naive hostile
completion; it is not a container (it does not stop reading files, and Python's audit hooks are a
tripwire rather than a security boundary against a determined attacker).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

GUARD = r'''
import os, sys
_ROOT = os.path.realpath(os.getcwd())
_WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {"os.remove", "os.rmdir", "os.mkdir", "os.rename", "os.replace", "os.chmod", "os.chown",
                "os.symlink", "os.link", "os.truncate", "os.utime", "shutil.rmtree", "shutil.copyfile",
                "shutil.move", "os.chdir", "os.chroot"}
_DENIED = ("socket.", "subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
           "os.forkpty", "os.kill", "os.killpg", "ctypes.", "pty.", "os.startfile", "webbrowser.", "urllib.")

def _inside(path):
    try:
        path = os.fsdecode(path) if not isinstance(path, int) else None
    except TypeError:
        return False
    if path is None:
        return True
    full = os.path.realpath(os.path.join(_ROOT, path))
    return full == _ROOT or full.startswith(_ROOT + os.sep)

def _guard(event, args):
    if event == "open":
        path, mode, flags = (list(args) + [None, None])[:3]
        writes = ((isinstance(mode, str) and any(c in mode for c in "wax+"))
                  or (isinstance(flags, int) and flags & _WRITE))
        if writes and not _inside(path):
            raise PermissionError(f"sandbox: writing {path!r} outside the sandbox directory is not allowed")
    elif event in _PATH_EVENTS:
        for arg in (args[1:2] if event == "shutil.copyfile" else args[:2]):  # copying from outside reads it
            if isinstance(arg, (str, bytes, os.PathLike)) and not _inside(arg):
                raise PermissionError(f"sandbox: {event} on {arg!r} outside the sandbox directory is not allowed")
    elif event.startswith(_DENIED):
        raise PermissionError(f"sandbox: {event} is not allowed")

sys.addaudithook(_guard)
del _guard
_source = open(sys.argv[1], encoding="utf-8").read()
exec(compile(_source, "program.py", "exec"), {"__name__": "__main__"})
'''


@dataclass(frozen=True)
class Outcome:
    """How a sandboxed program ended."""

    passed: bool  # exit code 0 within the limits
    status: str  # passed, failed, timeout
    returncode: int | None
    stderr: str


def _limits(cpu_seconds: int, memory_bytes: int) -> None:  # runs in the child before exec
    import resource

    os.setsid()
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (2**24, 2**24))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0)) if os.getuid() != 0 else None
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_python(program: str, *, timeout: float = 10.0, memory_mb: int = 512) -> Outcome:
    """Run ``program`` in the sandbox; ``passed`` when it exits 0 before ``timeout`` wall-clock seconds."""
    with tempfile.TemporaryDirectory(prefix="fic-sandbox-") as folder:
        root = Path(folder)
        (root / "program.py").write_text(program, encoding="utf-8")
        (root / "guard.py").write_text(GUARD, encoding="utf-8")
        env = {"PATH": "/usr/bin:/bin", "HOME": folder, "TMPDIR": folder, "PYTHONHASHSEED": "0", "LANG": "C.UTF-8"}
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", "guard.py", "program.py"], cwd=folder, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=lambda: _limits(int(timeout) + 1, memory_mb * 2**20))
        try:
            _, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return Outcome(False, "timeout", None, f"killed after {timeout:g} s")
        text = stderr.decode("utf-8", "replace")[-2000:]
        return Outcome(process.returncode == 0, "passed" if process.returncode == 0 else "failed",
                       process.returncode, text)
