"""README.md is written without datasets and huggingface_hub: it must be what huggingface_hub writes from the same
fields (with datasets' features), for every builder's metadata and schemas, read back by datasets with every config,
split and row count, and a build must not import either library."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pytest
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData
from neurips26.corpora.clovr import build as clovr_build
from neurips26.corpora.clovr.card import META as CLOVR
from neurips26.corpora.fic import records as fic_records
from neurips26.corpora.fic.card import META as FIC
from neurips26.corpora.locus import records as locus_records
from neurips26.corpora.locus.card import META as LOCUS
from neurips26.corpora.locus.v1 import LICENSE as LOCUS_V1_LICENSE
from neurips26.corpora.pusht import records as pusht_records
from neurips26.corpora.pusht.card import META as PUSHT
from neurips26.corpora.rolebench_unlearn import records as rolebench_records
from neurips26.corpora.rolebench_unlearn.card import META as ROLEBENCH
from neurips26.corpora.tar import build as tar_build
from neurips26.corpora.tar.card import META as TAR
from neurips26.corpora.video import release as video_release
from neurips26.methods.frameselect import tables as frameselect_tables
from neurips26.methods.geometry import dataset as geometry_dataset
from neurips26.methods.ipg import report as ipg_report
from neurips26.methods.locus_analysis import score as locus_analysis_score

from neurips26 import hubfolder
from neurips26.hubfolder.card import FILE_STRUCT, SCALARS, card_text

IPG = {"pretty_name": "IPG attributions: org/model on gsm8k", "license": "apache-2.0",
       "task_categories": ["text-generation"], "tags": ["interpretability", "attribution"]}  # as ipg.report writes
METAS = {"clovr": CLOVR, "fic": FIC, "locus": LOCUS, "locus-v1": {**LOCUS, **LOCUS_V1_LICENSE}, "pusht": PUSHT,
         "rolebench": ROLEBENCH, "tar": TAR, "frameselect": frameselect_tables.META, "geometry": geometry_dataset.META,
         "ipg": IPG,
         "no tags, no language": {**IPG, "tags": None, "language": None},
         "unicode, quotes and a colon": {**IPG, "pretty_name": "Ordonnances «municipales»: l'été — 日本", "tags": [],
                                         "language": ["fr", "ja"]}}
BODY = "# A card\n\nSome prose: `code`, «quotes», 日本.\r\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"


def _types_schema() -> pa.Schema:
    """Every Arrow type a card declares, nested ones, and the datasets file features named in the metadata."""
    point = pa.struct([("x", pa.float64()), ("tags", pa.list_(pa.string()))])
    fields = [pa.field(f"scalar_{dtype}", dtype) for dtype in SCALARS]
    fields += [pa.field("strings", pa.list_(pa.string())), pa.field("big_ints", pa.large_list(pa.int64())),
               pa.field("matrix", pa.list_(pa.list_(pa.float32()))), pa.field("cube", pa.list_(pa.list_(pa.list_(
                   pa.bool_())))), pa.field("large_nested", pa.large_list(pa.large_list(pa.large_string()))),
               pa.field("point", point), pa.field("points", pa.list_(point)), pa.field("big_points", pa.large_list(
                   point)), pa.field("outer", pa.struct([("inner", point), ("n", pa.int32())])),
               pa.field("image", FILE_STRUCT), pa.field("raw_image", FILE_STRUCT),
               pa.field("video", FILE_STRUCT), pa.field("plain_file", FILE_STRUCT),
               hubfolder.column("described", pa.string(), "Field metadata is not a feature")]
    schema = pa.schema(fields)
    features = datasets.Features.from_arrow_schema(schema)
    features["image"], features["raw_image"] = datasets.Image(), datasets.Image(decode=False)
    features["video"] = datasets.Video()
    return schema.with_metadata({"huggingface": json.dumps({"info": {"features": features.to_dict()}})})


TYPES = _types_schema()


def _builder_schemas() -> dict[str, pa.Schema]:
    """Every schema a builder writes a config with: module-level schemas (and dicts of them), and the two made at
    build time with a datasets file feature."""
    modules = [locus_records, fic_records, pusht_records, rolebench_records, clovr_build, tar_build, video_release,
               frameselect_tables, geometry_dataset, ipg_report, locus_analysis_score]
    schemas = {}
    for module in modules:
        for name, value in vars(module).items():
            items = value.items() if isinstance(value, dict) else [("", value)]
            schemas |= {f"{module.__name__}.{name}{'.' + key if key else ''}": schema for key, schema in items
                        if isinstance(schema, pa.Schema)}
    schemas["pusht frames (Image)"] = pusht_records.with_image(pusht_records.FRAMES)
    schemas["video release videos (Video)"] = video_release.video_schema(video_release.VIDEOS_FIELDS)
    return schemas


BUILDER_SCHEMAS = _builder_schemas()


def _configs(schema: pa.Schema = TYPES) -> list[hubfolder.ConfigSpec]:
    """A default config with rows in two splits (one of them empty), an empty config, one with no shards at all and
    a single-split config with several shards."""
    def shard(split: str, rows: int, i: int = 0, n: int = 1) -> hubfolder.Shard:
        return hubfolder.Shard(f"data/x/{split}-{i:05d}-of-{n:05d}.parquet", rows, 100 + rows, "0" * 64, 300 * rows)

    return [hubfolder.ConfigSpec("rows", schema, "Rows.", {"train": [shard("train", 3)], "test": [shard("test", 0)]},
                                 default=True),
            hubfolder.ConfigSpec("empty", schema, "Nothing.", {"train": [shard("train", 0)]}),
            hubfolder.ConfigSpec("unwritten", schema, "No shards."),
            hubfolder.ConfigSpec("big", schema.remove(0), "", {"validation": [shard("validation", 40_000, i, 3)
                                                                               for i in range(3)]})]


def _huggingface_hub_text(configs: list[hubfolder.ConfigSpec], meta: Mapping[str, Any], body: str) -> str:
    """What huggingface_hub's DatasetCard writes from DatasetCardData, each config's features as datasets declares
    them for its Arrow schema: the reference (the card module's former path). The configs and split sizes are the
    header's own; reading the card back with datasets checks them (below)."""
    header = hubfolder.card_header(configs, meta)  # only the features are replaced
    infos = [{**info, "features": datasets.Features.from_arrow_schema(spec.schema)._to_yaml_list()}
             for info, spec in zip(header["dataset_info"], configs, strict=True)]
    data = DatasetCardData(
        pretty_name=meta["pretty_name"], license=meta["license"], language=meta.get("language", ["en"]),
        task_categories=meta["task_categories"], size_categories=header["size_categories"],
        tags=meta.get("tags", []), configs=header["configs"], dataset_info=infos)
    return str(DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{body.strip()}\n"))


@pytest.mark.parametrize("meta", METAS.values(), ids=METAS.keys())
def test_the_card_is_what_huggingface_hub_writes(meta: dict, tmp_path: Path) -> None:
    hubfolder.write_card(tmp_path, _configs(), meta, BODY)
    assert (tmp_path / "README.md").read_bytes().decode() == _huggingface_hub_text(_configs(), meta, BODY)


@pytest.mark.parametrize("schema", BUILDER_SCHEMAS.values(), ids=BUILDER_SCHEMAS.keys())
def test_every_builder_schema_is_declared_as_datasets_declares_it(schema: pa.Schema) -> None:
    assert card_text(_configs(schema), LOCUS, "Prose.") == _huggingface_hub_text(_configs(schema), LOCUS, "Prose.")


def test_the_card_reads_back_with_datasets(tmp_path: Path) -> None:
    """What datasets reads from the header: every config declared with its data files, splits, row counts and
    features (the file features included)."""
    configs = _configs()
    hubfolder.write_card(tmp_path, configs, LOCUS, BODY)
    card = DatasetCard.load(tmp_path / "README.md")
    declared = MetadataConfigs.from_dataset_card_data(card.data)
    infos = datasets.info.DatasetInfosDict.from_dataset_card_data(card.data)
    assert list(declared) == list(infos) == [spec.name for spec in configs]
    assert [name for name, config in declared.items() if config.get("default")] == ["rows"]
    for spec in configs:
        splits = spec.shards or {"train": []}
        assert [f["split"] for f in declared[spec.name]["data_files"]] == list(splits)
        assert {name: split.num_examples for name, split in infos[spec.name].splits.items()} == {
            split: spec.rows(split) for split in splits}
        assert infos[spec.name].features == datasets.Features.from_arrow_schema(spec.schema)
    assert isinstance(infos["rows"].features["image"], datasets.Image)
    assert isinstance(infos["rows"].features["video"], datasets.Video)
    assert card.text.strip() == BODY.strip()


@pytest.mark.parametrize(("field", "where"), [
    (pa.field("at", pa.timestamp("us")), "column 'at' has Arrow type timestamp[us]"),
    (pa.field("when", pa.list_(pa.struct([("t", pa.date32())]))), "column 'when[].t' has Arrow type date32"),
    (pa.field("codes", pa.dictionary(pa.int8(), pa.string())), "column 'codes' has Arrow type dictionary"),
    (pa.field("pairs", pa.map_(pa.string(), pa.int64())), "column 'pairs' has Arrow type map<string, int64>"),
])
def test_a_type_the_card_cannot_declare_is_an_error_naming_the_column(field: pa.Field, where: str,
                                                                      tmp_path: Path) -> None:
    spec = hubfolder.ConfigSpec("odd", pa.schema([pa.field("id", pa.string()), field]), "Odd.")
    with pytest.raises(ValueError, match=re.escape(f"config 'odd' {where}")):
        hubfolder.write_card(tmp_path, [spec], LOCUS, "Prose.")
    assert not (tmp_path / "README.md").exists()


def test_a_datasets_feature_the_card_cannot_declare_is_an_error_naming_the_column(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("label", pa.int64()), pa.field("frames", pa.list_(FILE_STRUCT)),
                        pa.field("required", FILE_STRUCT, nullable=False)])
    named = {"label": datasets.ClassLabel(names=["no", "yes"]), "frames": datasets.List(datasets.Image()),
             "required": datasets.Image()}  # datasets would declare a non-nullable column a plain struct
    for column, feature in named.items():
        recorded = schema.with_metadata({"huggingface": json.dumps(
            {"info": {"features": datasets.Features({column: feature}).to_dict()}})})
        with pytest.raises(ValueError, match=f"config 'odd' column '{column}' is the datasets feature"):
            hubfolder.write_card(tmp_path, [hubfolder.ConfigSpec("odd", recorded, "Odd.")], LOCUS, "Prose.")


def test_building_a_folder_imports_neither_datasets_nor_huggingface_hub(tmp_path: Path) -> None:
    """The LOCUS sample build (card, Croissant, manifest) in a fresh process: neither library is loaded."""
    code = ("import sys; from pathlib import Path; from neurips26.corpora import RESOURCES; "
            "RESOURCES.get('locus')(out=Path(sys.argv[1])); "
            "print(sorted(m for m in ('datasets', 'huggingface_hub', 'mlcroissant') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "locus")], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "locus" / "README.md").is_file()
    assert result.stdout.strip().splitlines()[-1] == "[]"
