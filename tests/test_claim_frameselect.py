"""The frameselect claim: the held-out-chosen training-free selector against uniform, per budget."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import run_claim  # noqa: E402
from claims.frameselect import BUDGETS, best, candidates  # noqa: E402


def test_the_best_is_chosen_among_training_free_selectors_by_held_out_accuracy() -> None:
    names = candidates()
    assert "bgrpo" not in names and "uniform" not in names and len(names) >= 15
    accuracy = dict.fromkeys(names, 0.5)
    assert best(accuracy) == names[0]  # ties: first by name
    accuracy[names[-1]] = 0.9
    assert best(accuracy) == names[-1]


def test_tiny_run_pairs_the_best_with_uniform_at_every_budget(tmp_path: Path) -> None:
    pytest.importorskip("av")
    run_claim("frameselect", scale="tiny", seeds=3, out=tmp_path)
    res = json.loads((tmp_path / "frameselect.json").read_text())
    assert res["scale"] == "tiny" and set(res["arms"]) == {"best", "uniform"}
    assert set(res["conditions"]) == {f"budget={b}" for b in BUDGETS[1:]}
    for arms in [res["arms"]] + [c["arms"] for c in res["conditions"].values()]:
        assert arms["best"]["compute"] == arms["uniform"]["compute"] == {"train_steps": 0}
        assert arms["best"]["n_items"] == arms["uniform"]["n_items"] and min(arms["best"]["n_items"]) > 0
    for b in BUDGETS:
        chosen, held = res["chosen"][f"budget={b}"], res["held_out_accuracy"][f"budget={b}"]
        assert chosen in candidates() and held[chosen] == max(held[n] for n in candidates())
    assert "held-out" in res["chosen_on"]


def test_the_committed_default_results_file_is_the_claims_own() -> None:
    res = json.loads((ROOT / "bench" / "results" / "frameselect.json").read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py frameselect --scale default --seeds {len(res['seeds'])}"
    assert set(res["conditions"]) == {"budget=16", "budget=32"}
    lo, _ = res["ci95"]
    assert res["verdict"] == ("reproduced" if lo > 0 else "not reproduced")


def test_the_readout_answers_each_release_with_its_own_backgrounds() -> None:
    """Generated releases reuse video ids; answering one release first must not change another's answers."""
    pytest.importorskip("av")
    from frameselect_readout import ReadoutAnswerer
    from frameselect_sets import questions

    held_qs, held_pools = questions("clovr", "held_out", 0, "tiny")
    test_qs, test_pools = questions("clovr", "test", 0, "tiny")
    assert set(held_qs[0].video_ids) == set(test_qs[0].video_ids)  # the ids clash; the videos differ
    both, fresh = ReadoutAnswerer(), ReadoutAnswerer()
    every = [list(range(p.n)) for p in held_pools]
    for q, p, c in zip(held_qs, held_pools, every, strict=True):
        both.answer(q, p, c)
    after = [both.answer(q, p, list(range(p.n))) for q, p in zip(test_qs, test_pools, strict=True)]
    alone = [fresh.answer(q, p, list(range(p.n))) for q, p in zip(test_qs, test_pools, strict=True)]
    assert after == alone
    assert sum(a == q.answer for a, q in zip(alone, test_qs, strict=True)) > len(test_qs) / 4  # above chance
