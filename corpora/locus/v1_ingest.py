"""Ingest a LOCUS-v1 download (``neurips26 build locus --from-locus-v1 DIR``) into our records.

See :mod:`.v1` for the rules (which files are inputs, how ids are made, the output order). This module reads
the Parquet files into our jurisdictions and the columns of every row (``sections``, and ``v1_source``: the
identity and label columns), and writes them, with ``locus_v1``, each config in a thread of its own.
"""

from __future__ import annotations

import csv
import functools
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import addfips
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from neurips26 import hubfolder

from . import v1
from .records import (
    BOOL,
    DOUBLE,
    INT,
    LIST,
    SECTIONS,
    STR,
    V1_COLUMNS,
    V1_SCHEMA,
    V1_SOURCE,
    FileReport,
    Jurisdiction,
    natural_key,
)
from .records import V1_IDENTITY as IDENTITY
from .records import V1_LABELS as LABELS
from .v1 import ALIASES, FORMAT, NOT_DATA, SOURCE, TYPE_WORDS, V1Error


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

    def spans(self) -> Iterator[tuple[Jurisdiction, int, int]]:
        """(jurisdiction, its first row, its number of rows) of every jurisdiction, in output order."""
        start = 0
        for j in self.jurisdictions:
            n = self.n_rows[j.jurisdiction_id]
            yield j, start, n
            start += n

    def write_shards(self, out: Path, pool: Executor,
                     progress: Callable[[int, int], None] | None = None) -> dict[str, Future[list[hubfolder.Shard]]]:
        """Start writing the ``sections``, ``v1_source`` and ``locus_v1`` shards of every row under ``out``, each
        config in a thread of ``pool`` of its own (3 threads; Arrow's Parquet writer releases the interpreter
        lock). ``sections`` and ``v1_source`` are fed a row group's worth at a time (a ``SplitWriter`` cuts the same
        row groups however its rows come, and a small buffer keeps its bookkeeping small); ``locus_v1`` is made a
        jurisdiction at a time, in output order. Return each config's future shards; ``progress`` counts the
        jurisdictions whose ``locus_v1`` rows are written."""
        sections, source = self.tables
        spans = list(self.spans())

        def locus_v1_rows() -> Iterator[pa.Table]:
            for i, (j, start, n) in enumerate(spans, start=1):
                yield v1.ingested_rows(sections.slice(start, n), source.slice(start, n), j.name)
                if progress:
                    progress(i, len(spans))

        feeds = {"sections": (SECTIONS, sections.to_batches(hubfolder.ROW_GROUP_ROWS)),
                 "v1_source": (V1_SOURCE, source.to_batches(hubfolder.ROW_GROUP_ROWS)),
                 "locus_v1": (V1_SCHEMA, locus_v1_rows())}
        return {config: pool.submit(_write, hubfolder.SplitWriter(out, config, schema), batches)
                for config, (schema, batches) in feeds.items()}

    @property
    def sections(self) -> pa.Table:
        """The sections of every row, in output order."""
        return self.tables[0]

    @functools.cached_property
    def tables(self) -> tuple[pa.Table, pa.Table]:
        """The sections and v1_source tables of every row, in output order."""
        table, n = self.table, self.table.num_rows
        sizes = np.array([self.n_rows[j.jurisdiction_id] for j in self.jurisdictions], dtype=np.int64)
        first = np.repeat(np.cumsum(sizes) - sizes, sizes)  # each row's jurisdiction's first row
        position = pa.array(np.arange(n, dtype=np.int64) - first)  # within its jurisdiction
        index = table["section_index"]
        fallback = pc.if_else(pc.is_null(index), pc.cast(position, STR), pc.cast(index, STR))
        found = pc.struct_field(pc.extract_regex(table["header"], NUMBER.pattern), [0])
        section_id = self._section_ids(position)
        states = pa.array([j.state for j in self.jurisdictions], STR)
        no_lists = pa.ListArray.from_arrays(pa.array(np.zeros(n + 1, dtype=np.int32)), pa.array([], STR))
        sections = pa.table({
            "section_id": section_id, "jurisdiction_id": table["_jid"],
            "state": states.take(pa.array(np.repeat(np.arange(len(sizes)), sizes))),
            "number": pc.coalesce(found, fallback),
            "heading": pc.fill_null(table["header"], ""), "text": pc.fill_null(table["content"], ""),
            **{c: no_lists for c in ("path", "history", "cross_references")},
            "status": pa.repeat("active", n).cast(STR), "order": position,
            "source_file": pa.array(self.file_names, STR).take(table["_file"]),
            "format": pa.repeat(FORMAT, n).cast(STR),
        }, schema=SECTIONS)
        source = table.select(list(IDENTITY + LABELS)).add_column(0, "section_id", section_id)
        return sections, source

    def _section_ids(self, position: pa.Array) -> pa.Array:
        """``<document_id>:<section_index>`` (``<jurisdiction_id>:<k>`` where either is missing), ``~k`` added to
        the k-th occurrence of an id in output order, so that ids are unique across the whole download (a
        document_id can repeat within a jurisdiction, in two jurisdictions, or be a jurisdiction's own id)."""
        table = self.table
        keys = pc.if_else(pc.and_(pc.is_valid(table["document_id"]), pc.is_valid(table["section_index"])),
                          pc.binary_join_element_wise(table["document_id"], pc.cast(table["section_index"], STR), ":"),
                          pc.binary_join_element_wise(table["_jid"], pc.cast(position, STR), ":")).combine_chunks()
        counts = pc.value_counts(keys)
        repeated = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
        if not len(repeated):
            return keys
        again = pc.is_in(keys, value_set=repeated)  # every occurrence of a repeated id; the first keeps it
        seen: dict[str, int] = defaultdict(int)
        renamed = []
        for key in keys.filter(again).to_pylist():
            seen[key] += 1
            renamed.append(key if seen[key] == 1 else f"{key}~{seen[key]}")
        return pc.replace_with_mask(keys, again, pa.array(renamed, STR))


NUMBER = re.compile(r"^\s*(?:§+|Secs?\.|Section)\s*(?P<number>[0-9][0-9A-Za-z.\-]*[0-9A-Za-z]|[0-9])")  # RE2-safe


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
        raise V1Error(f"{folder}: LOCUS-v1 folder not found")
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
        tables.append(table.append_column("_file", pa.array(np.full(table.num_rows, len(names), np.int64)))
                      .append_column("_row", pa.array(np.arange(table.num_rows, dtype=np.int64))))
        names.append(rel)
    if not tables:
        table = V1_SCHEMA.empty_table().append_column("_file", pa.array([], INT)).append_column(
            "_row", pa.array([], INT))
    else:
        table = pa.concat_tables(tables)

    # Jurisdiction identity, once per distinct (geoid, name, state, type) of each file, not per row: rows that
    # repeat the identity of the row before them join its run, and runs are grouped.
    identity = ["jurisdiction_geoid", "jurisdiction_name", "state", "jurisdiction_type"]
    keys = pa.table({**{c: pc.fill_null(table.column(c), "") for c in identity}, "_file": table.column("_file")})
    size = table.num_rows
    starts = np.zeros(0, np.int64)
    if size:
        repeats = np.logical_and.reduce([pc.equal(keys[c].slice(1), keys[c].slice(0, size - 1)).to_numpy()
                                         for c in keys.column_names])
        starts = np.flatnonzero(np.concatenate([[True], ~repeats]))
    lengths = np.diff(np.append(starts, size))
    runs = keys.take(pa.array(starts)).append_column("_i", pa.array(starts)).append_column("_n", pa.array(lengths))
    groups = runs.group_by([*identity, "_file"], use_threads=False).aggregate([("_i", "min"), ("_n", "sum")])
    found: dict[str, Jurisdiction] = {}
    n_files: dict[str, set[int]] = defaultdict(set)
    n_rows: dict[str, int] = defaultdict(int)
    group_jids: list[str | None] = []
    for g in groups.to_pylist():
        first, n = g["_i_min"], g["_n_sum"]
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
    groups = groups.append_column("_rank", pa.array([rank.get(jid, -1) for jid in group_jids], INT))
    runs = runs.join(groups.select([*identity, "_file", "_rank"]), [*identity, "_file"],
                     use_threads=False).sort_by("_i")
    # each row's jurisdiction (its index in output order), -1 for a skipped row
    ranks = np.repeat(runs["_rank"].to_numpy(), runs["_n"].to_numpy())
    order = pc.sort_indices(pa.table({
        "_rank": np.where(ranks < 0, len(jurisdictions), ranks), "_doc": pc.fill_null(table["document_id"], ""),
        "section_index": table["section_index"], "_i": np.arange(size, dtype=np.int64),
    }), sort_keys=[("_rank", "ascending"), ("_doc", "ascending"), ("section_index", "ascending", "at_end"),
                   ("_i", "ascending")])
    at = order.slice(0, int(np.count_nonzero(ranks >= 0)))  # skipped rows sort last
    jids = pa.array([j.jurisdiction_id for j in jurisdictions], STR).take(pa.array(ranks).take(at))
    if len(at) < size or not np.array_equal(at.to_numpy(), np.arange(size)):
        table = table.take(at)  # not already in output order: the rows are copied
    table = table.append_column("_jid", jids)
    return V1Source(jurisdictions, reports, errors, table, names, dict(n_rows),
                    {jid: len(f) for jid, f in n_files.items()})


def _write(writer: hubfolder.SplitWriter, batches: Iterable[pa.Table | pa.RecordBatch]) -> list[hubfolder.Shard]:
    """Write ``batches`` in order and close the writer (in a thread of its own)."""
    for batch in batches:
        writer.write_batch(batch)
    return writer.close()


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
    return hubfolder.sha256_file(path)
