"""LOCUS-v1 compatibility, both ways: ingest its Parquet files, and write its schema back.

LOCUS-v1 (``LocalLaws/LOCUS-v1`` on the Hub) is what researchers load today. Its
paper describes the row in :data:`V1_SCHEMA`; the published dataset card lists a
narrower set of columns, with ``city``, ``county`` and
``source_jurisdiction_type`` for ``jurisdiction_name``, ``represented_county_name``
and ``jurisdiction_type`` (:data:`ALIASES`). :func:`read_v1` accepts both and any
subset holding ``header``, ``content`` and a jurisdiction identity
(``jurisdiction_geoid``, or ``jurisdiction_name`` with ``state``).

Ingest (``neurips26 build locus --from-locus-v1 DIR``):

- every file under DIR except the card (``README.md``) and hidden files and folders
  (``.gitattributes``, ``.cache/``) is an input;
  files that are not Parquet, lack a required column or have a column of the
  wrong type are rejected whole, with the file and column named;
- ``jurisdiction_id`` is the GEOID when given, else ``<slug of name>-<state>``;
  ``section_id`` is ``<document_id>:<section_index>`` (``<jurisdiction_id>:<k>``
  when those are absent); a section number at the start of the header
  (``Sec. 6-12.``) becomes ``number``, else the section index does;
- rows are ordered by jurisdiction id (natural order), then ``document_id``,
  ``section_index``, file and row: that is the order ``locus_v1`` writes back;
- columns outside the schema are reported in ``errors`` and kept nowhere; the
  identity and label columns go to the ``v1_source`` config (keyed by
  ``section_id``) so that ``locus_v1`` gives them back unchanged.

Every build writes the ``locus_v1`` config (:func:`locus_v1_table`): a build from
raw codes fills the identity columns from its own configs (``document_id`` is the
jurisdiction, ``section_index`` the position in its code, the represented counties
those the jurisdiction is the representative code of) and leaves labels and scores
null until the analysis layer supplies them.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import addfips
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from neurips26 import hubfolder
from neurips26.hubfolder import column

from .build import CodeResult, FileReport, Jurisdiction, natural_key

FORMAT = "locus-v1"
SOURCE = "LocalLaws/LOCUS-v1"
DESCRIPTION = "The corpus in the LOCUS-v1 schema (drop-in for LOCUS-v1 users)."
LICENSE = {"license": "cc-by-nc-4.0", "license_url": "https://creativecommons.org/licenses/by-nc/4.0/"}
NOT_DATA = ("README.md",)  # the dataset card of a downloaded snapshot



STR, INT, DOUBLE, BOOL, LIST = pa.string(), pa.int64(), pa.float64(), pa.bool_(), pa.list_(pa.string())
FUNCTIONS = ("Context", "Rules", "Process", "Enforcement")
TOPICS = ("Buildings", "Business", "Nuisance", "Zoning", "Other")
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
# Published dataset card column -> paper column.
ALIASES = {"city": "jurisdiction_name", "county": "represented_county_name",
           "source_jurisdiction_type": "jurisdiction_type"}
IDENTITY = ("document_id", "section_index", "jurisdiction_type", "jurisdiction_geoid",
            "represented_county_fips", "represented_county_name")
LABELS = tuple(V1_COLUMNS[V1_COLUMNS.index("is_substantive"):])
V1_SOURCE = pa.schema([column("section_id", STR, "Section the LOCUS-v1 row was ingested as"),
                       *[V1_SCHEMA.field(c) for c in IDENTITY + LABELS]])
# jurisdiction_type (lower case) -> our kind; the first word found decides.
TYPE_WORDS = (("consolidated", "consolidated"), ("county", "county"), ("parish", "county"),
              ("borough", "town"), ("township", "town"), ("town", "town"), ("village", "village"),
              ("district", "district"), ("city", "city"), ("municipal", "city"), ("place", "city"))


class V1Error(ValueError):
    """A LOCUS-v1 file cannot be used (the message names the file and column)."""


# --- writing: the locus_v1 config of any build ------------------------------------------

def locus_v1_table(folder: Path, scores: pa.Table | None = None) -> pa.Table:
    """The ``locus_v1`` config of a built folder: one row per section, in ``sections`` order.

    ``scores`` (keyed by ``section_id``; any of the label columns of :data:`V1_SCHEMA`)
    supplies the columns it has, for every row (null for a section it does not score);
    other labels come from the ingested LOCUS-v1 rows (``v1_source``) or are null.
    Columns are lined up by index, not joined, so header and content are not copied.
    """
    folder = Path(folder)
    sections = hubfolder.read_table(folder, "sections",
                                    ["section_id", "jurisdiction_id", "state", "heading", "text", "order"])
    jurisdictions = hubfolder.read_table(folder, "jurisdictions", ["jurisdiction_id", "name", "kind"])
    if sections is None or jurisdictions is None:
        raise FileNotFoundError(f"{folder}: no sections/jurisdictions configs (not a built LOCUS folder)")
    n = sections.num_rows
    ids = jurisdictions["jurisdiction_id"].combine_chunks()
    at = pc.index_in(sections["jurisdiction_id"], value_set=ids)  # each section's jurisdiction row
    fips, names = _represented(folder, ids.to_pylist())
    columns = {
        "document_id": sections["jurisdiction_id"], "section_index": sections["order"], "state": sections["state"],
        "jurisdiction_name": jurisdictions["name"].take(at), "jurisdiction_type": jurisdictions["kind"].take(at),
        "jurisdiction_geoid": pa.nulls(n, STR), "represented_county_fips": fips.take(at),
        "represented_county_name": names.take(at), "header": sections["heading"], "content": sections["text"],
        **{c: pa.nulls(n, V1_SCHEMA.field(c).type) for c in LABELS},
    }
    source = hubfolder.read_table(folder, "v1_source")
    if source is not None:  # ingested from LOCUS-v1: its identity and labels, as they came
        columns.update({c: _aligned(source, sections, c) for c in IDENTITY + LABELS})
    if scores is not None:
        scores = _check_scores(scores)
        columns.update({c: _aligned(scores, sections, c) for c in scores.column_names if c != "section_id"})
    return pa.table([columns[f.name].cast(f.type) for f in V1_SCHEMA], schema=V1_SCHEMA)


def _aligned(table: pa.Table, sections: pa.Table, column: str) -> pa.ChunkedArray:
    """``table[column]`` in the order of ``sections`` (by ``section_id``; null where it has no row)."""
    if table["section_id"].equals(sections["section_id"]):
        return table[column]
    return table[column].take(pc.index_in(sections["section_id"], value_set=table["section_id"].combine_chunks()))


def _represented(folder: Path, jurisdiction_ids: list[str]) -> tuple[pa.Array, pa.Array]:
    """Per jurisdiction (in the given order): the FIPS codes and names of the counties it represents."""
    reps = hubfolder.read_table(folder, "county_representatives", ["county_fips", "county_name", "jurisdiction_id"])
    counties: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for r in sorted(reps.to_pylist() if reps is not None else [], key=lambda r: r["county_fips"]):
        counties[r["jurisdiction_id"]].append((r["county_fips"], r["county_name"]))
    return (pa.array([[f for f, _ in counties[j]] for j in jurisdiction_ids], LIST),
            pa.array([[c for _, c in counties[j]] for j in jurisdiction_ids], LIST))


def folder_meta(folder: Path) -> dict:
    """Card metadata for configs added to a built LOCUS folder: an ingest of LOCUS-v1 keeps CC-BY-NC-4.0."""
    from .card import META

    return {**META, **(LICENSE if (Path(folder) / "data" / "v1_source").is_dir() else {})}


def write_locus_v1(folder: Path, scores: pa.Table | None = None) -> pa.Table:
    """Rewrite the ``locus_v1`` config of a built folder (e.g. after scoring), with its manifest, card and
    Croissant entries; a folder ingested from LOCUS-v1 keeps its CC-BY-NC-4.0 license."""
    folder = Path(folder)
    table = locus_v1_table(folder, scores)
    hubfolder.add_config(folder, hubfolder.ConfigSpec("locus_v1", V1_SCHEMA, DESCRIPTION), table, folder_meta(folder))
    return table


def _check_scores(scores: pa.Table) -> pa.Table:
    """Scores keyed by section_id with label columns of the LOCUS-v1 schema, cast to its types."""
    if "section_id" not in scores.column_names:
        raise V1Error("scores: no 'section_id' column")
    unknown = [c for c in scores.column_names if c != "section_id" and c not in LABELS]
    if unknown:
        raise V1Error(f"scores: column(s) {', '.join(unknown)} are not label columns of the LOCUS-v1 schema "
                      f"({', '.join(LABELS)})")
    counts = pc.value_counts(scores["section_id"])
    repeated = counts.filter(pc.greater(counts.field("counts"), 1))
    if len(repeated):
        raise V1Error(f"scores: section_id {repeated[0]['values'].as_py()!r} appears more than once")
    fields = [pa.field("section_id", STR), *[V1_SCHEMA.field(c) for c in scores.column_names if c != "section_id"]]
    try:
        return scores.select([f.name for f in fields]).cast(pa.schema(fields))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise V1Error(f"scores: cannot cast to the LOCUS-v1 types: {exc}") from None


# --- reading: LOCUS-v1 Parquet files into our configs -----------------------------------

@dataclass
class V1Source:
    """A LOCUS-v1 download, read: jurisdictions, their sections (lazily), files and problems."""

    jurisdictions: list[Jurisdiction]
    files: list[FileReport]
    errors: list[dict]
    table: pa.Table  # canonical columns + _jid, sorted in output order
    file_names: list[str]
    n_rows: dict[str, int] = field(default_factory=dict)  # jurisdiction_id -> sections
    n_files: dict[str, int] = field(default_factory=dict)  # jurisdiction_id -> files its rows came from

    def results(self) -> Iterator[tuple[CodeResult, list[dict]]]:
        """(sections of one jurisdiction, their v1_source rows), jurisdiction by jurisdiction."""
        start = 0
        for j in self.jurisdictions:
            part = self.table.slice(start, self.n_rows[j.jurisdiction_id]).to_pylist()
            start += len(part)
            rows, source_rows, seen = [], [], defaultdict(int)
            for row in part:
                index = row["section_index"]
                key = (f"{row['document_id']}:{index}" if row["document_id"] is not None and index is not None
                       else f"{j.jurisdiction_id}:{len(rows)}")
                seen[key] += 1
                section_id = key if seen[key] == 1 else f"{key}~{seen[key]}"
                rows.append({
                    "section_id": section_id, "jurisdiction_id": j.jurisdiction_id, "state": j.state,
                    "number": _number(row["header"]) or str(len(rows) if index is None else index),
                    "heading": row["header"] or "", "text": row["content"] or "", "path": [], "history": [],
                    "cross_references": [], "status": "active", "order": len(rows),
                    "source_file": self.file_names[row["_file"]], "format": FORMAT,
                })
                source_rows.append({"section_id": section_id, **{c: row[c] for c in IDENTITY + LABELS}})
            yield CodeResult(j.jurisdiction_id, rows, [], []), source_rows


NUMBER = re.compile(r"^\s*(?:§+|Secs?\.|Section)\s*([0-9][0-9A-Za-z.\-]*[0-9A-Za-z]|[0-9])")


def _number(header: str | None) -> str | None:
    match = NUMBER.match(header or "")
    return match.group(1) if match else None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def kind_of(jurisdiction_type: str | None, geoid: str | None) -> str | None:
    """Our kind for a LOCUS-v1 jurisdiction_type (None when unknown); a 5-digit GEOID means county."""
    if jurisdiction_type is None or not jurisdiction_type.strip():
        return "county" if geoid and len(geoid) == 5 else "city"
    text = jurisdiction_type.lower()
    return next((kind for word, kind in TYPE_WORDS if word in text), None)


def _is(dtype: pa.DataType, want: pa.DataType) -> bool:
    if want == STR:
        return pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_null(dtype)
    if want == INT:
        return pa.types.is_integer(dtype) or pa.types.is_null(dtype)
    if want == DOUBLE:
        return pa.types.is_floating(dtype) or pa.types.is_integer(dtype) or pa.types.is_null(dtype)
    if want == BOOL:
        return pa.types.is_boolean(dtype) or pa.types.is_null(dtype)
    return ((pa.types.is_list(dtype) or pa.types.is_large_list(dtype)) and _is(dtype.value_type, STR)) or \
        _is(dtype, STR)  # a single county as a plain string


def read_file(path: Path, name: str) -> tuple[pa.Table, list[str]]:
    """One LOCUS-v1 file as a table of all :data:`V1_SCHEMA` columns; also its unknown columns."""
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowException, OSError) as exc:
        raise V1Error(f"{name}: not a Parquet file ({str(exc).splitlines()[0]})") from None
    rename = {}
    for source in schema.names:
        target = ALIASES.get(source, source)
        if target in V1_COLUMNS and target not in rename.values() and (source == target or target not in schema.names):
            rename[source] = target
    unknown = [c for c in schema.names if c not in rename]
    present = set(rename.values())
    missing = [c for c in ("header", "content") if c not in present]
    if "jurisdiction_geoid" not in present and not {"jurisdiction_name", "state"} <= present:
        missing.append("jurisdiction_geoid (or jurisdiction_name/city and state)")
    if missing:
        raise V1Error(f"{name}: missing required column(s) {', '.join(missing)}")
    for source, target in rename.items():
        dtype = schema.field(source).type
        if not _is(dtype, V1_SCHEMA.field(target).type):
            raise V1Error(f"{name}: column {source!r} has type {dtype}, expected {V1_SCHEMA.field(target).type}")
    try:
        table = pq.read_table(path, columns=list(rename)).rename_columns([rename[c] for c in rename])
    except (pa.ArrowException, OSError) as exc:  # a damaged file: its footer reads, its data does not
        raise V1Error(f"{name}: cannot be read ({str(exc).splitlines()[0]})") from None
    columns = []
    for f in V1_SCHEMA:
        if f.name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, f.type))
            continue
        column = table.column(f.name)
        if f.type == LIST and not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
            column = pa.array([None if v is None else [v] for v in column.to_pylist()], LIST)
        columns.append(column.cast(f.type))
    return pa.table(columns, schema=V1_SCHEMA), unknown


def _county_tables() -> tuple[dict[str, str], dict[str, str]]:
    """(five-digit FIPS -> county name, two-digit state FIPS -> USPS) from addfips' tables."""
    data = resources.files(addfips).joinpath("data")
    with data.joinpath("counties_2020.csv").open(encoding="utf-8") as fh:
        names = {r["statefp"] + r["countyfp"]: r["name"] for r in csv.DictReader(fh)}
    with data.joinpath("states.csv").open(encoding="utf-8") as fh:
        states = {r["fips"]: r["postal"] for r in csv.DictReader(fh)}
    return names, states


def read_v1(folder: Path) -> V1Source:
    """Read a LOCUS-v1 download (any depth of Parquet files) into our jurisdictions and sections."""
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: LOCUS-v1 folder not found")
    fips = addfips.AddFIPS()
    county_names, state_of_fips = _county_tables()
    files = sorted((p for p in folder.rglob("*") if p.is_file() and p.name not in NOT_DATA
                    and not any(part.startswith(".") for part in p.relative_to(folder).parts)),
                   key=lambda p: natural_key(p.relative_to(folder).as_posix()))
    reports, errors, tables, names = [], [], [], []
    for path in files:
        rel = path.relative_to(folder).as_posix()
        report = FileReport(rel, _sha256(path), "rejected", FORMAT)
        reports.append(report)
        try:
            table, unknown = read_file(path, rel)
        except V1Error as exc:
            report.reason = str(exc)
            continue
        report.status, report.sections = "parsed", table.num_rows
        if unknown:
            errors.append({"source_file": rel, "jurisdiction_id": None, "level": "record",
                           "reason": f"column(s) {', '.join(unknown)} not in the LOCUS-v1 schema: not kept"})
        tables.append(table.append_column("_file", pa.array([len(names)] * table.num_rows, INT))
                      .append_column("_row", pa.array(range(table.num_rows), INT)))
        names.append(rel)
    if not tables:
        table = V1_SCHEMA.empty_table().append_column("_file", pa.array([], INT)).append_column(
            "_row", pa.array([], INT))
    else:
        table = pa.concat_tables(tables)

    # Jurisdiction identity, once per distinct (geoid, name, state, type) of each file, not per row.
    identity = ["jurisdiction_geoid", "jurisdiction_name", "state", "jurisdiction_type"]
    keys = pa.table({**{c: pc.fill_null(table.column(c), "") for c in identity}, "_file": table.column("_file"),
                     "_i": pa.array(range(table.num_rows), INT)})
    groups = keys.group_by([*identity, "_file"], use_threads=False).aggregate([("_i", "min"), ("_i", "count")])
    found: dict[str, Jurisdiction] = {}
    n_files: dict[str, set[int]] = defaultdict(set)
    n_rows: dict[str, int] = defaultdict(int)
    group_jids: list[str | None] = []
    for g in groups.to_pylist():
        first, n = g["_i_min"], g["_i_count"]
        where = f"row {table['_row'][first].as_py()}" if n == 1 else \
            f"{n} rows (first: row {table['_row'][first].as_py()})"
        jid, reason = _identity(g["jurisdiction_geoid"], g["jurisdiction_name"], g["state"],
                                g["jurisdiction_type"], fips, state_of_fips)
        group_jids.append(jid)
        if jid is None:
            errors.append({"source_file": names[g["_file"]], "jurisdiction_id": None, "level": "record",
                           "reason": f"{where}: {reason}; {'row' if n == 1 else 'rows'} skipped"})
            continue
        n_files[jid].add(g["_file"])
        n_rows[jid] += n
        j = found.get(jid)
        if j is None:
            state = (g["state"] or state_of_fips.get(g["jurisdiction_geoid"][:2], "")).upper()
            j = found[jid] = Jurisdiction(jid, g["jurisdiction_name"].strip() or jid,
                                          kind_of(g["jurisdiction_type"], g["jurisdiction_geoid"]) or "",
                                          state, [], SOURCE, fips.get_state_fips(state))
        # a code's rows repeat its counties: they are read from its first row in each file
        cfips = table["represented_county_fips"][first].as_py()
        cnames = table["represented_county_name"][first].as_py()
        for label in _add_counties(j, cfips, cnames, fips, county_names):
            errors.append({"source_file": names[g["_file"]], "jurisdiction_id": jid, "level": "record",
                           "reason": f"{where}: county {label!r} not found in {j.state} (kept without it)"})

    # Output order: jurisdiction (natural), document_id, section_index, file, row.
    jurisdictions = sorted(found.values(), key=lambda j: natural_key(j.jurisdiction_id))
    rank = {j.jurisdiction_id: k for k, j in enumerate(jurisdictions)}
    groups = groups.append_column("_jid", pa.array(group_jids, STR)).append_column(
        "_rank", pa.array([rank.get(jid, -1) for jid in group_jids], INT))
    rows = keys.join(groups.select([*identity, "_file", "_jid", "_rank"]), [*identity, "_file"],
                     use_threads=False).filter(pc.is_valid(pc.field("_jid")))
    at = rows.column("_i")
    order = pc.sort_indices(pa.table({
        "_rank": rows.column("_rank"), "_doc": pc.fill_null(table["document_id"].take(at), ""),
        "section_index": table["section_index"].take(at), "_i": at,
    }), sort_keys=[("_rank", "ascending"), ("_doc", "ascending"), ("section_index", "ascending", "at_end"),
                   ("_i", "ascending")])
    table = table.take(at.take(order)).append_column("_jid", rows.column("_jid").take(order))
    return V1Source(jurisdictions, reports, errors, table, names, dict(n_rows),
                    {jid: len(f) for jid, f in n_files.items()})


def _identity(geoid: str, name: str, state: str, jurisdiction_type: str, fips: addfips.AddFIPS,
              state_of_fips: dict[str, str]) -> tuple[str | None, str]:
    """(jurisdiction_id, "") for a usable identity, else (None, why); empty strings stand for missing."""
    geoid = geoid.strip()
    if geoid and not geoid.isdigit():
        return None, f"jurisdiction_geoid {geoid!r} is not a numeric GEOID"
    state = state or state_of_fips.get(geoid[:2], "")
    if not state or not fips.get_state_fips(state):
        return None, f"state {state or None!r} is not a USPS state code"
    if kind_of(jurisdiction_type, geoid) is None:
        return None, (f"jurisdiction_type {jurisdiction_type!r} is not a known kind "
                      f"({', '.join(w for w, _ in TYPE_WORDS)})")
    if not geoid and not name.strip():
        return None, "no jurisdiction_geoid and no jurisdiction_name"
    return geoid or f"{slug(name)}-{state.lower()}", ""


def _add_counties(j: Jurisdiction, fips_list: list[str] | None, name_list: list[str] | None,
                  fips: addfips.AddFIPS, county_names: dict[str, str]) -> list[str]:
    """Add a row's represented counties to ``j``; return the names that resolve to no FIPS code."""
    unresolved = []
    for county_fips, county_name in _counties(fips_list, name_list):
        code = county_fips if county_fips and len(county_fips) == 5 and county_fips.isdigit() else None
        code = code or (fips.get_county_fips(county_name, state=j.state) if county_name else None)
        label = county_name or county_names.get(code or "", code or "")
        if label and label not in j.counties:
            j.counties.append(label)
        if code and code not in j.county_fips:
            j.resolved_counties.append((label, code))
        elif not code and label:
            unresolved.append(label)
    return unresolved


def _counties(fips_list: list[str] | None, name_list: list[str] | None) -> list[tuple[str | None, str | None]]:
    fips_list, name_list = fips_list or [], name_list or []
    n = max(len(fips_list), len(name_list))
    return [(fips_list[k] if k < len(fips_list) else None, name_list[k] if k < len(name_list) else None)
            for k in range(n)]


def _sha256(path: Path) -> str:
    from neurips26.hubfolder import sha256_file

    return sha256_file(path)
