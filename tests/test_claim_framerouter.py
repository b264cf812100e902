"""The framerouter claim: routed budgets against a fixed budget at the same mean, on CLoVR and TAR."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import run_claim  # noqa: E402
from claims.framerouter import BUDGETS  # noqa: E402


def test_tiny_run_routes_at_exactly_the_fixed_mean_budget(tmp_path: Path) -> None:
    pytest.importorskip("av")
    run_claim("framerouter", scale="tiny", seeds=3, out=tmp_path)
    res = json.loads((tmp_path / "framerouter.json").read_text())
    assert res["scale"] == "tiny" and set(res["arms"]) == {"framerouter", "fixed", "fixed_policy"}
    assert set(res["conditions"]) == {f"{bench}@{b}" for bench in ("clovr", "tar") for b in BUDGETS["tiny"]}
    for name, cond in res["conditions"].items():
        arms = cond["arms"]
        assert arms["framerouter"]["compute"] == arms["fixed"]["compute"] == {"train_steps": 0}
        assert arms["framerouter"]["n_items"] == arms["fixed"]["n_items"] and min(arms["fixed"]["n_items"]) > 0
        reference = int(name.split("@")[1])
        assert res["routed_budgets"][name]["mean"] == [reference] * 3  # the same mean budget, exactly
    main = res["arms"]["fixed"]["n_items"]  # the main comparison pools both benchmarks' questions
    assert main == [a + b for a, b in zip(res["conditions"]["clovr@4"]["arms"]["fixed"]["n_items"],
                                          res["conditions"]["tar@4"]["arms"]["fixed"]["n_items"], strict=True)]


def test_the_committed_default_results_file_is_the_claims_own() -> None:
    res = json.loads((ROOT / "bench" / "results" / "framerouter.json").read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py framerouter --scale default --seeds {len(res['seeds'])}"
    assert set(res["conditions"]) == {f"{bench}@{b}" for bench in ("clovr", "tar") for b in BUDGETS["default"]}
    lo, _ = res["ci95"]
    assert res["verdict"] == ("reproduced" if lo > 0 else "not reproduced")


def test_the_perfect_perception_answerer_by_hand() -> None:
    import numpy as np
    from neurips26.methods.frameselect.benchmarks import Question
    from neurips26.methods.frameselect.evaluators import Placed, oracle_answer

    q = Question("clovr", "q", "?", "level", ["a", "b"], ["a.mp4", "b.mp4"], [(0, 2.0, 4.0), (1, 10.0, 12.0)],
                 "A", ["x", "y", "z", "w"])
    both = Placed(np.array([0, 1]), np.array([3.0, 11.0]))
    one = Placed(np.array([0, 0]), np.array([3.0, 11.0]))
    assert oracle_answer(q, both) == 1.0 and oracle_answer(q, one) == 0.25  # a guess among 4 options
    free = Question("tar", "t", "When?", "temporal_localization", ["a"], ["a.mp4"], [(0, 2.0, 4.0)])
    assert oracle_answer(free, Placed(np.array([0]), np.array([5.0]))) == 0.0  # a span cannot be guessed
    assert oracle_answer(Question("tar", "n", "?", "bcq", ["a"], ["a.mp4"]), one) is None  # no evidence
