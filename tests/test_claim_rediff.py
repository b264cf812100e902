"""The ReDiff claim: ReDiff against the base masked-diffusion LM at equal total training steps, at every
tokens-per-step value, on generated addition with long carry chains."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from neurips26.methods.rediff.cascade import speeds
from neurips26.methods.rediff.data import carry_chain, generate
from neurips26.methods.rediff.experiment import train_arms
from neurips26.methods.rediff.schedule import Schedule

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import run_claim  # noqa: E402
from claims.rediff import CASCADE_DROP, SCALES, headline  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # the cores are shared (tests/conftest.py)


def test_tiny_run_writes_every_tokens_per_step_condition_at_equal_compute(tmp_path: Path) -> None:
    res = run_claim("rediff", scale="tiny", seeds=3, out=tmp_path)
    written = json.loads((tmp_path / "rediff.json").read_text())
    assert written["name"] == "rediff" and written["scale"] == "tiny" and written["seeds"] == [0, 1, 2]
    schedule, n_problems = SCALES["tiny"]
    ks = speeds(schedule.digits + 1)
    assert set(written["arms"]) == {"base", "rediff", "rediff-no-revision"}
    assert written["arms"]["rediff"]["compute"]["train_steps"] == written["arms"]["base"]["compute"]["train_steps"] \
        == schedule.total_steps
    assert written["arms"]["rediff"]["n_items"] == written["arms"]["base"]["n_items"] == [n_problems] * 3
    assert set(written["conditions"]) == {f"tokens_per_step={k}" for k in ks}
    top = written["headline_tokens_per_step"]
    assert top in ks and written["arms"] == written["conditions"][f"tokens_per_step={top}"]["arms"]
    assert written["effect"] == written["conditions"][f"tokens_per_step={top}"]["effect"]
    for k in ks:
        cond = written["conditions"][f"tokens_per_step={k}"]
        assert cond["arms"]["rediff"]["compute"]["train_steps"] == cond["arms"]["base"]["compute"]["train_steps"]
        # ReDiff revises in one more pass than its commit steps; the base commits without revising
        assert cond["arms"]["rediff"]["compute"]["decoding_passes"] == -(-(schedule.digits + 1) // k) + 1
        assert cond["arms"]["base"]["compute"]["decoding_passes"] == -(-(schedule.digits + 1) // k)
        curve = written["curve"][str(k)]
        assert curve["base"] == pytest.approx(cond["arms"]["base"]["mean"])
        assert curve["rediff"] - curve["base"] == pytest.approx(cond["effect"])
        assert written["base_drop"][str(k)] == pytest.approx(written["curve"]["1"]["base"] - curve["base"])
    assert res["verdict"] in ("reproduced", "not reproduced")


def test_the_headline_is_the_largest_tokens_per_step_where_the_base_cascades() -> None:
    ks = [1, 2, 4, 7]
    assert headline(ks, {1: 0.99, 2: 0.97, 4: 0.90, 7: 0.93})[0] == 7
    assert headline(ks, {1: 0.99, 2: 0.97, 4: 0.90, 7: 0.99 - CASCADE_DROP / 2})[0] == 4
    top, rule = headline(ks, {1: 0.9, 2: 0.9, 4: 0.9, 7: 0.9})
    assert top == 7 and rule.startswith("no k")


def test_the_problems_carry_along_long_chains_and_their_answers_are_exact() -> None:
    problems = generate(2000, 6, seed=3)
    a = [int("".join(map(str, row))) for row in problems.prompts[:, :6]]
    b = [int("".join(map(str, row))) for row in problems.prompts[:, 7:13]]
    answers = [int("".join(map(str, row))) for row in problems.targets]
    assert answers == [x + y for x, y in zip(a, b, strict=True)]
    chains = carry_chain(problems)
    assert (chains >= 3).mean() > 0.3  # half the columns pass a carry on: runs of 3+ are common
    uniform = carry_chain(generate(2000, 6, seed=3, propagate=0.0))
    assert (uniform >= 3).mean() < 0.01
    assert (carry_chain(generate(10, 6, seed=3, propagate=1.0)) == 6).all()


def test_both_arms_receive_the_same_optimiser_steps_from_one_pretrained_model() -> None:
    schedule = Schedule(digits=2, steps=6, stage1_steps=3, stage2_steps=2, batch_size=8, dim=16)
    arms = train_arms(schedule, seed=0)
    assert arms.train_steps("base") == arms.train_steps("rediff") == schedule.total_steps == 11
    assert [c.stage for c in arms.costs["base"]] == ["base", "base-more-1", "base-more-2"]
    assert [c.stage for c in arms.costs["rediff"]] == ["base", "rediff-stage1", "rediff-stage2"]
    assert arms.costs["base"][0] is arms.costs["rediff"][0]  # one shared pre-training
    weights = [dict(m.named_parameters())["head.weight"] for m in (arms.base, arms.stage1, arms.rediff)]
    assert not torch.equal(weights[0], weights[1]) and not torch.equal(weights[1], weights[2])


def test_the_committed_default_results_file_is_the_claims_own() -> None:
    res = json.loads((ROOT / "bench" / "results" / "rediff.json").read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py rediff --scale default --seeds {len(res['seeds'])}"
    assert res["arms"]["rediff"]["compute"]["train_steps"] == res["arms"]["base"]["compute"]["train_steps"] \
        == Schedule().total_steps
    assert res["schedule"] == Schedule().as_dict()
    ks = speeds(Schedule().digits + 1)
    assert set(res["conditions"]) == {f"tokens_per_step={k}" for k in ks} and set(res["curve"]) == {str(k) for k in ks}
    lo, hi = res["ci95"]
    assert res["verdict"] == ("reproduced" if lo > 0 else "not reproduced")
    drops = {int(k): v for k, v in res["base_drop"].items()}
    cascading = [k for k in ks if k > 1 and drops[k] >= CASCADE_DROP]
    assert res["headline_tokens_per_step"] == (max(cascading) if cascading else max(ks))
    assert np.isclose(res["effect"], res["curve"][str(res["headline_tokens_per_step"])]["rediff"]
                      - res["curve"][str(res["headline_tokens_per_step"])]["base"])
