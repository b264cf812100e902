"""Parquet shards of one (config, split): bounded, deterministic, zstd-compressed, with their digests.

Shards are cut at a fixed row-group size and a byte budget and carry no timestamps, so rebuilding from the
same inputs gives identical bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 8_192
ROW_GROUP_BYTES = 64 * 2**20  # in memory, well under the Hub's ~300 MB guidance
SHARD_BYTES = 256 * 2**20  # on disk, well under the Hub's ~500 MB guidance


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
    """Streams rows of one (config, split) into bounded, deterministic Parquet shards."""

    folder: Path
    config: str
    schema: pa.Schema
    split: str = "train"
    shard_bytes: int = SHARD_BYTES
    row_group_rows: int = ROW_GROUP_ROWS
    _buffer: list[dict[str, Any]] = field(default_factory=list)
    _buffer_bytes: int = 0
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

    def write(self, row: Mapping[str, Any]) -> None:
        self._buffer.append(dict(row))
        self._buffer_bytes += sum(len(v) for v in row.values() if isinstance(v, str))
        if len(self._buffer) >= self.row_group_rows or self._buffer_bytes >= ROW_GROUP_BYTES:
            self._flush()

    def write_all(self, rows: Iterable[Mapping[str, Any]]) -> None:
        for row in rows:
            self.write(row)

    def _flush(self) -> None:
        if not self._buffer and self._writer is not None:
            return
        if self._writer is None:
            part = self.directory / f".{self.split}-part{len(self._parts):05d}"
            self._parts.append(part)
            self._rows_in_part.append(0)
            self._writer = pq.ParquetWriter(part, self.schema, compression="zstd", compression_level=6)
        if self._buffer:  # an empty split is a shard with no row groups: datasets streams it as zero rows
            table = pa.Table.from_pylist(self._buffer, schema=self.schema)
            self._writer.write_table(table, row_group_size=len(self._buffer))
        self._rows_in_part[-1] += len(self._buffer)
        self._buffer, self._buffer_bytes = [], 0
        if self._parts[-1].stat().st_size >= self.shard_bytes:
            self._writer.close()
            self._writer = None

    def close(self) -> list[Shard]:
        """Finish the last shard and give the shards their final Hub names."""
        if self._buffer or not self._parts:
            self._flush()
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
