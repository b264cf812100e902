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

from .card import card_header, size_category, write_card
from .croissant import write_croissant
from .folder import add_config, built_folder, provenance, read_configs, read_table, reset_folder, write_manifest
from .shards import (
                     ROW_GROUP_BYTES,
                     ROW_GROUP_ROWS,
                     SHARD_BYTES,
                     ConfigSpec,
                     Shard,
                     SplitWriter,
                     column,
                     sha256_file,
                     write_table,
)

__all__ = ["ROW_GROUP_BYTES", "ROW_GROUP_ROWS", "SHARD_BYTES", "ConfigSpec", "Shard", "SplitWriter", "add_config",
           "built_folder", "card_header", "column", "provenance", "read_configs", "read_table", "reset_folder",
           "sha256_file", "size_category", "write_card", "write_croissant", "write_manifest", "write_table"]
