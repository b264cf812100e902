"""Parquet shards of one (config, split): bounded, deterministic, zstd-compressed, with their digests.

Shards are cut at a fixed row-group size and a byte budget and carry no timestamps, so rebuilding from the
same inputs gives identical bytes, however the rows were batched on the way in.

Encoding: zstd at level 3 (zstd's own default; level 6 wrote text about 2.5x slower for shards 4-9% smaller,
``bench/locus_v1.py``). A column is dictionary-encoded when the shard's first row group repeats its values (at
most one distinct value in two); text, ids and measurements are written plain, where Arrow would build a
dictionary only to drop it at the page limit. Both depend on the rows only, so the bytes stay deterministic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 8_192
ROW_GROUP_BYTES = 64 * 2**20  # in memory, well under the Hub's ~300 MB guidance
SHARD_BYTES = 256 * 2**20  # on disk, well under the Hub's ~500 MB guidance
ZSTD_LEVEL = 3


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(2**20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class Shard:
    path: str  # relative to the dataset folder
    rows: int
    bytes: int  # on disk
    sha256: str
    num_bytes: int  # uncompressed, as datasets counts it


@dataclass
class SplitWriter:
    """Streams one (config, split) into bounded, deterministic Parquet shards.

    Arrow-native: :meth:`write_batch` takes record batches as they come; rows are cut into row groups of
    ``row_group_rows`` rows (fewer when the row group's strings reach ``ROW_GROUP_BYTES``) and shards at
    ``shard_bytes`` on disk, so the bytes written do not depend on how the rows were batched. :meth:`write` and
    :meth:`write_all` take dict rows and build the columns from them a row group at a time.
    """

    folder: Path
    config: str
    schema: pa.Schema
    split: str = "train"
    shard_bytes: int = SHARD_BYTES
    row_group_rows: int = ROW_GROUP_ROWS
    _batches: list[pa.RecordBatch] = field(default_factory=list)
    _rows: int = 0
    _bytes: int = 0  # string bytes buffered: a bound (the buffers' size), counted exactly once it reaches the cap
    _pending: list[Mapping[str, Any]] = field(default_factory=list)  # dict rows not yet made a batch
    _writer: pq.ParquetWriter | None = None
    _parts: list[Path] = field(default_factory=list)
    _rows_in_part: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.directory = self.folder / "data" / self.config
        for old in self.directory.glob(f"{self.split}-*.parquet"):
            old.unlink()
        for old in self.directory.glob(f".{self.split}-part*"):
            old.unlink()
        self.directory.mkdir(parents=True, exist_ok=True)
        self._strings = [n for n in self.schema.names
                         if pa.types.is_string(self.schema.field(n).type)
                         or pa.types.is_large_string(self.schema.field(n).type)]

    def write_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Append rows given as an Arrow batch or table (columns by name; cast to the schema)."""
        self._take_pending()
        self._append(batch)

    def write(self, row: Mapping[str, Any]) -> None:
        """Append one dict row (missing keys are null)."""
        self._pending.append(row)
        if len(self._pending) >= self.row_group_rows:
            self._take_pending()

    def write_all(self, rows: Iterable[Mapping[str, Any]]) -> None:
        for row in rows:
            self.write(row)

    def _take_pending(self) -> None:
        if self._pending:
            rows, self._pending = self._pending, []
            self._append(pa.RecordBatch.from_pydict({n: [r.get(n) for r in rows] for n in self.schema.names},
                                                    schema=self.schema))

    def _append(self, batch: pa.RecordBatch | pa.Table) -> None:
        if not batch.num_rows:
            return
        if not batch.schema.equals(self.schema):
            batch = batch.select(self.schema.names).cast(self.schema)
        for b in batch.to_batches() if isinstance(batch, pa.Table) else [batch]:
            self._batches.append(b)
            self._rows += b.num_rows
            self._bytes += b.nbytes
        self._count_bytes()
        while self._rows >= self.row_group_rows or self._bytes >= ROW_GROUP_BYTES:
            self._write_group()

    def _count_bytes(self) -> None:
        """Count the string bytes buffered exactly where their bound reaches the cap (below it, they are below
        it too), so that many small batches cost no count each."""
        if self._bytes >= ROW_GROUP_BYTES:
            self._bytes = self._string_bytes(pa.Table.from_batches(self._batches, schema=self.schema))

    def _string_bytes(self, data: pa.RecordBatch | pa.Table) -> int:
        return sum(pc.sum(pc.binary_length(data.column(n))).as_py() or 0 for n in self._strings)

    def _row_sizes(self, table: pa.Table) -> np.ndarray:
        sizes = np.zeros(table.num_rows, dtype=np.int64)
        for n in self._strings:
            sizes += pc.fill_null(pc.binary_length(table.column(n)), 0).to_numpy()
        return sizes

    def _write_group(self) -> None:
        """Write the next row group: ``row_group_rows`` rows, or up to the row whose strings pass the byte cap."""
        table = pa.Table.from_batches(self._batches, schema=self.schema)
        n = min(self.row_group_rows, table.num_rows)
        if self._bytes >= ROW_GROUP_BYTES:
            over = np.flatnonzero(np.cumsum(self._row_sizes(table.slice(0, n))) >= ROW_GROUP_BYTES)
            n = int(over[0]) + 1 if len(over) else n
        self._write_table(table.slice(0, n).combine_chunks())
        rest = table.slice(n)
        self._batches, self._rows, self._bytes = rest.to_batches(), rest.num_rows, rest.nbytes
        self._count_bytes()

    def _write_table(self, table: pa.Table) -> None:
        if self._writer is None:
            part = self.directory / f".{self.split}-part{len(self._parts):05d}"
            self._parts.append(part)
            self._rows_in_part.append(0)
            self._writer = pq.ParquetWriter(part, self.schema, compression="zstd", compression_level=ZSTD_LEVEL,
                                            use_dictionary=dictionary_columns(table))
        if table.num_rows:  # an empty split is a shard with no row groups: datasets streams it as zero rows
            self._writer.write_table(table, row_group_size=table.num_rows)
        self._rows_in_part[-1] += table.num_rows
        if self._parts[-1].stat().st_size >= self.shard_bytes:
            self._writer.close()
            self._writer = None

    def close(self) -> list[Shard]:
        """Finish the last shard and give the shards their final Hub names."""
        self._take_pending()
        while self._rows:
            self._write_group()
        if not self._parts:
            self._write_table(self.schema.empty_table())
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        shards = []
        n = len(self._parts)
        for i, (part, rows) in enumerate(zip(self._parts, self._rows_in_part, strict=True)):
            final = self.directory / f"{self.split}-{i:05d}-of-{n:05d}.parquet"
            part.replace(final)
            rel = final.relative_to(self.folder).as_posix()
            meta = pq.ParquetFile(final).metadata
            num_bytes = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
            shards.append(Shard(rel, rows, final.stat().st_size, sha256_file(final), num_bytes))
        return shards


def dictionary_columns(table: pa.Table) -> list[str]:
    """The Parquet columns (leaf paths, ``path.list.element`` for a list) worth a dictionary: those whose values
    repeat in ``table`` (the first row group of a shard), at most one distinct value in two."""
    return [path for name in table.column_names for path, values in _leaves(name, table.column(name))
            if _repeats(values)]


def _repeats(values: pa.ChunkedArray) -> bool:
    try:
        return 2 * pc.count_distinct(values).as_py() <= len(values)
    except pa.ArrowNotImplementedError:  # a type Arrow cannot count (null): Arrow's default, a dictionary
        return True


def _leaves(path: str, values: pa.ChunkedArray) -> Iterator[tuple[str, pa.ChunkedArray]]:
    """(Parquet leaf path, its values) of a column, nested ones included."""
    dtype = values.type
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype):
        yield from _leaves(f"{path}.list.element", pc.list_flatten(values))
    elif pa.types.is_struct(dtype):
        for i, child in enumerate(dtype):
            yield from _leaves(f"{path}.{child.name}", pc.struct_field(values, [i]))
    else:
        yield path, values


def column(name: str, dtype: pa.DataType, description: str) -> pa.Field:
    """A schema field whose description travels to the card's field table and to Croissant."""
    return pa.field(name, dtype, metadata={"description": description})


@dataclass
class ConfigSpec:
    """One config of a dataset: its schema, description and written shards per split."""

    name: str
    schema: pa.Schema
    description: str
    shards: dict[str, list[Shard]] = field(default_factory=dict)
    default: bool = False

    def rows(self, split: str | None = None) -> int:
        splits = [split] if split else list(self.shards)
        return sum(s.rows for sp in splits for s in self.shards.get(sp, []))

    def loadable_splits(self) -> dict[str, list[Shard]]:
        """Splits with rows (``datasets`` materialises only those without streaming)."""
        return {split: shards for split, shards in self.shards.items() if sum(s.rows for s in shards)}


def write_table(folder: Path, spec: ConfigSpec, rows: Iterable[Mapping[str, Any]], split: str = "train") -> None:
    """Write a whole (small) config split at once."""
    writer = SplitWriter(folder, spec.name, spec.schema, split)
    writer.write_all(rows)
    spec.shards[split] = writer.close()
