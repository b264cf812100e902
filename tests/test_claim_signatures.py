"""The failure-signatures claim: the intervention position_bias names against random same-cost interventions, on the
embedded model's LOCUS multiple-choice failures."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import run_claim  # noqa: E402
from claims.signatures import documents, locus_folder  # noqa: E402


@pytest.fixture(scope="module")
def embedded_model() -> None:
    pytest.importorskip("transformers")
    try:
        from neurips26 import models

        models.gguf_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


def test_prompts_are_the_task_yamls_and_seeds_share_out_the_documents(embedded_model: None) -> None:
    folder = locus_folder()
    seen: list[int] = []
    for index in range(3):
        docs, delimiter = documents(folder, "locus_domain", ("test",), index, 3, None)
        seen += [d["doc_id"] for d in docs]
        assert delimiter == " " and all(d["letters"] == ["A", "B", "C", "D"] for d in docs)
        assert all(d["prompt"].startswith("Ordinance section ") and d["prompt"].endswith("\nAnswer:") for d in docs)
        assert all(0 <= d["gold"] < 4 and "\nA. " in d["prompt"] and "\nD. " in d["prompt"] for d in docs)
    assert sorted(seen) == list(range(len(seen))) and len(seen) > 30  # every test document once, in one seed


def test_tiny_run_pairs_the_named_intervention_with_its_same_cost_control(tmp_path: Path, embedded_model: None,
                                                                          one_torch_thread: None) -> None:
    run_claim("signatures", scale="tiny", seeds=3, out=tmp_path)
    written = json.loads((tmp_path / "signatures.json").read_text())
    assert written["name"] == "signatures" and written["scale"] == "tiny" and written["seeds"] == [0, 1, 2]
    named, random = written["arms"]["named"], written["arms"]["random"]
    assert named["compute"]["train_steps"] == random["compute"]["train_steps"] == 0
    assert named["n_items"] == random["n_items"] and named["compute"]["prompts_per_item"] in (0.0, 5.0)
    assert abs(named["compute"]["changed_tokens_per_extra_prompt"]
               - random["compute"]["changed_tokens_per_extra_prompt"]) <= 1  # the same prompt change size
    assert set(written["conditions"]) == {"all items", "random line order"}
    for row in written["per_seed_task"]:
        assert row["affected"] <= row["documents"] == 3
        assert (row["affected"] > 0) == ("position_bias" in row["fired"])
        assert set(row["accuracy_after"]) == {"named", "random_tokens", "random_line_order"}
    assert all(-1 <= v <= 1 for v in named["values"] + random["values"])


def test_the_committed_default_results_file_is_the_claims_own() -> None:
    res = json.loads((ROOT / "bench" / "results" / "signatures.json").read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py signatures --scale default --seeds {len(res['seeds'])}"
    assert res["arms"]["named"]["compute"]["train_steps"] == res["arms"]["random"]["compute"]["train_steps"]
