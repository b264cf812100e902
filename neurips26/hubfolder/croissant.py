"""croissant.json: Croissant 1.0 metadata (core and Responsible-AI fields) of a built folder.

The JSON-LD is written directly, as ``mlcroissant`` writes Croissant 1.0 (same keys, key order and values):
importing ``mlcroissant`` (rdflib, networkx, scipy) to build and serialise it took about 0.5 s of CPU per build.
``tests/test_hubfolder_croissant.py`` checks that ``mlcroissant`` writes the same text from the same fields, for
every builder's metadata, and loads a written file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from .shards import ConfigSpec

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
# mlcroissant's JSON-LD @context for Croissant 1.0, in its order.
CONTEXT: dict[str, Any] = {
    "@language": "en", "@vocab": "https://schema.org/", "citeAs": "cr:citeAs", "column": "cr:column",
    "conformsTo": "dct:conformsTo", "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/", "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"}, "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty", "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract", "field": "cr:field", "fileProperty": "cr:fileProperty", "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet", "format": "cr:format", "includes": "cr:includes", "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath", "key": "cr:key", "md5": "cr:md5", "parentField": "cr:parentField", "path": "cr:path",
    "recordSet": "cr:recordSet", "references": "cr:references", "regex": "cr:regex", "repeated": "cr:repeated",
    "replace": "cr:replace", "samplingRate": "cr:samplingRate", "sc": "https://schema.org/",
    "separator": "cr:separator", "source": "cr:source", "subField": "cr:subField", "transform": "cr:transform",
}
# meta["rai"] key -> Croissant RAI property
RAI = {"data_biases": "rai:dataBiases", "data_collection": "rai:dataCollection",
       "data_collection_type": "rai:dataCollectionType", "data_limitations": "rai:dataLimitations",
       "data_preprocessing_protocol": "rai:dataPreprocessingProtocol",
       "data_release_maintenance_plan": "rai:dataReleaseMaintenancePlan",
       "data_social_impact": "rai:dataSocialImpact", "data_use_cases": "rai:dataUseCases",
       "personal_sensitive_information": "rai:personalSensitiveInformation"}


def croissant_type(dtype: pa.DataType) -> tuple[str, bool]:
    """(Croissant dataType, is_array) for an Arrow type."""
    is_array = pa.types.is_list(dtype) or pa.types.is_large_list(dtype)
    base = dtype.value_type if is_array else dtype
    if pa.types.is_boolean(base):
        return "sc:Boolean", is_array
    if pa.types.is_integer(base):
        return "sc:Integer", is_array
    if pa.types.is_floating(base):
        return "sc:Float", is_array
    return "sc:Text", is_array


def _one_or_many(values: Any) -> Any:
    """A list of one value as that value (mlcroissant's unboxing); anything else as it is."""
    return values[0] if isinstance(values, list | tuple) and len(values) == 1 else values


def _node(**properties: Any) -> dict[str, Any]:
    """A JSON-LD node without its empty properties (``False`` is kept)."""
    return {k: v for k, v in properties.items() if v or isinstance(v, bool)}


def _field(spec: ConfigSpec, column: pa.Field) -> dict[str, Any]:
    data_type, is_array = croissant_type(column.type)
    return _node(**{
        "@type": "cr:Field", "@id": f"{spec.name}/{column.name}", "name": column.name,
        "description": (column.metadata or {}).get(b"description", b"").decode() or column.name,
        "cr:arrayShape": "-1" if is_array else None, "cr:isArray": True if is_array else None,
        "dataType": data_type,
        "source": {"fileSet": {"@id": f"{spec.name}-parquet"}, "extract": {"column": column.name}},
    })


def croissant(configs: list[ConfigSpec], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The Croissant JSON-LD: one FileSet and one RecordSet per config with rows, plus the RAI fields."""
    loaded = [c for c in configs if c.loadable_splits()]
    rai = meta["rai"]
    return _node(**{
        "@context": CONTEXT, "@type": "sc:Dataset", "name": meta["name"], "description": meta["description"],
        "conformsTo": CONFORMS_TO, "citeAs": meta.get("citation"), "datePublished": meta.get("date_published"),
        "keywords": _one_or_many(meta.get("tags")), "license": meta["license_url"],
        **{RAI[key]: _one_or_many(rai[key]) for key in sorted(RAI, key=RAI.get)},
        "url": meta["url"], "version": meta["version"],
        "distribution": [{"@type": "cr:FileSet", "@id": f"{spec.name}-parquet", "name": f"{spec.name}-parquet",
                          "description": f"Parquet shards of the {spec.name} config.",
                          "encodingFormat": "application/x-parquet", "includes": f"data/{spec.name}/*.parquet"}
                         for spec in loaded],
        "recordSet": [_node(**{"@type": "cr:RecordSet", "@id": spec.name, "name": spec.name,
                               "description": spec.description,
                               "field": [_field(spec, column) for column in spec.schema]})
                      for spec in loaded],
    })


def write_croissant(folder: Path, configs: list[ConfigSpec], meta: Mapping[str, Any]) -> None:
    """croissant.json with one FileSet and one RecordSet per config, plus RAI fields."""
    (folder / "croissant.json").write_text(
        json.dumps(croissant(configs, meta), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
