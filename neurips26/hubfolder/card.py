"""The dataset card, README.md: a YAML header (the Hub's metadata fields, ``configs`` and ``dataset_info``), then
the card's prose.

The header is written directly, as ``huggingface_hub.DatasetCard`` writes a ``DatasetCardData`` (same keys, key
order and YAML), each config's ``features`` as ``datasets`` declares them for its Arrow schema: importing
``datasets`` and ``huggingface_hub`` to build, check and write it took about 0.5 s of CPU per build.
``tests/test_hubfolder_card.py`` checks that they write the same text for every builder's metadata and schemas,
and that ``datasets`` reads every config back with its splits and row counts.

Every config is declared, empty ones included (an empty ``errors`` config says "nothing was rejected"): a split
without rows is a shard with no row groups, which ``load_dataset(..., streaming=True)``, DuckDB and
:func:`neurips26.hubfolder.read_table` read as zero rows. (``datasets`` 5.2 refuses to materialise an empty split
without streaming: "corresponds to no data", huggingface/datasets#8401.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

from .shards import ConfigSpec

# Arrow type -> the ``datasets`` dtype a card declares for it.
SCALARS = {
    pa.bool_(): "bool", pa.int8(): "int8", pa.int16(): "int16", pa.int32(): "int32", pa.int64(): "int64",
    pa.uint8(): "uint8", pa.uint16(): "uint16", pa.uint32(): "uint32", pa.uint64(): "uint64",
    pa.float16(): "float16", pa.float32(): "float32", pa.float64(): "float64",
    pa.string(): "string", pa.large_string(): "large_string", pa.binary(): "binary", pa.large_binary(): "large_binary",
}
# ``datasets`` file features a schema's ``huggingface`` metadata may name for a column: stored as this struct.
FILE_FEATURES = ("Image", "Video")
FILE_STRUCT = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
PLAIN_FEATURES = ("Value", "List", "LargeList")  # read from the Arrow type, as ``datasets`` reads them


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` label for ``n`` rows."""
    for limit, label in [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]:
        if n < limit:
            return label
    return "10M<n<100M"


def feature_type(dtype: pa.DataType, config: str, column: str) -> dict[str, Any]:
    """The ``datasets`` YAML of an Arrow type: ``{"dtype": ...}``, ``{"list": ...}``, ``{"large_list": ...}`` or
    ``{"struct": [...]}``; a type a card cannot declare is a ValueError naming the config and the column (a
    path inside it: ``points[].x``)."""
    if dtype in SCALARS:
        return {"dtype": SCALARS[dtype]}
    if pa.types.is_struct(dtype):
        return {"struct": [{"name": child.name, **feature_type(child.type, config, f"{column}.{child.name}")}
                           for child in dtype]}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        item = feature_type(dtype.value_type, config, f"{column}[]")
        if list(item) in (["dtype"], ["struct"]):  # a single key is written as the list's value
            item = next(iter(item.values()))
        return {"list" if pa.types.is_list(dtype) else "large_list": item}
    raise ValueError(f"dataset card: config {config!r} column {column!r} has Arrow type {dtype}, which the card "
                     f"cannot declare (supported: {', '.join(sorted(set(SCALARS.values())))}, list, large_list, "
                     "struct)")


def _feature_types(feature: Any) -> set[str]:
    """Every ``_type`` named in a ``datasets`` feature's dict, nested ones included."""
    if isinstance(feature, list):
        return set().union(*(_feature_types(f) for f in feature))
    if not isinstance(feature, dict):
        return set()
    own = {feature["_type"]} if "_type" in feature else set()
    return own.union(*(_feature_types(f) for f in feature.values()))


def features(spec: ConfigSpec) -> list[dict[str, Any]]:
    """``dataset_info.features`` of a config: one entry per column, from its Arrow type, or the file feature
    (``datasets.Image``, ``datasets.Video``) the schema's ``huggingface`` metadata names for a column stored as
    ``{bytes, path}``, as ``datasets.Features.from_arrow_schema`` reads it."""
    raw = (spec.schema.metadata or {}).get(b"huggingface")
    declared = ((json.loads(raw).get("info") or {}).get("features") or {}) if raw else {}
    entries = []
    for field in spec.schema:
        named = declared.get(field.name) or {}
        kind = named.get("_type") if isinstance(named, dict) else None
        if kind in FILE_FEATURES and field.type == FILE_STRUCT and field.nullable:
            options = {key: value for key, value in named.items() if key != "_type"}
            entries.append({"name": field.name, "dtype": {kind.lower(): options} if options else kind.lower()})
            continue
        if not _feature_types(named) <= set(PLAIN_FEATURES):
            raise ValueError(f"dataset card: config {spec.name!r} column {field.name!r} is the datasets feature "
                             f"{json.dumps(named)} in the schema's huggingface metadata, which the card cannot "
                             f"declare (supported: {', '.join(FILE_FEATURES)}, stored as a nullable {FILE_STRUCT})")
        entries.append({"name": field.name, **feature_type(field.type, spec.name, field.name)})
    return entries


def card_header(configs: list[ConfigSpec], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The README YAML header as a dict, in ``DatasetCardData``'s key order: the Hub's metadata fields (language,
    license, size_categories, task_categories, pretty_name, tags), then ``configs`` (one ``data_files`` entry per
    split) and ``dataset_info`` (features, split sizes) for every config. Fields that are None are left out."""
    entries, infos = [], []
    for spec in configs:
        splits = spec.shards or {"train": []}
        entry: dict[str, Any] = {"config_name": spec.name,
                                 "data_files": [{"split": split, "path": f"data/{spec.name}/{split}-*.parquet"}
                                                for split in splits]}
        if spec.default:
            entry["default"] = True
        entries.append(entry)
        infos.append({
            "config_name": spec.name,
            "features": features(spec),
            "splits": [{"name": split, "num_bytes": sum(s.num_bytes for s in shards),
                        "num_examples": sum(s.rows for s in shards)} for split, shards in splits.items()],
            "download_size": sum(s.bytes for shards in splits.values() for s in shards),
            "dataset_size": sum(s.num_bytes for shards in splits.values() for s in shards),
        })
    header = {"language": meta.get("language", ["en"]), "license": meta["license"],
              "size_categories": [size_category(max((c.rows() for c in configs), default=0))],
              "task_categories": meta["task_categories"], "pretty_name": meta["pretty_name"],
              "tags": meta.get("tags", []), "configs": entries, "dataset_info": infos}
    return {key: value for key, value in header.items() if value is not None}


def card_text(configs: list[ConfigSpec], meta: Mapping[str, Any], body: str) -> str:
    """README.md's text: the YAML header (:func:`card_header`) between ``---`` lines, a blank line, then ``body``
    (the card's prose), as ``huggingface_hub.DatasetCard`` writes it."""
    header = yaml.safe_dump(card_header(configs, meta), sort_keys=False, allow_unicode=True)
    return f"---\n{header.strip()}\n---\n\n{body.strip()}\n"


def write_card(folder: Path, configs: list[ConfigSpec], meta: Mapping[str, Any], body: str) -> None:
    """README.md: the YAML header (:func:`card_header`), then ``body`` (the card's prose)."""
    (Path(folder) / "README.md").write_text(card_text(configs, meta, body), encoding="utf-8")
