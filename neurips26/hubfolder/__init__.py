"""The Hub-ready dataset folder: Parquet shards, manifest, card and Croissant.

Layout (see the README)::

    <out>/<resource>/
      README.md            dataset card: YAML header (configs, dataset_info) + prose
      croissant.json       Croissant 1.x metadata (core + Responsible-AI fields)
      manifest.json        builder version, input digests, per-shard sha256 and rows
      data/<config>/<split>-00000-of-00002.parquet

A build writes into a hidden sibling, ``<out>/.<resource>.partial-<pid>``, renamed into place once complete
(:mod:`.staging`), so ``<out>/<resource>`` is always a finished build or absent.

Shards are zstd-compressed (a dictionary only where values repeat), cut at a fixed row-group size and a
byte budget, and carry no timestamps, so rebuilding from the same inputs gives identical bytes.
"""

from __future__ import annotations

from .card import card_header, size_category, write_card
from .croissant import write_croissant
from .folder import add_config, built_folder, provenance, read_configs, read_table, write_manifest
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
from .staging import ForeignFolderError, abandon_build, begin_build, building, commit_build

__all__ = ["ROW_GROUP_BYTES", "ROW_GROUP_ROWS", "SHARD_BYTES", "ConfigSpec", "ForeignFolderError", "Shard",
           "SplitWriter", "abandon_build", "add_config", "begin_build", "building", "built_folder", "card_header",
           "column", "commit_build", "provenance", "read_configs", "read_table",
           "sha256_file", "size_category", "write_card", "write_croissant", "write_manifest", "write_table"]
