"""croissant.json: Croissant 1.x metadata (core and Responsible-AI fields) of a built folder."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from .shards import ConfigSpec


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
