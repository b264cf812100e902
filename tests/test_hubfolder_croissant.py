"""croissant.json is written without mlcroissant: it must be what mlcroissant writes from the same fields, and load
in mlcroissant."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mlcroissant as mlc
import pyarrow as pa
import pytest
from neurips26.corpora.clovr.card import META as CLOVR
from neurips26.corpora.fic.card import META as FIC
from neurips26.corpora.locus.card import META as LOCUS
from neurips26.corpora.locus.v1 import LICENSE as LOCUS_V1_LICENSE
from neurips26.corpora.pusht.card import META as PUSHT
from neurips26.corpora.rolebench_unlearn.card import META as ROLEBENCH
from neurips26.corpora.tar.card import META as TAR

from neurips26 import hubfolder
from neurips26.hubfolder.croissant import RAI, croissant_type

SCHEMA = pa.schema([
    hubfolder.column("id", pa.string(), "Row id"),
    pa.field("undescribed", pa.large_string()),
    hubfolder.column("n", pa.int32(), "A count"),
    hubfolder.column("big", pa.int64(), "Another count"),
    hubfolder.column("score", pa.float64(), "A score"),
    hubfolder.column("flag", pa.bool_(), "A flag"),
    hubfolder.column("tags", pa.list_(pa.string()), "Some tags"),
    hubfolder.column("ints", pa.large_list(pa.int64()), "Some numbers"),
    hubfolder.column("point", pa.struct([("x", pa.float64())]), "A struct"),
])
METAS = {"clovr": CLOVR, "fic": FIC, "locus": LOCUS, "locus-v1": {**LOCUS, **LOCUS_V1_LICENSE}, "pusht": PUSHT,
         "rolebench": ROLEBENCH, "tar": TAR,
         "no tags, no citation, a date": {**TAR, "tags": [], "citation": None, "date_published": "2026-05-01"},
         "one tag": {**TAR, "tags": ["video"]}}


def _mlcroissant_json(configs: list[hubfolder.ConfigSpec], meta: Mapping[str, Any]) -> dict:
    """What mlcroissant writes for the same FileSets, RecordSets and fields: the reference."""
    distribution: list[Any] = []
    record_sets = []
    types = {"sc:Boolean": mlc.DataType.BOOL, "sc:Integer": mlc.DataType.INTEGER, "sc:Float": mlc.DataType.FLOAT,
             "sc:Text": mlc.DataType.TEXT}
    for spec in (c for c in configs if c.loadable_splits()):
        fileset_id = f"{spec.name}-parquet"
        distribution.append(mlc.FileSet(
            id=fileset_id, name=fileset_id, description=f"Parquet shards of the {spec.name} config.",
            encoding_formats=["application/x-parquet"], includes=[f"data/{spec.name}/*.parquet"]))
        fields = []
        for column in spec.schema:
            data_type, is_array = croissant_type(column.type)
            fields.append(mlc.Field(
                id=f"{spec.name}/{column.name}", name=column.name, data_types=[types[data_type]],
                is_array=is_array or None, array_shape="-1" if is_array else None,
                description=(column.metadata or {}).get(b"description", b"").decode() or column.name,
                source=mlc.Source(file_set=fileset_id, extract=mlc.Extract(column=column.name))))
        record_sets.append(mlc.RecordSet(id=spec.name, name=spec.name, description=spec.description, fields=fields))
    rai = meta["rai"]
    return mlc.Metadata(
        name=meta["name"], description=meta["description"], license=[meta["license_url"]], url=meta["url"],
        version=meta["version"], cite_as=meta.get("citation"), keywords=meta.get("tags"),
        distribution=distribution, record_sets=record_sets, date_published=meta.get("date_published"),
        **{key: rai[key] for key in RAI},
    ).to_json()


def _configs() -> list[hubfolder.ConfigSpec]:
    shard = hubfolder.Shard("data/x/train-00000-of-00001.parquet", 3, 100, "0" * 64, 300)
    empty = hubfolder.Shard("data/x/train-00000-of-00001.parquet", 0, 100, "0" * 64, 0)
    return [hubfolder.ConfigSpec("rows", SCHEMA, "A config with rows.", {"train": [shard], "test": [empty]}),
            hubfolder.ConfigSpec("empty", SCHEMA, "A config without rows.", {"train": [empty]}),
            hubfolder.ConfigSpec("second", SCHEMA.remove(0), "", {"train": [shard]})]


@pytest.mark.parametrize("meta", METAS.values(), ids=METAS.keys())
def test_croissant_json_is_what_mlcroissant_writes(meta: dict, tmp_path: Path) -> None:
    hubfolder.write_croissant(tmp_path, _configs(), meta)
    expected = json.dumps(_mlcroissant_json(_configs(), meta), indent=2, ensure_ascii=False, default=str) + "\n"
    assert (tmp_path / "croissant.json").read_text(encoding="utf-8") == expected


def test_a_built_croissant_loads_and_its_records_read(tmp_path: Path) -> None:
    spec = hubfolder.ConfigSpec("rows", pa.schema(list(SCHEMA)[:7]), "Rows.")
    hubfolder.write_table(tmp_path, spec, [{"id": f"r{i}", "undescribed": "u", "n": i, "big": 2**40, "score": 0.5,
                                            "flag": i % 2 == 0, "tags": ["a", "b"]} for i in range(3)])
    hubfolder.write_croissant(tmp_path, [spec], LOCUS)
    dataset = mlc.Dataset(jsonld=str(tmp_path / "croissant.json"))  # raises on validation errors
    records = list(dataset.records("rows"))
    assert [r["rows/id"] for r in records] == [b"r0", b"r1", b"r2"]
    assert [r["rows/n"] for r in records] == [0, 1, 2]
    assert list(records[0]["rows/tags"]) == [b"a", b"b"]
