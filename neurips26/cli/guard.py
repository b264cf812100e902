"""One place where expected failures become one line on stderr and exit code 2, for every command.

:class:`GuardedGroup` is the click group class of the top-level ``neurips26`` app. Every sub-command and
every sub-app (``frameselect``, ``score``, ...) runs inside its :meth:`~GuardedGroup.invoke`, so a
:class:`~neurips26.errors.UserError` (or a module error that subclasses it) raised anywhere, and every usage
error of a sub-command (a bad option value, an unknown option), is printed as ``error: <message>`` on one
line, without a traceback. Arguments are UTF-8 (:mod:`neurips26.decoding`): one that is not is such an error too.
Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from typing import Any

import typer
import typer.core
from rich.markup import escape
from typer._click import Context  # typer vendors click: its context and exceptions live here
from typer._click.exceptions import UsageError

from neurips26.decoding import check_text
from neurips26.errors import UserError
from neurips26.output import err, terminal_safe

# A path the user named that is missing, occupied, a file where a folder must be (or the reverse) or not writable
# is expected too.
EXPECTED: tuple[type[BaseException], ...] = (UserError, FileNotFoundError, FileExistsError, NotADirectoryError,
                                             IsADirectoryError, PermissionError)


def describe(exc: BaseException) -> str:
    """An expected error's message: an OS error on a path as ``<path>: <reason>``, anything else as it says."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc)


def one_line(message: str) -> None:
    """Print ``error: <message>`` as one line on stderr."""
    text = terminal_safe(" ".join(str(message).split()))
    err.print(f"[red]error:[/red] {escape(text)}", highlight=False, soft_wrap=True)


class GuardedGroup(typer.core.TyperGroup):
    """The top-level group: expected failures of any sub-command become one line and exit code 2."""

    def invoke(self, ctx: Context) -> Any:
        try:
            for number, arg in enumerate([*ctx._protected_args, *ctx.args], 1):  # the one decoding rule
                check_text(arg, f"argument {number} ({terminal_safe(arg[:40])!s})")
            return super().invoke(ctx)
        except EXPECTED as exc:
            one_line(describe(exc))
        except UsageError as exc:
            one_line(exc.format_message())
        raise typer.Exit(2)
