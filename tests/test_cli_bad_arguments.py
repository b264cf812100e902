"""Every command of ``neurips26``, run with a bad value for each of its options and arguments: one line, exit 2.

The cases are generated from the Typer app itself: :func:`commands` walks ``neurips26.cli.app`` (sub-apps and the
``build <resource>`` commands included) and :func:`bad_values` gives each parameter values of the wrong type, a
number below its range (negative when it has none), a nonexistent input path, an output path under a regular file,
or an unknown name. Required parameters the case does not test get a placeholder (a missing file, an unknown name).
A bad value must be refused before any work: a command that loads a model or trains first would print more than one
line, and one still running after :data:`WATCHDOG_S` seconds is stopped and fails the case.

Cases that fail today for a reason outside the command line's wiring are in :data:`KNOWN` with the reason (strict
xfail: a fix makes them pass, and then the entry must go); those that would start long work are not run. Values that
are valid for an option although the generator thinks them bad are in :data:`VALID`.
"""

from __future__ import annotations

import enum
import signal
import types
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer.main
import typer.testing
from typer._click import Command, Context
from typer.testing import CliRunner

from neurips26.cli import app

WATCHDOG_S = 60
OUTPUTS = {"out", "output", "plot", "json", "store", "remote"}  # Path options a command writes to
TMP = "{tmp}"  # replaced by the case's folder

# "command --option value" -> why it fails today, in a module outside the command line's wiring (reported). Cases
# whose reason starts with "not run:" load a model or start long work before refusing the value, so they are not run.
LOADS = "not run: loads the model before checking the value"
WORKS = "not run: starts the work and fails only when it writes its results"
KNOWN: dict[str, str] = {}

# "command --option value" -> why the value is valid there.
VALID: dict[str, str] = {
    "gfm train --read-layer -1": "a negative layer counts from the last one",
}


def commands(group: typer.core.TyperGroup, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Command]]:
    """Every leaf command under ``group`` with its words (``("frameselect", "run")``)."""
    ctx = Context(group)
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if hasattr(sub, "list_commands"):
            yield from commands(sub, (*path, name))
        else:
            yield (*path, name), sub


def value_type(param: typer.core.click.Parameter) -> type:
    """The parameter's annotated type without ``list[...]`` and ``| None``."""
    hint = param.type_descriptor.annotation
    if typing.get_origin(hint) is list:
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    return hint


def bad_values(param: typer.core.click.Parameter) -> list[str]:
    """Values ``param`` must refuse: a wrong type, out of range, a missing or unwritable path, an unknown name."""
    kind = value_type(param)
    if getattr(param, "is_flag", False) or kind is bool:
        return []
    if isinstance(kind, type) and issubclass(kind, enum.Enum) or typing.get_origin(kind) is typing.Literal:
        return ["nosuch"]
    if kind is int:
        low = param.min
        return ["x", str(low - 1 if low is not None and low >= 0 else -1)]
    if kind is float:
        low = param.min
        return ["x", str(-1.0 if low is None or low >= 0 else low - 1)]
    if kind is Path:
        return [f"{TMP}/a-file/sub" if param.name in OUTPUTS else f"{TMP}/nosuch"]
    return ["nosuch"]


def placeholder(param: typer.core.click.Parameter) -> str:
    """A value for a required parameter the case does not test."""
    kind = value_type(param)
    if kind is Path:
        return f"{TMP}/missing"
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return next(iter(kind)).value
    return "1" if kind in (int, float) else "nosuch"


def cases() -> Iterator[tuple[str, list[str]]]:
    """(case name, arguments) for every bad value of every parameter of every command."""
    for words, command in commands(typer.main.get_command(app)):
        for param in command.params:
            for value in bad_values(param):
                args = list(words)
                for other in command.params:
                    if other is not param and other.required:
                        filler = placeholder(other)
                        args += [filler] if other.param_type_name == "argument" else [other.opts[0], filler]
                shown = [*words, value] if param.param_type_name == "argument" else [*words, param.opts[0], value]
                args += [value] if param.param_type_name == "argument" else [param.opts[0], value]
                name = " ".join(shown).replace(f"{TMP}/", "")
                if name not in VALID:
                    yield name, args


def marked(name: str, args: list[str]):
    reason = KNOWN.get(name)
    if reason is None:
        return pytest.param(args, id=name)
    return pytest.param(args, id=name, marks=pytest.mark.xfail(strict=True, reason=reason,
                                                               run=not reason.startswith("not run:")))


CASES = [marked(name, args) for name, args in cases()]
ROOT_COMMAND = typer.main.get_command(app)  # built once: building it per case would cost more than most cases


class StillRunning(BaseException):
    """Raised by the watchdog: the command took a bad value and went on working."""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty working folder (no built datasets, an empty leaderboard store) with a regular file ``a-file``."""
    root = tmp_path_factory.mktemp("bad-arguments")
    (root / "a-file").write_text("not a folder\n")
    return root


def test_cases_cover_every_command() -> None:
    named = {" ".join(words) for words, _ in commands(typer.main.get_command(app))}
    covered = {" ".join(p.id.split(" ")[:2]) for p in CASES} | {p.id.split(" ")[0] for p in CASES}
    without_parameters = {name for name in named if name not in covered}
    assert {"eval", "unlearn", "build locus", "gfm train", "leaderboard"} <= named - without_parameters
    assert not set(KNOWN) - {p.id for p in CASES}, "KNOWN names a case that is no longer generated"


@pytest.mark.parametrize("args", CASES)
def test_bad_value_is_one_line_and_exit_2(args: list[str], folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(folder)
    monkeypatch.setenv("NEURIPS26_DATA", str(folder / "data"))
    monkeypatch.setenv("NEURIPS26_LEADERBOARD", str(folder / "board"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(typer.testing, "_get_command", lambda _app: ROOT_COMMAND)

    def stop(*_: object) -> None:
        raise StillRunning

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(WATCHDOG_S)
    try:
        result = CliRunner().invoke(app, [a.replace(TMP, str(folder)) for a in args])
    except StillRunning:
        pytest.fail(f"still running after {WATCHDOG_S} s: the bad value was taken and work started")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    crash = None if isinstance(result.exception, SystemExit) else result.exception
    assert crash is None, f"traceback: {type(crash).__name__}: {crash}"
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.stderr[-1500:]
