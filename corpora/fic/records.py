"""FiC's record types: the schema of every task config, the errors config, the build report and error.

The lowest module of the package: it imports nothing else of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from neurips26.buildreport import Reconciled, Tally
from neurips26.errors import UserError
from neurips26.hubfolder import column

TASK_TYPES = ("translation", "code", "arithmetic")
SPLITS = ("train", "test")


class BuildError(UserError):
    """The build cannot start (a named raw folder or file is missing or unreadable)."""


STR, LIST = pa.string(), pa.list_(pa.string())
INSTRUCTIONS = pa.schema([
    column("task_id", STR, "Stable id of the instruction (e.g. HumanEval/0, wmt-news-0-de-en, arith-7+5)"),
    column("task_type", STR, "translation, code or arithmetic"),
    column("shards", LIST, "The instruction's shards in reveal order; shard 1 is the high-level intent"),
    column("full_prompt", STR, "The original single-turn instruction (the 'full' setting)"),
    column("requirements", LIST, "Every requirement of the full prompt; each appears verbatim in the shards"),
    column("reference", STR, "Reference answer: English document, canonical solution, or the exact number"),
    column("tests", STR, "code: the unit tests defining check(candidate); empty otherwise"),
    column("entry_point", STR, "code: the function the tests call; empty otherwise"),
    column("source", STR, "Where the instruction comes from"),
    column("license", STR, "License of the source"),
])
ERRORS = pa.schema([
    column("source", STR, "Input file or generator"),
    column("task_id", STR, "Id of the rejected record, when known"),
    column("reason", STR, "Why it was rejected"),
])


@dataclass
class BuildReport(Reconciled):
    """Counts per task type: records read, kept (per split) and rejected."""

    read: dict[str, int] = field(default_factory=dict)
    kept: dict[str, dict[str, int]] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # task types whose source was not found
    notes: list[str] = field(default_factory=list)  # kept records with something skipped (an empty shard)

    def tallies(self) -> list[Tally]:
        """Per task type: records read = kept (per split) + rejected."""
        return [Tally.of(f"{t} read", n, **self.kept.get(t, {}), rejected=self.rejected.get(t, 0))
                for t, n in self.read.items()]

    @property
    def problems(self) -> list[str]:
        """Task types not built for want of their source, and rejected records."""
        return [f"{t}: source not found, config not built" for t in self.missing] + [
            f"{t}: {n} record(s) rejected (see the errors config)" for t, n in self.rejected.items() if n]

    def summary(self) -> str:
        """One line for the CLI: per task type, records read = kept (per split) + rejected."""
        return self.tally_text() + "".join(f"; {note}" for note in self.notes)
