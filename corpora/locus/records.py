"""LOCUS record types, schemas, constants and label sets: the bottom of the package.

Every other LOCUS module imports what it shares from here; this module imports nothing else of the
package. Contents:

- the build's input contract (``jurisdictions.csv`` columns, kinds, format preference);
- :class:`BuildError` and the records passed between the build's stages (:class:`Jurisdiction`,
  :class:`FileReport`, :class:`CodeResult`, :class:`BuildReport`);
- the schemas of every config the build writes (corpus, county layer, evaluation sets, LOCUS-v1);
- the label sets of the analysis tasks (:data:`FUNCTIONS`, :data:`TOPICS`, :data:`SUBSTANTIVE`), defined
  once: the task YAMLs list them as lettered options, and a test checks that they agree.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from neurips26.buildreport import Reconciled, Tally
from neurips26.errors import UserError
from neurips26.hubfolder import column

BUILDER_VERSION = "1.1.0"
SAMPLE_DIR = Path(__file__).parent / "sample"
CSV_NAME = "jurisdictions.csv"
CSV_COLUMNS = ("jurisdiction_id", "name", "kind", "state", "counties", "source")
KINDS = ("city", "town", "village", "county", "consolidated", "district")
# When one code arrives in several formats, the most structured one is kept.
FORMAT_PREFERENCE = ("dc-code-xml", "tei-xml", "semantic-html", "encodeplus-html", "word-docx", "municode-text",
                     "word-doc", "pdf")

# --- label sets (LOCUS-v1's codebook) ------------------------------------------------------------------
FUNCTIONS = ("Context", "Rules", "Process", "Enforcement")
TOPICS = ("Buildings", "Business", "Nuisance", "Zoning", "Other")
SUBSTANTIVE = ("no", "yes")  # is_substantive False / True, as the task's options
LETTERS = "ABCDEFGHIJ"  # option letters of the multiple-choice tasks


class BuildError(UserError):
    """The build cannot start or cannot finish honestly (bad arguments, an unusable input, an evaluation set
    that would mislead); the message names the file, config or option and why."""


def natural_key(text: str) -> list:
    """Sort key that orders ``2`` before ``10`` inside ids and paths."""
    return [int(t) if t.isdecimal() else t for t in re.split(r"(\d+)", text)]


# --- records passed between the build's stages --------------------------------------------------------

@dataclass
class Jurisdiction:
    """One valid row of ``jurisdictions.csv`` (or one jurisdiction of a LOCUS-v1 download)."""

    jurisdiction_id: str
    name: str
    kind: str
    state: str
    counties: list[str]
    source: str
    state_fips: str = ""
    resolved_counties: list[tuple[str, str]] = field(default_factory=list)  # (name, FIPS)

    @property
    def county_fips(self) -> list[str]:
        return [fips for _, fips in self.resolved_counties]


UNACCOUNTED_LIMIT = 0.05  # a parsed file losing a larger share of its text gets an errors row (level "text")
FRONT_MATTER_LIMIT = 0.2  # ... and one whose front matter is a larger share of a long text (FRONT_MATTER_MIN_CHARS)
FRONT_MATTER_MIN_CHARS = 20_000


@dataclass
class FileReport:
    """What became of one input file: its sections parsed = kept + dropped (as twins of another file's)."""

    path: str
    sha256: str
    status: str  # parsed, duplicate (every section a twin of another file's) or rejected
    format: str | None = None
    sections: int = 0
    reason: str | None = None  # why rejected, or which twins its dropped sections lost to
    kept: int = 0
    dropped: int = 0
    # where its text went (non-whitespace characters; None where the format keeps no account: markup formats)
    chars_total: int | None = None
    chars_sections: int | None = None
    chars_structure: dict[str, int] | None = None  # by kind (formats.base.STRUCTURE_KINDS)

    @property
    def chars_unaccounted(self) -> int | None:
        """Characters in no section and in no recognised structure."""
        if self.chars_total is None:
            return None
        return self.chars_total - (self.chars_sections or 0) - sum((self.chars_structure or {}).values())


@dataclass
class CodeResult:
    """What one worker returns for one jurisdiction: its sections as one Arrow batch (``SECTIONS`` schema)."""

    jurisdiction_id: str
    batch: pa.RecordBatch
    files: list[FileReport]
    record_errors: list[dict]


@dataclass
class BuildReport(Reconciled):
    """Counts of one build; files in = parsed + duplicate + rejected, and sections parsed = built + dropped as
    twins (every file's kept + dropped = its parsed sections)."""

    files_in: int = 0
    files_parsed: int = 0
    files_duplicate: int = 0
    files_rejected: int = 0
    rows_rejected: int = 0
    record_errors: int = 0
    sections: int = 0
    characters: int = 0
    bytes_in: int = 0
    by_format: dict[str, int] = field(default_factory=dict)
    sections_parsed: int = 0
    sections_dropped: int = 0  # twins of a section kept from another file
    text_problems: int = 0  # files that lose more than their share of text (an errors row each)
    chars_total: int = 0  # over the files whose format keeps a text account
    chars_sections: int = 0
    chars_structure: int = 0
    files_measured: int = 0

    def tallies(self) -> list[Tally]:
        """Sections parsed = built + twins dropped; files in = parsed + duplicate + rejected."""
        return [Tally.of("sections parsed", self.sections_parsed, built=self.sections,
                         **{"twins dropped": self.sections_dropped}),
                Tally.of("files in", self.files_in, parsed=self.files_parsed, duplicate=self.files_duplicate,
                         rejected=self.files_rejected)]

    def count_text(self, f: FileReport) -> None:
        """Add one file's text account to the corpus-wide one."""
        if f.chars_total is not None:
            self.files_measured += 1
            self.chars_total += f.chars_total
            self.chars_sections += f.chars_sections or 0
            self.chars_structure += sum((f.chars_structure or {}).values())

    def text_line(self) -> str:
        """Where the measured files' text went, corpus-wide."""
        if not self.chars_total:
            return "text: no file with a text account"
        lost = self.chars_total - self.chars_sections - self.chars_structure
        return (f"text in sections {self.chars_sections / self.chars_total:.1%} (structure "
                f"{self.chars_structure / self.chars_total:.1%}, unaccounted {lost / self.chars_total:.2%}) of "
                f"{self.chars_total:,} non-whitespace characters in {self.files_measured} file(s); "
                f"{self.text_problems} file(s) losing more than {UNACCOUNTED_LIMIT:.0%}")

    def summary(self) -> str:
        """One line for the CLI: counts, and whether files in = parsed + duplicate + rejected and sections parsed =
        built + dropped twins."""
        return (f"{self.sections:,} sections; {self.tally_text()}; {self.rows_rejected} csv row problem(s), "
                f"{self.record_errors} record warning(s); {self.text_line()}")

    @property
    def problems(self) -> list[str]:
        """Rejected files, csv row problems and files losing text (each in the errors config)."""
        return [text for n, text in (
            (self.files_rejected, f"{self.files_rejected} file(s) rejected"),
            (self.rows_rejected, f"{self.rows_rejected} csv row problem(s)"),
            (self.text_problems, f"{self.text_problems} file(s) losing more than {UNACCOUNTED_LIMIT:.0%} of their "
                                 "text")) if n]


# --- schemas: the corpus and its county layer ---------------------------------------------------------

STR, INT, DOUBLE, BOOL, LIST = pa.string(), pa.int64(), pa.float64(), pa.bool_(), pa.list_(pa.string())
SECTIONS = pa.schema([
    column("section_id", STR, "Stable id: '<jurisdiction_id>:<number>', '~k' for the k-th repeat of a number"),
    column("jurisdiction_id", STR, "Jurisdiction the code belongs to"),
    column("state", STR, "USPS state code"),
    column("number", STR, "Section number as printed, e.g. '1-5.11'"),
    column("heading", STR, "Catchline of the section"),
    column("text", STR, "Section text, without history notes and cross-references"),
    column("path", LIST, "Title/chapter/article headings above the section, outermost first"),
    column("history", LIST, "History notes (ordinances that enacted or amended it)"),
    column("cross_references", LIST, "Cross-references and state-law references"),
    column("status", STR, "active, repealed or reserved"),
    column("order", INT, "Position of the section within its code, from 0"),
    column("source_file", STR, "File it was parsed from, relative to the raw folder"),
    column("format", STR, "Format of the source file"),
])
JURISDICTIONS = pa.schema([
    column("jurisdiction_id", STR, "Id of the jurisdiction (its raw folder name)"),
    column("name", STR, "Official name"),
    column("kind", STR, "city, town, village, county, consolidated or district"),
    column("state", STR, "USPS state code"),
    column("state_fips", STR, "Two-digit state FIPS code"),
    column("counties", LIST, "Counties the jurisdiction lies in"),
    column("county_fips", LIST, "Five-digit FIPS codes of those counties (unresolved names left out)"),
    column("n_files", INT, "Files in its raw folder"),
    column("n_sections", INT, "Sections built"),
    column("n_characters", INT, "Characters of section text"),
    column("formats", LIST, "Formats of the files its sections came from"),
    column("source", STR, "Where the code came from"),
])
COUNTIES = pa.schema([
    column("county_fips", STR, "Five-digit county FIPS code"),
    column("county_name", STR, "County name"),
    column("state", STR, "USPS state code"),
    column("county_code_id", STR, "The county's own code (a county or consolidated jurisdiction), if any"),
    column("jurisdiction_ids", LIST, "Every code that applies in the county: its own and its places'"),
    column("n_jurisdictions", INT, "Number of applicable codes"),
    column("n_sections", INT, "Sections over all applicable codes"),
])
ERRORS = pa.schema([
    column("source_file", STR, "File (relative to the raw folder) the problem is in"),
    column("jurisdiction_id", STR, "Jurisdiction concerned, if known"),
    column("level", STR, "file (whole file rejected), row (jurisdictions.csv row), record, or text (part of a "
                          "parsed file's text in no section)"),
    column("reason", STR, "What is wrong"),
])
OWN, BY_POPULATION, BY_SECTIONS = "own code", "largest place by population", "largest place by section count"
REPRESENTATIVES = pa.schema([
    column("county_fips", STR, "Five-digit county FIPS code"),
    column("county_name", STR, "County name"),
    column("state", STR, "USPS state code"),
    column("jurisdiction_id", STR, "The county's representative code"),
    column("rule", STR, f"How it was chosen: {OWN}, {BY_POPULATION} or {BY_SECTIONS}"),
    column("population", INT, "Population of the representative jurisdiction, when the table gives it"),
    column("n_candidates", INT, "Codes with sections in the county"),
])
COVERAGE = pa.schema([
    column("state", STR, "USPS state code"),
    column("state_fips", STR, "Two-digit state FIPS code"),
    column("counties_covered", INT, "Counties with a representative code"),
    column("counties_total", INT, "Counties (and equivalents) in the state, Census 2020"),
    column("share", DOUBLE, "counties_covered / counties_total"),
])

TEXT_COVERAGE = pa.schema([
    column("source_file", STR, "Input file, relative to the raw folder"),
    column("jurisdiction_id", STR, "Its jurisdiction"),
    column("format", STR, "Its format (null when rejected before one was found)"),
    column("status", STR, "parsed, duplicate or rejected"),
    column("measured", BOOL, "Whether its format keeps a text account (the text formats: Municode text, Word, PDF, "
                             "TEI); false for the other markup formats and rejected files"),
    column("chars_total", INT, "Non-whitespace characters of its text"),
    column("chars_in_sections", INT, "... in a section's number, heading, text, history or cross-references"),
    column("chars_structure", INT, "... in recognised structure (the columns below)"),
    column("chars_unaccounted", INT, "... in neither: text the parser lost"),
    column("share_in_sections", DOUBLE, "chars_in_sections / chars_total"),
    column("share_unaccounted", DOUBLE, "chars_unaccounted / chars_total"),
    *[column(kind, INT, f"Structure: {what}") for kind, what in (
        ("front_matter", "before the first section or heading line (cover, officials, preface, adopting ordinance)"),
        ("headings", "title, chapter, article, division lines (the sections' path)"),
        ("notes", "a heading's footnotes, editor's notes and references"),
        ("toc", "table-of-contents entries"),
        ("section_syntax", "a section line's prefix, separators, brackets; a history note's parentheses"),
        ("furniture", "page numbers, running print headers and footers, list markers split from their text"),
        ("back_matter", "comparative and reference tables after the last section"))],
])

# --- schemas: evaluation sets (one config per task, splits train/validation/test) -----------------------

_EVAL_BASE = [column("section_id", STR, "Section the example is drawn from"),
              column("jurisdiction_id", STR, "Its jurisdiction (splits never share one)"),
              column("number", STR, "Section number")]
DOMAIN = pa.schema([*_EVAL_BASE, column("heading", STR, "Catchline"), column("text", STR, "Section text"),
                    column("domain", STR, "Gold regulatory domain, from the code's own chapter headings"),
                    column("choices", LIST, "The four options, in the order lettered A-D"),
                    column("label", INT, "Index of the gold option")])
CATCHLINE = pa.schema([*_EVAL_BASE, column("text", STR, "Section text"),
                       column("heading", STR, "Gold catchline")])
LABEL = pa.schema([*_EVAL_BASE, column("text", STR, "Section text (its catchline is not shown)"),
                   column("answer", STR, "Gold label"), column("label", INT, "Index of the gold label"),
                   column("label_source", STR, "weak (from the code's headings), released (LOCUS-v1) or gold")])

# --- schemas: LOCUS-v1 ----------------------------------------------------------------------------------

V1_SCHEMA = pa.schema([
    column("document_id", STR, "Code (document) the section belongs to"),
    column("section_index", INT, "Position of the section within its document, from 0"),
    column("state", STR, "USPS state code"),
    column("jurisdiction_name", STR, "Name of the jurisdiction"),
    column("jurisdiction_type", STR, "Kind of jurisdiction, e.g. city or county"),
    column("jurisdiction_geoid", STR, "Census GEOID of the jurisdiction (5 digits county, 7 digits place)"),
    column("represented_county_fips", LIST, "Five-digit FIPS of the counties this code represents"),
    column("represented_county_name", LIST, "Names of those counties"),
    column("header", STR, "Section header (number and catchline)"),
    column("content", STR, "Section text"),
    column("is_substantive", BOOL, "Whether the section regulates conduct (has a topic)"),
    column("function", STR, f"Majority function label of three annotators: {', '.join(FUNCTIONS)}"),
    column("function_votes", INT, "Annotators agreeing with the function label (of 3)"),
    column("topic", STR, f"Majority topic label of substantive sections: {', '.join(TOPICS)}"),
    column("topic_votes", INT, "Annotators agreeing with the topic label (of 3)"),
    *[column(f"annotator{k}_function", STR, f"Annotator {k}'s function label") for k in (1, 2, 3)],
    *[column(f"annotator{k}_topic", STR, f"Annotator {k}'s topic label") for k in (1, 2, 3)],
    *[column(f"annotator{k}_confidence", DOUBLE, f"Annotator {k}'s confidence") for k in (1, 2, 3)],
    column("opacity", DOUBLE, "How hard the section is to understand (z-scored)"),
    column("paternalism", DOUBLE, "How much it restricts conduct for people's own good (z-scored)"),
    column("enforcement_discretion", DOUBLE, "Latitude it leaves to enforcing officials (z-scored)"),
    column("problem_salience", DOUBLE, "How prominently it names the problem it addresses (z-scored)"),
])
V1_COLUMNS = tuple(V1_SCHEMA.names)
V1_IDENTITY = ("document_id", "section_index", "jurisdiction_type", "jurisdiction_geoid",
               "represented_county_fips", "represented_county_name")
V1_LABELS = tuple(V1_COLUMNS[V1_COLUMNS.index("is_substantive"):])
V1_SOURCE = pa.schema([column("section_id", STR, "Section the LOCUS-v1 row was ingested as"),
                       *[V1_SCHEMA.field(c) for c in V1_IDENTITY + V1_LABELS]])


def read_csv(path: Path, missing: str) -> csv.DictReader:
    """A CSV input of the build (UTF-8, BOM allowed) as a ``DictReader``; :class:`BuildError` says ``missing``
    when the file is absent, or where it is not UTF-8."""
    if not path.is_file():
        raise BuildError(f"{path}: {missing}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BuildError(f"{path}: not valid UTF-8 at byte {exc.start}") from None
    return csv.DictReader(text.splitlines())
