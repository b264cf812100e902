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
  when those are absent), ``~k`` added to the k-th occurrence of an id in output
  order so that ids are unique across the download; a section number at the start of the header
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

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from neurips26 import hubfolder
from neurips26.errors import UserError

from .card import META
from .records import FUNCTIONS, LIST, STR, TOPICS, V1_SCHEMA
from .records import V1_IDENTITY as IDENTITY
from .records import V1_LABELS as LABELS

FORMAT = "locus-v1"
SOURCE = "LocalLaws/LOCUS-v1"
DESCRIPTION = "The corpus in the LOCUS-v1 schema (drop-in for LOCUS-v1 users)."
LICENSE = {"license": "cc-by-nc-4.0", "license_url": "https://creativecommons.org/licenses/by-nc/4.0/"}
NOT_DATA = ("README.md",)  # the dataset card of a downloaded snapshot
# Published dataset card column -> paper column.
ALIASES = {"city": "jurisdiction_name", "county": "represented_county_name",
           "source_jurisdiction_type": "jurisdiction_type"}
# jurisdiction_type (lower case) -> our kind; the first word found decides.
TYPE_WORDS = (("consolidated", "consolidated"), ("county", "county"), ("parish", "county"),
              ("borough", "town"), ("township", "town"), ("town", "town"), ("village", "village"),
              ("district", "district"), ("city", "city"), ("municipal", "city"), ("place", "city"))


class V1Error(UserError):
    """A LOCUS-v1 file cannot be used (the message names the file and column)."""


# --- writing: the locus_v1 config of any build ------------------------------------------

def locus_v1_table(folder: Path, scores: pa.Table | None = None) -> pa.Table:
    """The ``locus_v1`` config of a built folder: one row per section, in ``sections`` order.

    ``scores`` (keyed by ``section_id``; any of the label columns of :data:`V1_SCHEMA`)
    supplies the columns it has, for every row (null for a section it does not score);
    other labels come from the ingested LOCUS-v1 rows (``v1_source``) or are null.
    The whole table in memory: :func:`locus_v1_batches` streams it.
    """
    return pa.Table.from_batches(list(locus_v1_batches(folder, scores)), schema=V1_SCHEMA)


def locus_v1_batches(folder: Path, scores: pa.Table | None = None) -> Iterator[pa.RecordBatch]:
    """:func:`locus_v1_table`, a ``sections`` row group at a time, so memory does not grow with the corpus.
    Columns are lined up by position, not joined, so header and content are not copied."""
    folder = Path(folder)
    shards = sorted((folder / "data" / "sections").glob("train-*.parquet"))
    jurisdictions = hubfolder.read_table(folder, "jurisdictions", ["jurisdiction_id", "name", "kind"])
    if not shards or jurisdictions is None:
        raise FileNotFoundError(f"{folder}: no sections/jurisdictions configs (not a built LOCUS folder)")
    ids = jurisdictions["jurisdiction_id"].combine_chunks()
    fips, names = _represented(folder, ids.to_pylist())
    source = hubfolder.read_table(folder, "v1_source")  # ids and labels only: small beside the text
    if scores is not None:
        scores = _check_scores(scores)
    offset = 0
    for shard in shards:
        for batch in pq.ParquetFile(shard).iter_batches(  # a row group's worth at a time: bounded memory
                batch_size=hubfolder.ROW_GROUP_ROWS,
                columns=["section_id", "jurisdiction_id", "state", "heading", "text", "order"]):
            sections = pa.Table.from_batches([batch])
            n = sections.num_rows
            at = pc.index_in(sections["jurisdiction_id"], value_set=ids)  # each section's jurisdiction row
            columns = {
                "document_id": sections["jurisdiction_id"], "section_index": sections["order"],
                "state": sections["state"], "jurisdiction_name": jurisdictions["name"].take(at),
                "jurisdiction_type": jurisdictions["kind"].take(at), "jurisdiction_geoid": pa.nulls(n, STR),
                "represented_county_fips": fips.take(at), "represented_county_name": names.take(at),
                "header": sections["heading"], "content": sections["text"],
                **{c: pa.nulls(n, V1_SCHEMA.field(c).type) for c in LABELS},
            }
            if source is not None:  # ingested from LOCUS-v1: its identity and labels, as they came
                columns.update({c: _aligned(source, sections, c, offset) for c in IDENTITY + LABELS})
            if scores is not None:
                columns.update({c: _aligned(scores, sections, c, offset)
                                for c in scores.column_names if c != "section_id"})
            offset += n
            yield pa.RecordBatch.from_arrays([pa.chunked_array(columns[f.name]).cast(f.type).combine_chunks()
                                              for f in V1_SCHEMA], schema=V1_SCHEMA)


def write_shards(folder: Path) -> list[hubfolder.Shard]:
    """Write the ``locus_v1`` shards of a folder built from raw codes (:func:`locus_v1_batches`, streamed) and
    return them; the build runs it in a thread beside the evaluation sets."""
    writer = hubfolder.SplitWriter(Path(folder), "locus_v1", V1_SCHEMA)
    for batch in locus_v1_batches(folder):
        writer.write_batch(batch)
    return writer.close()


def ingested_rows(sections: pa.Table, source: pa.Table, jurisdiction_name: str) -> pa.Table:
    """The ``locus_v1`` rows of one jurisdiction of a LOCUS-v1 ingest, made from its sections and ``v1_source``
    rows (no copy): what :func:`locus_v1_batches` reads back for them (identity and labels as they came)."""
    columns = {"state": sections["state"], "jurisdiction_name": pa.repeat(jurisdiction_name, sections.num_rows),
               "header": sections["heading"], "content": sections["text"],
               **{c: source[c] for c in IDENTITY + LABELS}}
    return pa.Table.from_arrays([columns[f.name] for f in V1_SCHEMA], schema=V1_SCHEMA)


def _aligned(table: pa.Table, sections: pa.Table, column: str, offset: int) -> pa.ChunkedArray:
    """``table[column]`` in the order of ``sections`` (by ``section_id``; null where it has no row); rows at the
    same position (``offset`` on) are taken without a join."""
    same = table.slice(offset, sections.num_rows)
    if same["section_id"].equals(sections["section_id"]):
        return same[column]
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


def released_labels(source: pa.Table) -> pa.Table:
    """LOCUS-v1's released labels of ``v1_source`` rows: ``section_id``, ``function``, ``topic`` and
    ``substantive`` (null when absent or outside the codebook's label sets)."""
    function, topic = source["function"], source["topic"]
    return pa.table({"section_id": source["section_id"],
                     "function": pc.if_else(pc.is_in(function, pa.array(FUNCTIONS)), function, None),
                     "topic": pc.if_else(pc.is_in(topic, pa.array(TOPICS)), topic, None),
                     "substantive": source["is_substantive"]})
