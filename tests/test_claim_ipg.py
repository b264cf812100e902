"""The IPG claim end to end at tiny scale (a tiny random Llama), and its rank-agreement statistic."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import VERDICTS, load_all, run_claim  # noqa: E402
from claims.ipg import (  # noqa: E402
    GRADIENT,
    METHOD,
    RANDOM,
    SCALES,
    CharTokens,
    encode,
    expected_accuracy,
    load,
    rank_agreement,
    spearman,
)
from neurips26.methods.ipg.arithmetic import carry_additions  # noqa: E402
from neurips26.methods.ipg.exact import answer_probability  # noqa: E402
from neurips26.methods.ipg.scaling import neuron_sites  # noqa: E402
from neurips26.methods.ipg.shared import SharedPolicy  # noqa: E402


def test_tiny_claim_writes_paired_arms_at_equal_compute(tmp_path: Path) -> None:
    load_all()
    res = run_claim("ipg", scale="tiny", seeds=3, out=tmp_path)
    assert json.loads((tmp_path / "ipg.json").read_text())["verdict"] == res["verdict"] in VERDICTS
    tiny = SCALES["tiny"]
    assert res["method_arm"] == METHOD and res["baseline_arm"] == RANDOM and res["scale"] == "tiny"
    assert set(res["conditions"]) == {f"k={k}" for k in tiny.ks if k != tiny.headline} and res["headline_k"] == 4
    for block in [res, *res["conditions"].values()]:
        arms = block["arms"]
        assert set(arms) == {METHOD, RANDOM, GRADIENT}
        assert {a["compute"]["train_steps"] for a in arms.values()} == {0}
        assert len({json.dumps(a["compute"], sort_keys=True) for a in arms.values()}) == 1
        assert all(a["n_items"] == [tiny.evaluate] * 3 and len(a["values"]) == 3 for a in arms.values())
        low, high = block["ci95"]
        assert low <= block["effect"] <= high
        assert block["effect"] == np.mean(arms[METHOD]["values"]) - np.mean(arms[RANDOM]["values"])
    for name in ("ipg", "attribution_patching"):
        agreement = res["rank_agreement"][name]
        assert -1 <= agreement["ci95"][0] <= agreement["ci95"][1] <= 1 and len(agreement["per_seed"]) == 3
    assert set(res["ipg_minus_attribution_patching"]) == {"k=4", "k=16"}
    assert res["task"]["items"] == 45 and 0 <= res["task"]["expected_accuracy"] <= 1
    assert "tiny randomly initialised" in res["model"]


def test_rank_agreement_bootstraps_over_seeds_and_items() -> None:
    rng = np.random.default_rng(0)
    truth = rng.normal(size=(3, 5, 12))  # seeds x items x units
    same = rank_agreement(list(truth), list(2 * truth + 1), draws=200)
    assert same["spearman"] == 1.0 and same["ci95"] == [1.0, 1.0]
    flipped = rank_agreement(list(truth), list(-truth), draws=200)
    assert flipped["spearman"] == -1.0
    noisy = rank_agreement(list(truth), list(truth + rng.normal(size=truth.shape)), draws=200)
    assert 0 < noisy["ci95"][0] < noisy["spearman"] < noisy["ci95"][1] <= 1
    assert spearman(np.array([1.0, 2, 3]), np.array([5.0, 5, 5])) == 0.0


def test_task_accuracy_is_the_exact_answer_probability() -> None:
    model, tokens, _ = load(SCALES["tiny"])
    assert isinstance(tokens, CharTokens)
    items = [(encode(tokens, p), encode(tokens, a)) for p, a in carry_additions()[:6]]
    policy = SharedPolicy(model, neuron_sites(model, [2]), max_new_tokens=2)
    expected = [answer_probability(policy, p, a, torch.ones(1, policy.n_components))[0] for p, a in items]
    np.testing.assert_allclose(expected_accuracy(model, items), expected, rtol=1e-4)
