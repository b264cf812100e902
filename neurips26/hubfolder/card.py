"""The dataset card's YAML header (configs, dataset_info) and the card file itself."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from .shards import ConfigSpec


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
    import datasets  # lazy: heavy, and only the card header needs it

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
    """README.md: the YAML header, then ``body`` (the card's prose)."""
    header = yaml.safe_dump(card_header(configs, meta), sort_keys=False, allow_unicode=True, width=1000)
    (folder / "README.md").write_text(f"---\n{header}---\n\n{body.strip()}\n", encoding="utf-8")
