"""LOCUS analysis layer: fines extractor, opacity measure, heads on the gold dev part, the ModernBERT backend
with a tiny random model, the scores config, the LOCUS-v1 round trip and the evaluation sets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus import evalsets, goldset, v1
from neurips26.corpora.locus.records import FUNCTIONS, TOPICS, V1_COLUMNS
from neurips26.methods.locus_analysis import fines, gold, heads, modernbert, opacity, score

from neurips26.errors import UserError
from neurips26.search import search
from neurips26.sql import run_query

# -- fines and jail terms ---------------------------------------------------------------------------------------

FINE_CASES = [  # text, max_fine_usd, fine_per_day, jail_mentioned, max_jail_days
    ("Violators shall be fined not more than $1,000.00.", 1000, False, False, None),
    ("shall be punished by a fine of not less than $50 nor more than $500.", 500, False, False, None),
    ("a fine not to exceed five hundred dollars ($500.00)", 500, False, False, None),
    ("punishable by a fine of one thousand dollars", 1000, False, False, None),
    ("punishable by a fine of two thousand five hundred dollars", 2500, False, False, None),
    ("subject to a civil penalty of no more than $50,000 for each violation, and $250,000 if willful.",
     250000, False, False, None),
    ("a civil penalty of up to $5 million may be imposed", 5_000_000, False, False, None),
    ("shall pay a fine not to exceed $25 for the first violation, $50 for the second, and $100 for each "
     "subsequent violation.", 100, False, False, None),
    ("The permit fee is $250. A late fee of $25 applies.", None, False, False, None),
    ("The annual license fee is $1,000. Any violation is punishable by a fine of $200.", 200, False, False, None),
    ("Each day a violation continues shall constitute a separate offense. Fine: $100.", 100, True, False, None),
    ("A separate violation shall be deemed committed on each day during which a violation occurs.",
     None, True, False, None),
    ("Every day the nuisance continues is a separate and distinct offense.", None, True, False, None),
    ("a penalty of $50 per day until the weeds are cut", 50, True, False, None),
    ("fined up to $1,000 or imprisoned for not more than ninety (90) days, or both", 1000, False, True, 90),
    ("imprisonment for a term not exceeding six months", None, False, True, 180),
    ("punished by up to one year in jail", None, False, True, 365),
    ("confinement in the county jail for not more than 60 days or 2 years for a second offense", None, False, True,
     730),
    ("A dog that bites a person shall be confined and observed for ten days.", None, False, False, None),
    ("Imprisonment shall not exceed 30 days. The owner shall be notified within 90 days.", None, False, True, 30),
    ("The owner shall be notified within 30 days. The inmate work program is not covered.", None, False, False, None),
    ("Any person found guilty shall be subject to a fine or imprisonment, or both, in the discretion of the court.",
     None, False, True, None),
    ("Definitions. As used in this chapter, dwelling means any building used for living.", None, False, False, None),
    ("", None, False, False, None),
]


@pytest.mark.parametrize(("text", "fine", "per_day", "jail", "jail_days"), FINE_CASES)
def test_fines_extractor_on_hand_made_cases(text: str, fine: float | None, per_day: bool, jail: bool,
                                            jail_days: int | None) -> None:
    assert fines.extract(text) == fines.Fines(fine, per_day, jail, jail_days)


def test_number_words_and_bad_input() -> None:
    assert [fines.words_to_number(w) for w in ("ninety", "two hundred fifty", "one thousand five hundred",
                                                "ten thousand", "twenty-five")] == [90, 250, 1500, 10_000, 25]
    with pytest.raises(ValueError, match="'lots'"):
        fines.words_to_number("lots of")
    with pytest.raises(ValueError, match="must be a string, got int"):
        fines.extract(17)  # type: ignore[arg-type]


# -- opacity ----------------------------------------------------------------------------------------------------

PLAIN = "Dogs must be on a leash. Do not let your dog run free. Pick up after your dog."
DENSE = ("Notwithstanding the provisions of section 10-44 hereof, and subject to the requirements set forth in "
         "subsection (b) of this section and chapter 12 of this code, any licensee, as defined in section 10-2, "
         "who, pursuant to the regulations promulgated thereunder, undertakes any activity enumerated herein "
         "shall, prior to the commencement thereof, obtain the authorization contemplated by O.C.G.A. § 36-60-1, "
         "provided that the aforesaid authorization shall not be construed as a waiver of any obligation imposed "
         "by any other provision of this chapter.")


def test_opacity_orders_constructed_texts() -> None:
    plain, dense = opacity.measure(PLAIN), opacity.measure(DENSE)
    assert dense.opacity > plain.opacity
    for feature in opacity.FEATURES:
        assert getattr(dense, feature) > getattr(plain, feature), feature
    # each feature moves the score the documented way, all else close to equal
    one_sentence = "The owner shall keep the yard clean and the owner shall cut the grass and shall remove junk."
    two_sentences = "The owner shall keep the yard clean. The owner shall cut the grass and shall remove junk."
    assert opacity.measure(one_sentence).opacity > opacity.measure(two_sentences).opacity
    referenced = "The owner shall keep the yard clean as required by section 4-12 and chapter 9 of this code."
    assert opacity.features(referenced)["cross_refs"] > opacity.features(two_sentences)["cross_refs"] == 0
    assert opacity.features("")["grade"] == 0.0
    assert [opacity.syllables(w) for w in ("dog", "table", "ordinance", "licensee")] == [1, 2, 3, 3]


# -- heads on the gold dev part ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gold_rows(shared_data: Path) -> list[dict]:
    return gold.read_gold(shared_data / "locus-gold")


def test_heads_cross_validated_on_gold_dev_beat_the_majority_class(gold_rows: list[dict]) -> None:
    pred = gold.default_predictions(gold_rows)  # out of fold, dev only (no weak rows: quick)
    table = {(line.field, line.metric): line for line in gold.evaluate(gold_rows, pred)}
    for name in ("function", "is_substantive", "topic"):
        line = table[(name, "macro-F1")]
        assert line.baseline < line.value <= 1.0, line
        assert line.ceiling is not None and line.ceiling > line.value  # the annotators agree more
    assert table[("opacity", "Spearman")].value > 0.3 and table[("paternalism", "Spearman")].value > 0.2
    assert table[("max_fine_usd", "exact match")].value == 1.0  # the three dev fines, and 87 sections without
    ceilings = gold.ceilings(gold_rows)
    assert 0.8 < ceilings["function"]["kappa"] <= 1 and 0.7 < ceilings["opacity"]["spearman"] <= 1


def test_shipped_heads_load_and_predict_codebook_labels(gold_rows: list[dict]) -> None:
    shipped = heads.Heads.load()
    assert shipped.info["n_gold"] == len(gold_rows) and shipped.function.classes == sorted(FUNCTIONS)
    x = heads.embed([r["heading"] for r in gold_rows[:8]], [r["text"] for r in gold_rows[:8]])
    pred = shipped.predict(x)
    assert set(pred["function"]) <= set(FUNCTIONS) and set(pred["topic"]) <= {*TOPICS, None}
    assert all((t is None) == (not s) for t, s in zip(pred["topic"], pred["is_substantive"], strict=True))


def test_gold_reader_names_file_line_and_field(tmp_path: Path, gold_rows: list[dict]) -> None:
    good = json.dumps(gold_rows[0])
    for line, message in [("{not json", "dev.jsonl:2: not valid JSON"),
                          (json.dumps({"gid": "x"}), "dev.jsonl:2: missing field(s) jurisdiction_id"),
                          (json.dumps({**gold_rows[0], "function_majority": "Rule"}),
                           "dev.jsonl:2: function_majority 'Rule' is not one of Context")]:
        (tmp_path / "dev.jsonl").write_text(good + "\n" + line + "\n")
        with pytest.raises(ValueError, match=re.escape(message)):
            gold.read_gold(tmp_path)
    with pytest.raises(goldset.GoldError, match="nowhere/dev.jsonl: gold set not found"):
        gold.read_gold(tmp_path / "nowhere")


# -- ModernBERT backend with tiny random models -----------------------------------------------------------------

WORDS = ("no person shall keep any dog that runs at large the owner permit fee fine each day zoning district "
         "definitions means building sign license")
HEADINGS = ["Dogs at large", "Permit fee", "Definitions", "Zoning districts", "Penalty"] * 3
TEXTS = ["No person shall keep any dog that runs at large.", "The permit fee is due each year.",
         "Building means any structure.", "The zoning district map is adopted.",
         "A fine of $500 applies; each day is a separate offense."] * 3
SUBSTANTIVE_LABELS = ["Context", "Rules/Zoning", "Process|Other", "Enforcement - Nuisance"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("modernbert")
    labels = {"substantive": SUBSTANTIVE_LABELS, "opacity": None, "paternalism": ["1", "2", "3", "4", "5"],
              "generic": ["LABEL_0", "LABEL_1"]}
    return {name: modernbert.make_random_model(root / name, names, vocab=WORDS.split())
            for name, names in labels.items()}


def test_modernbert_loads_batches_and_maps_labels(tiny: dict[str, Path]) -> None:
    import torch

    m = modernbert.load("substantive", str(tiny["substantive"]), device="cpu")
    assert type(m.model).__name__ == "ModernBertForSequenceClassification"
    one = modernbert.logits(m, HEADINGS, TEXTS, batch_size=1)
    batched = modernbert.logits(m, HEADINGS, TEXTS, batch_size=4)  # padding inside a batch changes nothing
    assert one.shape == (15, 4) and np.allclose(one, batched, atol=1e-4)
    for k, expected in enumerate([{"function": "Context", "is_substantive": None, "topic": None},
                                  {"function": "Rules", "is_substantive": True, "topic": "Zoning"},
                                  {"function": "Process", "is_substantive": True, "topic": "Other"},
                                  {"function": "Enforcement", "is_substantive": True, "topic": "Nuisance"}]):
        with torch.no_grad():  # make class k win, whatever the random weights say
            m.model.classifier.bias.copy_(torch.full((4,), -100.0).index_fill_(0, torch.tensor([k]), 100.0))
        pred = modernbert.predict(m, HEADINGS[:3], TEXTS[:3], batch_size=2)
        assert {f: v[0] for f, v in pred.items()} == expected
        assert all(len(v) == 3 for v in pred.values())
    ordinal = modernbert.load("paternalism", str(tiny["paternalism"]), device="cpu")
    values = modernbert.predict(ordinal, HEADINGS, TEXTS)["paternalism"]
    assert all(1 <= v <= 5 for v in values)  # expected value over the classes "1".."5"
    regression = modernbert.load("opacity", str(tiny["opacity"]), device="cpu")
    assert regression.regression and len(modernbert.predict(regression, HEADINGS, TEXTS)["opacity"]) == 15


def test_modernbert_refuses_what_it_cannot_map(tiny: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'LABEL_0', 'LABEL_1' are not LOCUS labels"):
        modernbert.load("substantive", str(tiny["generic"]), device="cpu")
    with pytest.raises(ValueError, match="single \\(regression\\) output; the substantive axis needs classes"):
        modernbert.load("substantive", str(tiny["opacity"]), device="cpu")
    with pytest.raises(FileNotFoundError, match="opacity model .*empty.*local folder.*cannot be loaded"):
        (tmp_path / "empty").mkdir()
        modernbert.load("opacity", str(tmp_path / "empty"), device="cpu")
    with pytest.raises(ValueError, match="unknown axis 'clarity'"):
        modernbert.load("clarity", str(tiny["opacity"]))
    assert modernbert.parse_label("LABEL_3") == {} and modernbert.parse_label("non-substantive") == {
        "is_substantive": False, "topic": None}


def test_gold_table_for_the_modernbert_backend(tiny: dict[str, Path], shared_data: Path) -> None:
    from typer.testing import CliRunner

    from neurips26.cli import app

    result = CliRunner().invoke(app, ["score", "gold", "--gold", str(shared_data / "locus-gold"), "--backend",
                                      "modernbert", "--model", f"substantive={tiny['substantive']}"])
    assert result.exit_code == 0, result.output
    assert "backend modernbert" in result.output and "max_fine_usd" in result.output


# -- the scores config ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scored")
    locus.build(out=root / "locus")
    score.score_folder(root / "locus")
    return root


def test_scores_config_is_written_and_queryable(scored: Path) -> None:
    import datasets

    folders = {"locus": scored / "locus"}
    counts = run_query("SELECT (SELECT count(*) FROM locus.sections) AS sections, count(*) AS scored, "
                       "count(DISTINCT section_id) AS ids, avg(opacity) AS mean, stddev_pop(opacity) AS sd, "
                       "count(*) FILTER (WHERE topic IS NOT NULL AND NOT is_substantive) AS bad_topics, "
                       "count(*) FILTER (WHERE max_fine_usd > 0) AS fines FROM locus.scores", folders).to_pylist()[0]
    assert counts["sections"] == counts["scored"] == counts["ids"] > 100
    assert abs(counts["mean"]) < 1e-9 and abs(counts["sd"] - 1) < 1e-9 and counts["bad_topics"] == 0
    assert counts["fines"] > 0
    labels = run_query("SELECT DISTINCT function FROM locus.scores", folders).column("function").to_pylist()
    assert set(labels) <= set(FUNCTIONS) and len(labels) >= 3
    v1_rows = pq.read_table(sorted((scored / "locus" / "data" / "locus_v1").glob("*.parquet")))
    scores = pq.read_table(sorted((scored / "locus" / "data" / "scores").glob("*.parquet")))
    assert v1_rows["function"].to_pylist() == scores["function"].to_pylist()  # both in sections order
    assert v1_rows["opacity"].to_pylist() == scores["opacity"].to_pylist()
    loaded = datasets.load_dataset(str(scored / "locus"), "scores", split="train")
    assert loaded.num_rows == counts["scored"] and loaded.features["backend"].dtype == "string"
    manifest = json.loads((scored / "locus" / "manifest.json").read_text())
    assert {"scores", "locus_v1", "sections"} <= set(manifest["configs"])
    assert "| `scores` |" in (scored / "locus" / "README.md").read_text()
    import mlcroissant as mlc

    record_sets = {r.name for r in mlc.Dataset(jsonld=str(scored / "locus" / "croissant.json")).metadata.record_sets}
    assert {"scores", "locus_v1", "sections"} <= record_sets  # raises above on validation errors


def test_task_loaders_read_weak_sets_and_name_the_gold_build(scored: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from neurips26.tasks.locus import utils

    monkeypatch.setenv("NEURIPS26_DATA", str(scored))
    metadata: dict = {"version": 2.0}
    weak = utils.load_config("locus", "topic", metadata)
    assert {"train", "test"} <= set(weak) and set(weak["test"]["answer"]) <= set(TOPICS)
    assert metadata["data"]["resource"] == "locus" and metadata["data"]["config"] == "topic"
    assert metadata["data"]["demo"] is True and len(metadata["data"]["manifest_sha256"]) == 64
    with pytest.raises(UserError, match="no 'function_gold' config.*neurips26 build locus --gold DIR"):
        utils.load_function_gold()  # a task never builds: the gold configs come from `build --gold`
    monkeypatch.setenv("NEURIPS26_DATA", str(tmp_path))
    with pytest.raises(UserError, match="run `neurips26 build locus`"):
        utils.load_topic()


def test_score_bad_input_is_one_clear_line(scored: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from neurips26.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["score", "locus", "--data", str(tmp_path)])
    assert result.exit_code == 2 and "no built locus folder" in result.output
    result = runner.invoke(app, ["score", "locus", "--data", str(scored), "--backend", "bert"])
    assert result.exit_code == 2 and "backend 'bert' is not one of default, modernbert" in result.output
    result = runner.invoke(app, ["score", "locus", "--data", str(scored), "--backend", "modernbert",
                                 "--model", "clarity=/x"])
    assert result.exit_code == 2 and "unknown axis 'clarity'" in result.output
    result = runner.invoke(app, ["score", "gold", "--gold", str(tmp_path)])
    assert result.exit_code == 2 and "gold set not found" in result.output
    with pytest.raises(FileNotFoundError, match="no sections config"):
        score.read_sections(tmp_path)


def test_locus_v1_round_trip_ingest_query_search_score(tmp_path: Path, tiny: dict[str, Path]) -> None:
    """A LOCUS-v1-shaped download: ingested, queried, searched, scored (modernbert), written back, same rows."""
    rows = [{**dict.fromkeys(V1_COLUMNS), "document_id": "ga-adel", "section_index": i, "state": "GA",
             "jurisdiction_name": "City of Adel", "jurisdiction_type": "city", "jurisdiction_geoid": "1300508",
             "represented_county_fips": ["13075"], "represented_county_name": ["Cook County"],
             "header": f"Sec. 6-{i}. - {h}", "content": t, "function": "Rules", "function_votes": 3,
             "annotator1_function": "Rules", "opacity": 0.5}
            for i, (h, t) in enumerate(zip(HEADINGS[:5], TEXTS[:5], strict=True))]
    (tmp_path / "v1" / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=v1.V1_SCHEMA), tmp_path / "v1/data/train-00000.parquet")
    folder = tmp_path / "data" / "locus"
    locus.build(out=folder, from_locus_v1=tmp_path / "v1")
    folders = {"locus": folder}
    assert run_query("SELECT count(*) AS n FROM locus.sections", folders)["n"].to_pylist() == [5]
    assert search(folder, "dog at large", limit=1)["section_id"].to_pylist() == ["ga-adel:0"]
    models = {axis: str(tiny[axis]) for axis in ("substantive", "opacity", "paternalism")}
    scores = score.score_folder(folder, backend="modernbert", models=models, batch_size=2)
    assert set(scores["backend"].to_pylist()) == {"modernbert+default"}  # discretion, salience from the default
    back = pq.read_table(sorted((folder / "data" / "locus_v1").glob("*.parquet"))).to_pylist()
    identity = ("document_id", "section_index", "state", "jurisdiction_name", "jurisdiction_geoid",
                "represented_county_fips", "header", "content")
    assert [{k: r[k] for k in identity} for r in back] == [{k: r[k] for k in identity} for r in rows]
    assert [r["function"] for r in back] == scores["function"].to_pylist()
    assert [r["opacity"] for r in back] == pytest.approx(scores["opacity"].to_pylist())
    assert all(r["function_votes"] is None and r["annotator1_function"] is None for r in back)  # not ours
    assert pq.read_table(sorted((folder / "data" / "v1_source").glob("*.parquet")))["function"].to_pylist() == [
        "Rules"] * 5  # the released labels are kept


# -- evaluation sets for the lm-eval tasks ----------------------------------------------------------------------


def test_weak_and_gold_task_sets(tmp_path: Path, shared_data: Path) -> None:
    out = tmp_path / "locus"
    locus.build(out=out, gold=shared_data / "locus-gold")
    manifest = json.loads((out / "manifest.json").read_text())
    assert "gold/dev.jsonl" in manifest["inputs"]["sha256"]
    for task in ("function", "topic"):
        weak = {s: pq.read_table(sorted((out / "data" / task).glob(f"{s}-*.parquet"))).to_pylist()
                for s in evalsets.SPLITS}
        assert weak["train"] and weak["test"], task
        assert not {r["jurisdiction_id"] for r in weak["test"]} & {r["jurisdiction_id"] for r in weak["train"]}
        assert all(evalsets.OPTIONS[task][r["label"]] == r["answer"] for split in weak.values() for r in split)
    gold_test = {t: pq.read_table(sorted((out / "data" / f"{t}_gold").glob("test-*.parquet"))).to_pylist()
                 for t in ("function", "topic", "substantive")}
    assert [len(rows) for rows in gold_test.values()] == [90, 75, 90]
    assert {r["label_source"] for rows in gold_test.values() for r in rows} == {"gold"}
    def train(config: str) -> list[dict]:
        return pq.read_table(sorted((out / "data" / config).glob("train-*.parquet"))).to_pylist()

    assert train("function_gold") == train("function")
