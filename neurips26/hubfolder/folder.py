"""A built folder as a whole: its manifest, reading it back, adding a config (atomically),
and finding it (with its provenance) under the data root."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from neurips26 import settings
from neurips26.errors import UserError

from .card import write_card
from .croissant import write_croissant
from .shards import ROW_GROUP_ROWS, ConfigSpec, Shard, SplitWriter
from .staging import building, is_staging


def write_manifest(folder: Path, configs: list[ConfigSpec], builder: Mapping[str, Any],
                   inputs: Mapping[str, str], *, demo: bool | None = None) -> dict[str, Any]:
    """manifest.json: builder, whether the folder is a demo build, input digests (path -> sha256) and every shard.

    ``demo`` is true when the folder was built from the package's embedded (invented) sample or a generator's
    default release rather than the real source; a task's results carry it (see :func:`provenance`).
    """
    manifest = {
        "builder": dict(builder),
        "demo": demo,
        "inputs": {"files": len(inputs), "sha256": dict(sorted(inputs.items()))},
        "configs": {
            spec.name: {split: [vars(s) for s in shards] for split, shards in spec.shards.items()}
            for spec in configs
        },
    }
    (folder / settings.MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


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
    YAML header and config table, and the Croissant file, so the folder stays one consistent release.

    The change is atomic: it is made in a copy (shards hard-linked) that replaces the folder when complete.
    A folder that is itself a build in progress (a staging folder) is changed in place.
    """
    folder = Path(folder)
    if not (folder / "manifest.json").is_file():
        raise FileNotFoundError(f"{folder}: not a built dataset folder (no manifest.json)")
    if is_staging(folder):
        _add_config(folder, spec, table, meta, split)
        return
    with building(folder, keep=True) as stage:
        _add_config(stage, spec, table, meta, split)


def _add_config(folder: Path, spec: ConfigSpec, table: pa.Table, meta: Mapping[str, Any], split: str) -> None:
    configs = [c for c in read_configs(folder) if c.name != spec.name]
    writer = SplitWriter(folder, spec.name, spec.schema, split)
    for batch in table.cast(spec.schema).to_batches(max_chunksize=ROW_GROUP_ROWS):
        writer.write_all(batch.to_pylist())
    spec.shards[split] = writer.close()
    configs.append(spec)

    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["configs"] = {c.name: {s: [vars(x) for x in shards] for s, shards in c.shards.items()} for c in configs}
    (folder / settings.MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")

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


def built_folder(resource: str, root: Path | None = None) -> Path:
    """The built folder of ``resource``: ``<root>/<resource>`` (default root :func:`settings.data_root`).

    Never builds: a missing folder is a :class:`UserError` naming the command to run.
    """
    base = Path(root) if root is not None else settings.data_root()
    folder = base / resource
    if not (folder / settings.MANIFEST).is_file() and folder.is_dir():
        raise UserError(f"{folder.resolve()} is not a complete build (no {settings.MANIFEST}: an interrupted "
                        f"build of an older version): rebuild it with `neurips26 build {resource}`")
    if not (folder / settings.MANIFEST).is_file():
        raise UserError(f"no built {resource} folder under {base.resolve()}: run `neurips26 build {resource}` "
                        "(or set NEURIPS26_DATA / pass --data)")
    return folder


def provenance(folder: Path, resource: str, config: str) -> dict[str, Any]:
    """What a task read: ``{"resource", "config", "version" (the builder's), "manifest_sha256", "demo"}``."""
    raw = (Path(folder) / settings.MANIFEST).read_bytes()
    manifest = json.loads(raw)
    return {"resource": resource, "config": config, "version": manifest.get("builder", {}).get("version"),
            "manifest_sha256": hashlib.sha256(raw).hexdigest(), "demo": manifest.get("demo")}
