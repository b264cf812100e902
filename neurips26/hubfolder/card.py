"""The dataset card: its YAML header (configs, dataset_info) through ``huggingface_hub.DatasetCardData``, and the
card file through ``huggingface_hub.DatasetCard``, checked the way ``datasets`` reads it before it is written.

Every config is declared, empty ones included (an empty ``errors`` config says "nothing was rejected"): a split
without rows is a shard with no row groups, which ``load_dataset(..., streaming=True)``, DuckDB and
:func:`neurips26.hubfolder.read_table` read as zero rows. (``datasets`` 5.2 refuses to materialise an empty split
without streaming: "corresponds to no data", huggingface/datasets#8401.)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .shards import ConfigSpec


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` label for ``n`` rows."""
    for limit, label in [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]:
        if n < limit:
            return label
    return "10M<n<100M"


def card_header(configs: list[ConfigSpec], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The README YAML header as a dict: pretty_name, license, ..., configs and dataset_info (every config)."""
    return card_data(configs, meta).to_dict()


def card_data(configs: list[ConfigSpec], meta: Mapping[str, Any]):
    """``huggingface_hub.DatasetCardData`` of the folder: the Hub's metadata fields, then ``configs`` (one
    ``data_files`` entry per split) and ``dataset_info`` (features, split sizes) for every config."""
    import datasets  # lazy: heavy, and only the card header needs it
    from huggingface_hub import DatasetCardData  # lazy: heavy, as above

    entries, infos = [], []
    for spec in configs:
        splits = spec.shards or {"train": []}
        entry: dict[str, Any] = {"config_name": spec.name,
                                 "data_files": [{"split": split, "path": f"data/{spec.name}/{split}-*.parquet"}
                                                for split in splits]}
        if spec.default:
            entry["default"] = True
        entries.append(entry)
        features = datasets.Features.from_arrow_schema(spec.schema)
        infos.append({
            "config_name": spec.name,
            "features": features._to_yaml_list(),
            "splits": [{"name": split, "num_bytes": sum(s.num_bytes for s in shards),
                        "num_examples": sum(s.rows for s in shards)} for split, shards in splits.items()],
            "download_size": sum(s.bytes for shards in splits.values() for s in shards),
            "dataset_size": sum(s.num_bytes for shards in splits.values() for s in shards),
        })
    return DatasetCardData(
        pretty_name=meta["pretty_name"], license=meta["license"], language=meta.get("language", ["en"]),
        task_categories=meta["task_categories"],
        size_categories=[size_category(max((c.rows() for c in configs), default=0))],
        tags=meta.get("tags", []), configs=entries, dataset_info=infos)


def check_card(card: Any, configs: list[ConfigSpec]) -> None:
    """Read the card's header back as ``datasets`` does (configs and dataset_info) and check that every config is
    declared with its splits and row counts; a ValueError names what differs."""
    import datasets  # lazy: as in card_data
    from datasets.utils.metadata import MetadataConfigs

    declared = MetadataConfigs.from_dataset_card_data(card.data)
    infos = datasets.info.DatasetInfosDict.from_dataset_card_data(card.data)
    for spec in configs:
        if spec.name not in declared or spec.name not in infos:
            raise ValueError(f"dataset card: config {spec.name!r} is not declared in configs/dataset_info")
        splits = infos[spec.name].splits or {}
        for split in spec.shards:
            if split not in splits or splits[split].num_examples != spec.rows(split):
                raise ValueError(f"dataset card: config {spec.name!r} split {split!r} is missing or has the wrong "
                                 "row count in dataset_info")


def write_card(folder: Path, configs: list[ConfigSpec], meta: Mapping[str, Any], body: str) -> None:
    """README.md through ``huggingface_hub.DatasetCard``: the YAML header (:func:`card_data`), then ``body``
    (the card's prose); the header is checked (:func:`check_card`) before the file is written."""
    from huggingface_hub import DatasetCard  # lazy: as in card_data

    card = DatasetCard(f"---\n{card_data(configs, meta).to_yaml()}\n---\n\n{body.strip()}\n")
    check_card(card, configs)
    (Path(folder) / "README.md").write_text(str(card), encoding="utf-8")
