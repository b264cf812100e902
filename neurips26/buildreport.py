"""The report every builder returns (``neurips26 build <resource>``): what came in, where each input went, and
what went wrong.

A report accounts for its inputs in :class:`Tally` lines, one per kind of input (files, items, videos,
episodes...): the count in, and how many of them met each fate (built, rejected, and any other named one, such as
ignored or duplicate). It reconciles when every tally does, that is when every input is counted exactly once::

    @dataclass
    class BuildReport(Reconciled):
        files_in: int = 0
        files_built: int = 0
        files_rejected: int = 0

        def tallies(self) -> list[Tally]:
            return [Tally.of("files in", self.files_in, built=self.files_built, rejected=self.files_rejected)]

        @property
        def problems(self) -> list[str]:
            return [f"{self.files_rejected} file(s) rejected"] if self.files_rejected else []

        def summary(self) -> str:
            return f"{self.tallies()[0]} ({self.reconciled()})"

The CLI prints ``summary()``, then each of ``problems`` (what the errors config holds, in a line each).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Tally:
    """One kind of input: ``inputs`` of them came in, and ``outcomes`` says how many met each fate."""

    what: str  # the inputs and how they were counted: "files in", "videos referenced", "sections parsed"
    inputs: int
    outcomes: tuple[tuple[str, int], ...]  # (fate, count): ("built", 70), ("rejected", 2)

    @classmethod
    def of(cls, what: str, inputs: int, **outcomes: int) -> Tally:
        """``Tally.of("files in", 4, parsed=3, rejected=1)``: the outcomes in the order given."""
        return cls(what, inputs, tuple(outcomes.items()))

    def reconciles(self) -> bool:
        """True when the outcomes add up to the inputs."""
        return self.inputs == sum(n for _, n in self.outcomes)

    def __str__(self) -> str:
        """``files in 4 = parsed 3 + rejected 1``."""
        return f"{self.what} {self.inputs:,} = " + " + ".join(f"{fate} {n:,}" for fate, n in self.outcomes)


@runtime_checkable
class BuildReport(Protocol):
    """What every build function returns: its tallies, whether they reconcile, its problems and a summary line."""

    @property
    def problems(self) -> list[str]:
        """What went wrong, a line each (the details are in the built folder's ``errors`` config); empty if none."""
        ...

    def tallies(self) -> list[Tally]:
        """Every kind of input, counted in and out."""
        ...

    def reconciles(self) -> bool:
        """True when every input is accounted for: each tally's inputs = the sum of its outcomes."""
        ...

    def summary(self) -> str:
        """One line for the CLI, naming every tally (``str(tally)``) and whether they reconcile."""
        ...


class Reconciled(ABC):
    """The shared half of a :class:`BuildReport`: ``reconciles()`` from the subclass's ``tallies()``."""

    @abstractmethod
    def tallies(self) -> list[Tally]:
        """Every kind of input, counted in and out."""

    def reconciles(self) -> bool:
        """True when every tally reconciles."""
        return all(t.reconciles() for t in self.tallies())

    def reconciled(self) -> str:
        """``reconciles`` or ``DOES NOT RECONCILE``, for the summary line."""
        return "reconciles" if self.reconciles() else "DOES NOT RECONCILE"

    def tally_text(self) -> str:
        """Every tally, ``; ``-separated, and whether they reconcile."""
        return "; ".join(map(str, self.tallies())) + f" ({self.reconciled()})"

    def to_json(self, **extra: object) -> str:
        """``build_report.json``: the report's fields (a dataclass's), ``reconciles``, then ``extra`` (the files)."""
        return json.dumps({**asdict(self), "reconciles": self.reconciles(), **extra}, indent=2) + "\n"
