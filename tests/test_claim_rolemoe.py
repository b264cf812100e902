"""The RoleMoE claim end to end at tiny scale (the embedded sample, a tiny Llama trained from scratch)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import VERDICTS, load_all, run_claim  # noqa: E402
from claims.rolemoe import SETTINGS, SPLITS  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_tiny_claim_compares_rolemoe_and_gradient_difference_at_equal_steps(tmp_path: Path) -> None:
    load_all()
    res = run_claim("rolemoe", scale="tiny", seeds=3, out=tmp_path)
    assert json.loads((tmp_path / "rolemoe.json").read_text())["verdict"] == res["verdict"] in VERDICTS
    tiny = SETTINGS["tiny"]
    steps = tiny["model"].steps + tiny["stage1"] + tiny["stage2"]
    assert res["method_arm"] == "rolemoe" and res["baseline_arm"] == "grad_diff"
    assert set(res["conditions"]) == set(SPLITS)
    for block in [res, *res["conditions"].values()]:
        arms = block["arms"]
        assert set(arms) == {"rolemoe", "grad_diff"}
        assert {a["compute"]["train_steps"] for a in arms.values()} == {steps}
        assert all(len(a["values"]) == 3 and all(0 <= v <= 1 for v in a["values"]) for a in arms.values())
        assert block["ci95"][0] <= block["effect"] <= block["ci95"][1]
        difference = np.mean(arms["rolemoe"]["values"]) - np.mean(arms["grad_diff"]["values"])
        assert block["effect"] == pytest.approx(difference)
    for split in SPLITS:  # the headline is the mean over the forget sets, seed by seed
        routing = res["routing"][split]
        assert routing["exclusive"] and 0 <= routing["purity_mean"] <= 1 and len(routing["n_experts_used"]) == 3
        assert routing["experts"] >= len(res["roles"])  # one expert per role
        assert set(res["reference_parts"][split]) >= {"forget_style", "retain_rougeL", "ppl"}
    mean = np.mean([[res["conditions"][s]["arms"]["rolemoe"]["values"][i] for s in SPLITS] for i in range(3)], 1)
    assert res["arms"]["rolemoe"]["values"] == pytest.approx(list(mean))
