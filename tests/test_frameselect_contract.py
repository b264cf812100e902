"""The selector contract, property-based: every registered selector returns exactly ``budget`` distinct
in-range positions on any pool with at least ``budget`` candidates, duplicated frames included; a refusal
is only the named needs reason; FrameRouter keeps the mean budget exact when pools are small."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neurips26.methods.frameselect import SELECTORS, Pool, SelectorRefused, select
from neurips26.methods.frameselect.router import allocate, route
from neurips26.methods.frameselect.runner import select_all

NAMES = SELECTORS.names()


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@st.composite
def pools(draw: st.DrawFn, max_n: int = 80) -> Pool:
    """A pool of 1-4 videos whose candidates repeat a few distinct frames (down to one: a static shot)."""
    seed = draw(st.integers(0, 2**31 - 1))
    n = draw(st.integers(1, max_n))
    distinct = draw(st.integers(1, n))
    rng = np.random.default_rng(seed)
    which = rng.integers(0, distinct, n) if distinct > 1 else np.zeros(n, np.int64)
    features = unit(rng.normal(size=(distinct, 6)))[which]
    pixels = rng.integers(0, 256, (distinct, 6, 6, 3), dtype=np.uint8)[which]
    videos = draw(st.integers(1, min(4, n)))
    video_index = np.sort(np.concatenate([np.arange(videos), rng.integers(0, videos, n - videos)]))
    times = np.concatenate([np.arange(np.sum(video_index == v), dtype=float) * 0.5 for v in range(videos)])
    query = features[0] if draw(st.booleans()) else unit(rng.normal(size=6))
    return Pool(times=times, duration=n * 0.5, video_ids=[f"v{v}" for v in range(videos)], video_index=video_index,
                features=features, query="q", query_features=query, pixels=pixels)


def check(name: str, pool: Pool, budget: int, seed: int = 0) -> None:
    chosen = select(name, pool, budget, seed=seed).indices
    assert len(chosen) == min(budget, pool.n), name
    assert len(np.unique(chosen)) == len(chosen), name
    assert chosen.min() >= 0 and chosen.max() < pool.n, name


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pool=pools(), data=st.data())
def test_every_selector_keeps_the_contract_on_random_and_duplicated_pools(name: str, pool: Pool,
                                                                          data: st.DataObject) -> None:
    budget = data.draw(st.integers(1, pool.n + 2))
    check(name, pool, budget, seed=data.draw(st.integers(0, 5)))


@pytest.mark.parametrize("name", NAMES)
def test_every_selector_on_identical_frames_a_single_frame_and_a_huge_pool(name: str) -> None:
    rng = np.random.default_rng(0)
    same = Pool(times=np.arange(50.0), duration=50.0, features=np.tile(unit(np.ones(6)), (50, 1)), query="q",
                query_features=unit(np.ones(6)), pixels=np.zeros((50, 4, 4, 3), np.uint8))  # a black intro
    for budget in (1, 7, 49):
        check(name, same, budget)
    one = Pool(times=np.zeros(1), duration=1.0, features=unit(np.ones((1, 6))), query="q",
               query_features=unit(np.ones(6)), pixels=np.zeros((1, 4, 4, 3), np.uint8))
    check(name, one, 1)
    n = 2600  # above the pairwise selectors' thinning limit, half of it one repeated frame
    features = unit(rng.normal(size=(n, 6)))
    features[: n // 2] = features[0]
    huge = Pool(times=np.arange(n) * 0.1, duration=n * 0.1, features=features, query="q",
                query_features=unit(rng.normal(size=6)), pixels=rng.integers(0, 256, (n, 4, 4, 3), dtype=np.uint8))
    check(name, huge, 8)


def test_a_refusal_is_only_the_named_needs_reason_and_a_crash_is_an_error() -> None:
    bare = Pool(times=np.arange(10.0), duration=10.0)
    with pytest.raises(SelectorRefused, match="needs pool field"):
        select("topk", bare, 3)

    class Q:
        id, query, benchmark, video_ids, video_paths = "q1", "q", "clovr", ["v"], ["v.mp4"]

    rows, refused = select_all([Q()], [bare], ["topk"], [3])
    assert rows == [] and refused == {"topk": 1}

    @SELECTORS.register("broken_for_test")
    def broken(pool: Pool, budget: int, rng: np.random.Generator) -> None:
        """Raises: a selector with a bug."""
        raise ValueError("boom")

    try:
        with pytest.raises(RuntimeError, match="selector 'broken_for_test' failed on question q1.*ValueError: boom"):
            select_all([Q()], [bare], ["broken_for_test"], [3])
    finally:
        SELECTORS._items.pop("broken_for_test")
        SELECTORS._info.pop("broken_for_test", None)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 60), min_size=1, max_size=12), reference=st.integers(1, 16),
       seed=st.integers(0, 1000))
def test_router_clamps_to_pool_sizes_and_keeps_the_mean_exact(sizes: list[int], reference: int, seed: int) -> None:
    demands = np.random.default_rng(seed).random(len(sizes))
    b_min = max(1, reference // 4)
    if sum(min(s, 4 * reference) for s in sizes) < reference * len(sizes):
        with pytest.raises(SelectorRefused, match=f"need {reference * len(sizes)} frames"):
            allocate(demands, reference, b_min, 4 * reference, caps=sizes)
        return
    budgets = allocate(demands, reference, b_min, 4 * reference, caps=sizes)
    assert budgets.sum() == reference * len(sizes)
    assert np.all(budgets <= np.minimum(sizes, 4 * reference))
    assert np.all(budgets >= np.minimum(sizes, b_min))


def test_route_with_a_pool_smaller_than_a_quarter_budget() -> None:
    rng = np.random.default_rng(1)
    big = [Pool(times=np.arange(80.0), duration=80.0, features=unit(rng.normal(size=(80, 6))), query="q",
                query_features=unit(rng.normal(size=6))) for _ in range(3)]
    tiny = Pool(times=np.arange(2.0), duration=2.0, features=unit(rng.normal(size=(2, 6))), query="q",
                query_features=unit(rng.normal(size=6)))
    routed = route(["When does it stop?"] * 4, [*big, tiny], reference=32)
    assert [r.budget for r in routed][3] == 2
    assert sum(r.budget for r in routed) == 4 * 32
    assert all(len(r.selection.indices) == r.budget for r in routed)


def test_an_unknown_benchmark_is_one_line_and_exit_code_two() -> None:
    from typer.testing import CliRunner

    from neurips26.cli import app

    result = CliRunner().invoke(app, ["frameselect", "run", "--benchmark", "nosuch"])
    assert result.exit_code == 2
    assert "unknown benchmark 'nosuch'; known: clovr, tar" in result.output
    assert "Traceback" not in result.output
