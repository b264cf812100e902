"""The Hub-ready dataset folder: Parquet shards, manifest, card and Croissant.

Layout (see the README)::

    <out>/<resource>/
      README.md            dataset card: YAML header (configs, dataset_info) + prose
      croissant.json       Croissant 1.x metadata (core + Responsible-AI fields)
      manifest.json        builder version, input digests, per-shard sha256 and rows
      data/<config>/<split>-00000-of-00002.parquet

Shards are zstd-compressed, cut at a fixed row-group size and a byte budget, and
carry no timestamps, so rebuilding from the same inputs gives identical bytes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

ROW_GROUP_ROWS = 8_192
ROW_GROUP_BYTES = 64 * 2**20  # in memory, well under the Hub's ~300 MB guidance
SHARD_BYTES = 256 * 2**20  # on disk, well under the Hub's ~500 MB guidance


def sha256_file(path: Path) -> str:
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
        table = pa.Table.from_pylist(self._buffer, schema=self.schema)
        self._writer.write_table(table, row_group_size=len(self._buffer) or 1)
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
        """Splits with rows: datasets cannot load an empty split, so empty ones are not declared."""
        return {split: shards for split, shards in self.shards.items() if sum(s.rows for s in shards)}


def write_table(folder: Path, spec: ConfigSpec, rows: Iterable[Mapping[str, Any]], split: str = "train") -> None:
    """Write a whole (small) config split at once."""
    writer = SplitWriter(folder, spec.name, spec.schema, split)
    writer.write_all(rows)
    spec.shards[split] = writer.close()


def size_category(n: int) -> str:
    for limit, label in [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]:
        if n < limit:
            return label
    return "10M<n<100M"


def card_header(configs: list[ConfigSpec], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The README YAML header: pretty_name, license, ..., configs and dataset_info.

    Configs and splits without rows are left out (``load_dataset`` cannot load
    them); their empty shards stay on disk for DuckDB and the manifest.
    """
    import datasets  # heavy; only needed here

    header: dict[str, Any] = {
        "pretty_name": meta["pretty_name"],
        "license": meta["license"],
        "language": meta.get("language", ["en"]),
        "task_categories": meta["task_categories"],
        "size_categories": [size_category(max(c.rows() for c in configs))],
        "tags": meta.get("tags", []),
        "configs": [],
        "dataset_info": [],
    }
    for spec in configs:
        splits = spec.loadable_splits()
        if not splits:
            continue
        entry: dict[str, Any] = {
            "config_name": spec.name,
            "data_files": [{"split": split, "path": f"data/{spec.name}/{split}-*.parquet"}
                           for split in splits],
        }
        if spec.default:
            entry["default"] = True
        header["configs"].append(entry)
        features = datasets.Features.from_arrow_schema(spec.schema)
        header["dataset_info"].append({
            "config_name": spec.name,
            "features": features._to_yaml_list(),
            "splits": [{"name": split, "num_bytes": sum(s.num_bytes for s in shards),
                        "num_examples": sum(s.rows for s in shards)} for split, shards in splits.items()],
            "download_size": sum(s.bytes for shards in splits.values() for s in shards),
            "dataset_size": sum(s.num_bytes for shards in splits.values() for s in shards),
        })
    return header


def write_card(folder: Path, configs: list[ConfigSpec], meta: Mapping[str, Any], body: str) -> None:
    header = yaml.safe_dump(card_header(configs, meta), sort_keys=False, allow_unicode=True, width=1000)
    (folder / "README.md").write_text(f"---\n{header}---\n\n{body.strip()}\n", encoding="utf-8")


def write_manifest(folder: Path, configs: list[ConfigSpec], builder: Mapping[str, Any],
                   inputs: Mapping[str, str]) -> dict[str, Any]:
    """manifest.json: builder, input digests (path -> sha256) and every shard."""
    manifest = {
        "builder": dict(builder),
        "inputs": {"files": len(inputs), "sha256": dict(sorted(inputs.items()))},
        "configs": {
            spec.name: {split: [vars(s) for s in shards] for split, shards in spec.shards.items()}
            for spec in configs
        },
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _croissant_type(dtype: pa.DataType) -> tuple[str, bool]:
    """(Croissant dataType, is_array) for an Arrow type."""
    import mlcroissant as mlc

    is_array = pa.types.is_list(dtype) or pa.types.is_large_list(dtype)
    base = dtype.value_type if is_array else dtype
    if pa.types.is_boolean(base):
        return mlc.DataType.BOOL, is_array
    if pa.types.is_integer(base):
        return mlc.DataType.INTEGER, is_array
    if pa.types.is_floating(base):
        return mlc.DataType.FLOAT, is_array
    return mlc.DataType.TEXT, is_array


def write_croissant(folder: Path, configs: list[ConfigSpec], meta: Mapping[str, Any]) -> None:
    """croissant.json with one FileSet and one RecordSet per config, plus RAI fields."""
    import mlcroissant as mlc

    distribution: list[Any] = []
    record_sets = []
    for spec in (c for c in configs if c.loadable_splits()):
        fileset_id = f"{spec.name}-parquet"
        distribution.append(mlc.FileSet(
            id=fileset_id, name=fileset_id, description=f"Parquet shards of the {spec.name} config.",
            encoding_formats=["application/x-parquet"], includes=[f"data/{spec.name}/*.parquet"],
        ))
        fields = []
        for column in spec.schema:
            data_type, is_array = _croissant_type(column.type)
            fields.append(mlc.Field(
                id=f"{spec.name}/{column.name}", name=column.name, data_types=[data_type],
                is_array=is_array or None, array_shape="-1" if is_array else None,
                description=(column.metadata or {}).get(b"description", b"").decode() or column.name,
                source=mlc.Source(file_set=fileset_id, extract=mlc.Extract(column=column.name)),
            ))
        record_sets.append(mlc.RecordSet(id=spec.name, name=spec.name, description=spec.description,
                                         fields=fields))
    rai = meta["rai"]
    metadata = mlc.Metadata(
        name=meta["name"], description=meta["description"], license=[meta["license_url"]],
        url=meta["url"], version=meta["version"], cite_as=meta.get("citation"),
        keywords=meta.get("tags"), distribution=distribution, record_sets=record_sets,
        date_published=meta.get("date_published"),
        data_collection=rai["data_collection"], data_collection_type=rai["data_collection_type"],
        data_preprocessing_protocol=rai["data_preprocessing_protocol"],
        data_biases=rai["data_biases"], data_limitations=rai["data_limitations"],
        data_use_cases=rai["data_use_cases"], data_social_impact=rai["data_social_impact"],
        personal_sensitive_information=rai["personal_sensitive_information"],
        data_release_maintenance_plan=rai["data_release_maintenance_plan"],
    )
    payload = metadata.to_json()
    (folder / "croissant.json").write_text(
        json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


def reset_folder(folder: Path) -> None:
    """Remove what an earlier build wrote (data/, card, metadata) and nothing else.

    Refuses a non-empty folder that is not an earlier build (no manifest.json),
    so a mistyped ``--out`` never deletes anything of the user's.
    """
    if folder.exists() and any(folder.iterdir()) and not (folder / "manifest.json").is_file():
        raise FileExistsError(f"{folder}: exists, is not empty and is not a dataset folder built here "
                              "(no manifest.json); choose an empty or new --out")
    shutil.rmtree(folder / "data", ignore_errors=True)
    for name in ("README.md", "croissant.json", "manifest.json", "build_report.json"):
        (folder / name).unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)


def read_table(folder: Path, config: str, columns: list[str] | None = None, split: str = "train") -> pa.Table | None:
    """One split of one config of a built folder (its shards in order), or None when it has none."""
    shards = sorted((Path(folder) / "data" / config).glob(f"{split}-*.parquet"))
    return pq.read_table(shards, columns=columns) if shards else None


def read_configs(folder: Path) -> list[ConfigSpec]:
    """The configs of a built folder, from its manifest (shards), shards (schema), card and Croissant."""
    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    header = yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---")[1])
    defaults = {c["config_name"] for c in header.get("configs", []) if c.get("default")}
    croissant = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    descriptions = {r.get("name"): r.get("description", "") for r in croissant.get("recordSet", [])}
    configs = []
    for name, splits in manifest["configs"].items():
        shards = {split: [Shard(**s) for s in items] for split, items in splits.items()}
        first = next((s for items in shards.values() for s in items), None)
        if first is None:
            raise ValueError(f"{folder}/manifest.json: config {name!r} lists no shards")
        configs.append(ConfigSpec(name, pq.read_schema(folder / first.path), descriptions.get(name, name), shards,
                                  default=name in defaults))
    return configs


def add_config(folder: Path, spec: ConfigSpec, table: pa.Table, meta: Mapping[str, Any],
               split: str = "train") -> None:
    """Add (or replace) one config in an existing built folder: its shards, then the manifest, the card's
    YAML header and config table, and the Croissant file, so the folder stays one consistent release."""
    folder = Path(folder)
    if not (folder / "manifest.json").is_file():
        raise FileNotFoundError(f"{folder}: not a built dataset folder (no manifest.json)")
    configs = [c for c in read_configs(folder) if c.name != spec.name]
    writer = SplitWriter(folder, spec.name, spec.schema, split)
    for batch in table.cast(spec.schema).to_batches(max_chunksize=ROW_GROUP_ROWS):
        writer.write_all(batch.to_pylist())
    spec.shards[split] = writer.close()
    configs.append(spec)

    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["configs"] = {c.name: {s: [vars(x) for x in shards] for s, shards in c.shards.items()} for c in configs}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")

    body = (folder / "README.md").read_text(encoding="utf-8").split("---", 2)[2]
    row = f"| `{spec.name}` | {spec.rows():,} | {spec.description} |"
    lines = body.splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith(f"| `{spec.name}` |")]
    if at:
        lines[at[0]] = row
    else:
        last = max((i for i, line in enumerate(lines) if line.startswith("| `")), default=len(lines) - 1)
        lines.insert(last + 1, row)
    write_card(folder, configs, meta, "\n".join(lines))
    write_croissant(folder, configs, meta)
