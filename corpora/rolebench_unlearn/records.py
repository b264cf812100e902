"""RoleBench-Unlearn's record types: the schemas of its configs, the build report and the build error.

The lowest module of the package: it imports nothing else of it, so the reader, the builder and the card
all build on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from neurips26.buildreport import Reconciled, Tally
from neurips26.errors import UserError
from neurips26.hubfolder import column

FORGET_SPLITS = ("forget_train", "forget_test", "retain_train", "retain_test")
LANGUAGES = {"rolebench-eng": "en", "rolebench-zh": "zh"}  # release folder -> language code
PROFILES = {"en": "profiles-eng/desc.json", "zh": "profiles-zh/desc.json"}  # optional role descriptions
PARTS = ("role_specific", "general")


class BuildError(UserError):
    """The build cannot start (no raw folder, or no RoleBench files in it)."""


STR, INT, LIST = pa.string(), pa.int64(), pa.list_(pa.string())
RECORD_FIELDS = [
    column("record_id", STR, "sha256 of 'role\\nquestion' (English role_specific) or of "
                             "'language\\npart\\nrole\\nquestion', first 16 hex digits"),
    column("language", STR, "en (rolebench-eng) or zh (rolebench-zh)"),
    column("part", STR, "role_specific (questions about the role) or general (general instructions answered in "
                        "the role's voice)"),
    column("role", STR, "Role (character) the question is addressed to"),
    column("question", STR, "Question or instruction"),
    column("references", LIST, "Reference answers in the role's voice"),
    column("types", LIST, "RoleBench instruction types (script_based, script_agnostic)"),
]
RECORDS = pa.schema([*RECORD_FIELDS, column("source_files", LIST, "Raw files the record came from")])
FORGET = pa.schema(RECORD_FIELDS)
ROLES = pa.schema([
    column("role", STR, "Role name"),
    column("language", STR, "en or zh"),
    column("description", STR, "Role description from profiles-eng/desc.json (profiles-zh/), if given"),
    column("rank", INT, "Position in sha256 order within its language (the order in which roles become targets)"),
    column("records", INT, "Records of the role"),
    column("train", INT, "Train records"),
    column("test", INT, "Test (held-out) records"),
    column("references", INT, "Reference answers over all its records"),
    column("forget_splits", LIST, "Forget sets the role is a target of"),
])
GENERAL = pa.schema([
    column("instruction_id", STR, "Stable id (g01, g02, ...)"),
    column("instruction", STR, "General instruction, no role"),
    column("references", LIST, "Reference answers"),
])
ERRORS = pa.schema([
    column("source_file", STR, "File (relative to the raw folder)"),
    column("line", INT, "Line number (0 for a whole file)"),
    column("role", STR, "Role of the record, if known"),
    column("reason", STR, "What is wrong"),
])


@dataclass
class FileReport:
    path: str
    sha256: str
    status: str  # parsed, skipped or rejected
    records: int = 0
    reason: str | None = None


@dataclass
class BuildReport(Reconciled):
    """Counts of one build: every file and record accounted for."""

    files_in: int = 0
    files_parsed: int = 0
    files_skipped: int = 0
    files_rejected: int = 0
    records_in: int = 0
    records_kept: int = 0
    records_duplicate: int = 0
    records_rejected: int = 0
    roles: int = 0
    references: int = 0
    forget_roles: dict[str, list[str]] = field(default_factory=dict)
    languages: dict[str, int] = field(default_factory=dict)  # language -> roles

    def tallies(self) -> list[Tally]:
        """Files in = parsed + skipped + rejected; records in = kept + duplicate + rejected."""
        return [Tally.of("files in", self.files_in, parsed=self.files_parsed, skipped=self.files_skipped,
                         rejected=self.files_rejected),
                Tally.of("records in", self.records_in, kept=self.records_kept, duplicate=self.records_duplicate,
                         rejected=self.records_rejected)]

    @property
    def problems(self) -> list[str]:
        """Rejected files and records (each in the errors config)."""
        return [text for n, text in ((self.files_rejected, f"{self.files_rejected} file(s) rejected"),
                                     (self.records_rejected, f"{self.records_rejected:,} record(s) rejected")) if n]

    def summary(self) -> str:
        """One line for the CLI: counts, and whether the files and records reconcile."""
        languages = ", ".join(f"{lang} {n}" for lang, n in self.languages.items())
        return (f"{self.records_kept:,} records of {self.roles} roles ({languages}); {self.tally_text()}; targets "
                + ", ".join(f"{k} {len(v)}" for k, v in self.forget_roles.items()))
