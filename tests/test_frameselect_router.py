"""FrameRouter: integer per-question budgets whose mean is the reference budget exactly, demand cues, routing."""

from __future__ import annotations

import numpy as np
import pytest
from neurips26.methods.frameselect import SELECTORS, Pool
from neurips26.methods.frameselect.router import BANK, allocate, demand, policy, route


@pytest.mark.parametrize("seed", range(20))
def test_mean_budget_is_exactly_the_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    reference = int(rng.choice([1, 2, 8, 16, 32, 64]))
    b_min = int(rng.integers(1, reference + 1))
    b_max = int(rng.integers(reference, 5 * reference + 1))
    demands = rng.random(n) ** 3
    budgets = allocate(demands, reference, b_min, b_max)
    assert budgets.dtype == np.int64 and len(budgets) == n
    assert int(budgets.sum()) == reference * n  # mean == reference exactly, in integers
    assert budgets.min() >= b_min and budgets.max() <= b_max
    order = np.argsort(demands)
    assert np.all(np.diff(budgets[order]) >= 0)  # more demand never gets fewer frames


def test_budgets_follow_demand_and_respect_bounds() -> None:
    budgets = allocate([0.1, 0.1, 0.9, 0.9], reference=16, b_min=4, b_max=64)
    assert budgets.sum() == 64 and budgets[2] > budgets[0] and budgets[0] >= 4
    extreme = allocate([1000.0, 0.0, 0.0, 0.0], reference=8, b_min=2, b_max=20)
    assert extreme.tolist() == [20, 4, 4, 4]  # the clipped excess is shared by the others


@pytest.mark.parametrize(("demands", "reference", "b_min", "b_max", "expected"), [
    ([0.7], 16, 1, 64, [16]),  # one question: its budget is the reference
    ([0.3, 0.3, 0.3], 8, 1, 32, [8, 8, 8]),  # equal demands: uniform
    ([0.0, 0.0], 8, 1, 32, [8, 8]),  # no demand at all: uniform
    ([0.1, 0.9, 0.5], 8, 8, 8, [8, 8, 8]),  # b_min = b_max = reference
    ([0.0, 1.0], 4, 4, 16, [4, 4]),  # b_min = reference: nobody can give frames away
    ([], 8, 1, 32, []),
])
def test_edge_cases(demands: list[float], reference: int, b_min: int, b_max: int, expected: list[int]) -> None:
    assert allocate(demands, reference, b_min, b_max).tolist() == expected


def test_caps_from_pool_sizes_keep_the_mean() -> None:
    budgets = allocate([0.9, 0.9, 0.1, 0.1], reference=10, b_min=1, b_max=40, caps=[12, 12, 100, 100])
    assert budgets.sum() == 40 and budgets[0] <= 12 and budgets[1] <= 12
    assert budgets.tolist() == [12, 12, 8, 8]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"demands": [0.5, 0.5], "reference": 8, "b_min": 9, "b_max": 16}, "b_min=9, reference=8"),
    ({"demands": [0.5, 0.5], "reference": 8, "b_min": 1, "b_max": 4}, "b_max=4"),
    ({"demands": [0.5, float("nan")], "reference": 8}, "finite"),
    ({"demands": [0.5, -1.0], "reference": 8}, ">= 0"),
    ({"demands": [0.5, 0.5], "reference": 8, "caps": [4, 4]}, "hold only 8"),
    ({"demands": [0.5, 0.5], "reference": 8, "caps": [4]}, "caps has 1 entries"),
])
def test_bad_input_is_refused_with_the_values(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        allocate(**kwargs)


def _pool(n: int, peaked: bool, videos: int = 1) -> Pool:
    rng = np.random.default_rng(0)
    features = rng.normal(size=(n, 8))
    features /= np.linalg.norm(features, axis=1, keepdims=True)
    query = features[n // 2] if peaked else np.full(8, 0.0)
    if not peaked:
        query[0] = 1.0
        features[:, 0], features[:, 1:] = 1.0, 0.0  # every candidate equally relevant
    index = np.repeat(np.arange(videos), n // videos)
    return Pool(times=np.tile(np.arange(n // videos, dtype=float), videos), duration=float(n),
                video_ids=[f"v{k}" for k in range(videos)], video_index=index, features=features,
                query="q", query_features=query)


def test_demand_cues() -> None:
    assert demand("How many cars appear in every video?") > demand("When does the red car stop?")
    assert demand("What happens?", n_videos=3) > demand("What happens?", n_videos=1)
    assert demand("What happens?", pool=_pool(60, peaked=False)) > demand("What happens?", pool=_pool(60, peaked=True))
    assert 0.0 <= demand("") <= 1.0


def test_route_selects_per_question_budgets_with_the_reference_mean() -> None:
    pools = [_pool(60, peaked=True), _pool(60, peaked=False), _pool(90, peaked=False, videos=3), _pool(60, True)]
    queries = ["When does the red car stop?", "Describe every vehicle in the scene.",
               "In how many of the 3 videos does the red car appear?", "What type of anomaly is it?"]
    routed = route(queries, pools, reference=12, seed=0)
    assert sum(r.budget for r in routed) == 12 * len(pools)
    assert all(len(r.selection.indices) == r.budget for r in routed)
    assert routed[2].budget > routed[0].budget  # the broad multi-video question gets more frames
    bank = {name for _, names in BANK for name in names}
    assert all(r.policy in bank and r.policy in SELECTORS for r in routed)
    assert policy(0.0, pools[0]) != "uniform" and policy(1.0, pools[0]) == "uniform"


def test_route_refuses_mismatched_inputs() -> None:
    with pytest.raises(ValueError, match="2 queries for 1 pools"):
        route(["a", "b"], [_pool(10, True)], reference=4)
