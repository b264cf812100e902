"""The bgrpo claim: GRPO on a frozen answerer's reward against SFT-only at equal steps, on generated CLoVR."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.bgrpo import BUDGETS, SETTINGS  # noqa: E402
from claims.core import run_claim  # noqa: E402


def test_tiny_run_compares_grpo_with_sft_only_at_equal_steps_per_budget(tmp_path: Path) -> None:
    pytest.importorskip("av")
    run_claim("bgrpo", scale="tiny", seeds=3, out=tmp_path)
    res = json.loads((tmp_path / "bgrpo.json").read_text())
    assert res["scale"] == "tiny" and res["seeds"] == [0, 1, 2] and res["direction"] == "higher"
    assert set(res["arms"]) == {"grpo", "sft"} and set(res["conditions"]) == {f"budget={b}" for b in BUDGETS[1:]}
    assert res["training"]["lr"] == SETTINGS["tiny"].lr
    for arms in [res["arms"], res["conditions"]["budget=16"]["arms"]]:
        assert arms["grpo"]["compute"] == arms["sft"]["compute"] and arms["grpo"]["compute"]["train_steps"] > 0
        assert arms["grpo"]["n_items"] == arms["sft"]["n_items"] and min(arms["grpo"]["n_items"]) > 0
        assert all(0 <= v <= 1 for v in arms["grpo"]["values"] + arms["sft"]["values"])
    assert res["verdict"] in ("reproduced", "not reproduced")
    every = res["all_arms"]["budget=8"]
    assert set(every) == {"grpo", "sft", "prior", "uniform", "mmr"}
    assert every["prior"]["train_steps"] < every["grpo"]["train_steps"] == every["sft"]["train_steps"]
    assert all(0 < c < 1 for c in res["reward_confidence"]["budget=8"])  # fitted on the held-out questions
    assert all(len(curve) > 0 for curve in res["grpo_reward_curve"]["budget=8"])


def test_the_committed_default_results_file_is_the_claims_own() -> None:
    res = json.loads((ROOT / "bench" / "results" / "bgrpo.json").read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py bgrpo --scale default --seeds {len(res['seeds'])}"
    assert res["arms"]["grpo"]["compute"] == res["arms"]["sft"]["compute"]
    lo, _ = res["ci95"]
    assert res["verdict"] == ("reproduced" if lo > 0 else "not reproduced")
