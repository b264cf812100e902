"""How commands print: the consoles, and tables as a rich table, JSON or CSV (``--format``).

A core module (not part of the ``neurips26.cli`` package) so that the commands living with their
component (leaderboard, frameselect, ...) can use it without importing the CLI that wires them in.

Commands that print rows take ``--format table|json|csv`` with :data:`FormatOpt` and print with
:func:`emit`: ``table`` is for people (long cells cut), ``json`` (a list of row objects) and ``csv`` (a header
row, then one line per row; list and dict cells as JSON) are for programs, complete and unstyled.

Data is never read as Rich markup: table cells and titles are :class:`rich.text.Text`, so a cell holding
``[/x]`` or ``land to [be] reserved`` prints exactly as stored. Nor does data reach the terminal as control
sequences: in the table format (and in error lines) every control character (C0, DEL, C1: ESC starts colours, OSC
window titles, cursor moves), bidirectional override and lone surrogate is shown as its escape (``\\x1b``) by
:func:`terminal_safe`. ``json`` and ``csv`` print the data exactly, for programs.
"""

from __future__ import annotations

import csv
import json
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

# C0, DEL and C1 controls, bidirectional embeddings/overrides/isolates, lone surrogates
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

console = Console()
err = Console(stderr=True)


class Format(StrEnum):
    """Output formats of commands that print rows."""

    table = "table"
    json = "json"
    csv = "csv"


FormatOpt = Annotated[Format, typer.Option("--format", help="Output: a table, or json or csv for programs.")]


def rows_of(data: pa.Table | Sequence[Mapping[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """(column names, rows as dicts) of a pyarrow table or a list of dicts."""
    if isinstance(data, pa.Table):
        return list(data.column_names), data.to_pylist()
    rows = [dict(r) for r in data]
    columns = list(dict.fromkeys(k for r in rows for k in r))
    return columns, rows


def emit(data: pa.Table | Sequence[Mapping[str, Any]], fmt: Format | str = Format.table, *,
         title: str | None = None, max_width: int = 80) -> None:
    """Print rows in ``fmt``; ``title`` and ``max_width`` apply to the table format only."""
    columns, rows = rows_of(data)
    fmt = Format(fmt)
    if fmt is Format.json:
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, default=str, indent=1) + "\n")
    elif fmt is Format.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow([_csv_cell(row.get(c)) for c in columns])
    else:
        out = Table(title=None if title is None else Text(terminal_safe(title)), show_lines=False)
        for name in columns:
            out.add_column(Text(terminal_safe(str(name))), overflow="fold")
        for row in rows:
            out.add_row(*[_cell(row.get(c), max_width) for c in columns])
        console.print(out)


def print_table(table: Any, title: str | None = None, max_width: int = 80) -> None:
    """Print a pyarrow table with rich (long cells cut to ``max_width``)."""
    emit(table, Format.table, title=title, max_width=max_width)


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on (controls, bidi overrides, lone surrogates) written
    as its Python escape, e.g. ESC as ``\\x1b``: what is printed is what is stored, and nothing else happens."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii")
                       if ord(m.group()) < 0xD800 else f"\\u{ord(m.group()):04x}", text)


def _cell(value: Any, width: int) -> Text:
    """A cell as plain text (never markup, never a control sequence): whitespace runs collapsed, cut to ``width``."""
    text = "" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))
    text = terminal_safe(" ".join(text.split()))
    return Text(text if len(text) <= width else text[: width - 1] + "…")


def _csv_cell(value: Any) -> Any:
    if isinstance(value, list | dict | tuple):
        return json.dumps(value, ensure_ascii=False, default=str)
    return "" if value is None else value


def save_figure(figure: Any, path: Path | str, dpi: int = 120) -> Path:
    """Lay out ``figure``, write it to ``path`` (its folder made), close it; return the path."""
    import matplotlib.pyplot as plt  # lazy: only commands that plot need matplotlib

    path = Path(path)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi)
    plt.close(figure)
    return path


class Bars:
    """The progress bars of one piece of work, on stderr (made by :func:`progress`): each bar is a callback the
    work calls, :meth:`track` with ``(done, total)`` or :meth:`steps` with a step count."""

    def __init__(self, bar: Progress | None, lines: bool) -> None:
        self._bar, self._lines, self._start = bar, lines, time.monotonic()
        self._tasks: dict[str, Any] = {}

    def track(self, label: str, total: int | None = None) -> Callable[[int, int | None], None]:
        """A bar for ``label``; the callback sets how much is done (and the total, when it becomes known)."""
        if self._bar is not None:
            bar = self._bar
            task = self._tasks[label] = bar.add_task(label, total=total)
            return lambda done, total=None: bar.update(task, completed=done, total=total)
        shown = [-1]

        def line(done: int, of: int | None = total) -> None:
            tenth = 10 * done // of if of else -1
            if self._lines and (tenth > shown[0] or (shown[0] < 0 and done)):
                shown[0] = max(tenth, 0)
                err.print(f"{label}: {done}{f'/{of}' if of else ''} ({time.monotonic() - self._start:.0f} s)",
                          highlight=False, markup=False)
        return line

    def steps(self, label: str, total: int | None = None) -> Callable[[int], None]:
        """A bar for ``label``; the callback advances it by a number of steps (default 1)."""
        if self._bar is not None:
            bar = self._bar
            task = self._tasks[label] = bar.add_task(label, total=total)
            return lambda n=1: bar.advance(task, n)
        track, done = self.track(label, total), [0]

        def advance(n: int = 1) -> None:
            done[0] += n
            track(done[0], total)
        return advance

    def remove(self, label: str) -> None:
        """Take a finished bar off the display."""
        if self._bar is not None and label in self._tasks:
            self._bar.remove_task(self._tasks.pop(label))


@contextmanager
def progress(*, transient: bool = True, lines: bool = False) -> Iterator[Bars]:
    """Progress bars on stderr for the work inside the ``with``: rich bars on a terminal (gone at the end when
    ``transient``); elsewhere (a log file, a pipe) plain lines ``label: done/total (N s)`` at the first step, every
    further tenth and the end when ``lines``, else nothing. The one progress display of every command."""
    if not err.is_terminal:
        yield Bars(None, lines)
        return
    with Progress(TextColumn("{task.description}", style="bold", markup=False), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=transient) as bar:
        yield Bars(bar, lines)


def jsonable(value: Any) -> Any:
    """``json.dumps(..., default=jsonable)``: NumPy scalars and arrays (anything with ``tolist()``) as plain values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON: {type(value).__name__}")
