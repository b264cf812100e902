"""Frame selectors against their published definitions, on planted pools and given score vectors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from neurips26.methods.frameselect import SELECTORS, Pool, select
from neurips26.methods.frameselect.selectors import aks, bolt, coverage, dpp, kts, mdp3, motion, qframe


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def scored(scores: list[float] | np.ndarray, fps: float = 1.0) -> Pool:
    """A pool whose query relevance (cosine to the query) is exactly ``scores`` (each in [-1, 1])."""
    s = np.asarray(scores, np.float64)
    features = np.stack([s, np.sqrt(1 - s**2)], axis=1)
    return Pool(times=np.arange(len(s)) / fps, duration=len(s) / fps, features=features,
                query="q", query_features=np.array([1.0, 0.0]))


def clusters(sizes: list[int], dim: int = 16, noise: float = 0.05, seed: int = 0) -> tuple[Pool, np.ndarray]:
    """Features in planted clusters around orthogonal directions, shuffled in time; returns the pool and labels."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    features = unit(np.eye(dim)[labels] + noise * rng.normal(size=(len(labels), dim)))
    return Pool(times=np.arange(len(labels), dtype=float), duration=float(len(labels)), features=features), labels


def frames_pool(images: np.ndarray, video_index: np.ndarray | None = None) -> Pool:
    """A pool of (N, h, w, 3) uint8 thumbnails at 1 candidate per second."""
    n = len(images)
    times = np.arange(n, dtype=float) if video_index is None else np.concatenate(
        [np.arange(np.sum(video_index == v), dtype=float) for v in np.unique(video_index)])
    ids = ["video"] if video_index is None else [f"v{v}" for v in np.unique(video_index)]
    return Pool(times=times, duration=float(n), video_ids=ids, video_index=video_index, pixels=images)


# -- the registry and the contract ---------------------------------------------------------------------------------
def test_at_least_twenty_selectors_all_valid_on_a_two_video_pool() -> None:
    rng = np.random.default_rng(0)
    n = 40
    pool = Pool(times=np.concatenate([np.arange(25.0), np.arange(15.0)]), duration=40.0, video_ids=["a", "b"],
                video_index=np.repeat([0, 1], [25, 15]), features=unit(rng.normal(size=(n, 8))), query="q",
                query_features=unit(rng.normal(size=8)), pixels=rng.integers(0, 256, (n, 8, 8, 3), dtype=np.uint8))
    assert len(SELECTORS) >= 20
    for name in SELECTORS:
        chosen = select(name, pool, 6, seed=3)
        assert len(np.unique(chosen.indices)) == 6 and chosen.indices.max() < n, name
        assert np.array_equal(chosen.indices, select(name, pool, 6, seed=3).indices), f"{name} not reproducible"
    assert set(pool.video_index[select("uniform", pool, 4).indices]) == {0, 1}


def test_missing_needs_and_bad_options_are_named() -> None:
    bare = Pool(times=np.arange(10.0), duration=10.0)
    with pytest.raises(ValueError, match="needs pool field.*features"):
        select("dpp", bare, 3)
    with pytest.raises(ValueError, match="needs pool field.*pixels"):
        select("motion", bare, 3)
    with pytest.raises(KeyError, match="unknown selector 'nope'.*uniform"):
        select("nope", bare, 3)
    with pytest.raises(ValueError, match="lam must be in"):
        select("mmr", scored([0.1, 0.2, 0.3, 0.4]), 2, lam=2.0)
    with pytest.raises(ValueError, match="rate must be > 0"):
        select("fps", bare, 3, rate=0)
    with pytest.raises(ValueError, match="tau must be > 0"):
        select("qframe", scored([0.1, 0.2, 0.3, 0.4]), 2, tau=0)


# -- temporal ------------------------------------------------------------------------------------------------------
def test_uniform_is_evenly_spaced_segment_centres() -> None:
    chosen = select("uniform", Pool(times=np.arange(100.0), duration=100.0), 4).indices
    assert chosen.tolist() == [12, 37, 62, 87]
    assert len(set(np.diff(chosen))) == 1


def test_random_is_reproducible_and_covers_the_pool() -> None:
    pool = Pool(times=np.arange(20.0), duration=20.0)
    assert np.array_equal(select("random", pool, 5, seed=7).indices, select("random", pool, 5, seed=7).indices)
    assert not np.array_equal(select("random", pool, 5, seed=7).indices, select("random", pool, 5, seed=8).indices)
    counts = np.bincount(np.concatenate([select("random", pool, 5, seed=s).indices for s in range(400)]),
                         minlength=20)
    assert counts.min() > 0 and np.allclose(counts / 400, 5 / 20, atol=0.08)  # each candidate with p = 1/4


def test_stratified_takes_one_per_stratum_and_reaches_every_candidate() -> None:
    pool = Pool(times=np.arange(20.0), duration=20.0)
    seen = set()
    for seed in range(60):
        chosen = select("stratified", pool, 4, seed=seed).indices
        assert (chosen // 5).tolist() == [0, 1, 2, 3]
        seen |= set(chosen.tolist())
    assert seen == set(range(20))


def test_fps_spacing_follows_the_rate_and_the_cap() -> None:
    pool = Pool(times=np.arange(40) / 4, duration=10.0)  # 4 candidates per second over 10 s
    assert select("fps", pool, 5, rate=0.5).indices.tolist() == [0, 8, 16, 24, 32]  # every 2 s
    assert select("fps", pool, 4, rate=1.0).indices.tolist() == [0, 12, 24, 36]  # 10 times thinned to 0, 3, 6, 9 s
    assert select("fps", pool, 5).indices.tolist() == [0, 8, 16, 24, 32]  # no rate: budget / duration
    assert select("fps", pool, 5, rate=0.1).indices.tolist() == [0, 8, 16, 24, 32]  # too slow: rate rises


# -- pixels --------------------------------------------------------------------------------------------------------
def flat(colours: list[tuple[int, int, int]], lengths: list[int], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    images = np.concatenate([np.full((n, 8, 8, 3), c, np.int64) for c, n in zip(colours, lengths, strict=True)])
    return np.clip(images + rng.integers(-3, 4, images.shape), 0, 255).astype(np.uint8)


def test_shot_boundary_picks_the_frame_right_after_each_planted_cut() -> None:
    pool = frames_pool(flat([(200, 30, 30), (30, 200, 30), (30, 30, 200)], [10, 15, 15]))
    assert select("shot_boundary", pool, 3).indices.tolist() == [0, 10, 25]
    topped = select("shot_boundary", pool, 5).indices
    assert {0, 10, 25} <= set(topped.tolist())
    assert select("shot_boundary", pool, 2).indices.tolist()[0] == 0  # the video's start counts as the strongest cut


def test_motion_picks_high_frame_difference_and_flow_ignores_flicker() -> None:
    n = 20
    images = np.full((n, 32, 32, 3), 60, np.uint8)
    images[5] = 140  # a global flicker at 5 (frames 5 and 6 differ from their predecessors)
    x = [0] * 10 + [2, 4, 6, 8, 10] + [10] * 5  # a square moves during frames 10-14
    for i, left in enumerate(x):
        images[i, 12:20, 4 + left:12 + left] = 230
    pool = frames_pool(images)
    assert set(select("motion", pool, 2).indices.tolist()) == {5, 6}
    assert set(select("flow", pool, 4).indices.tolist()) <= set(range(10, 15))
    diff = motion.frame_difference(pool)
    assert np.all(diff[[1, 2, 3, 4, 7, 8, 9, 15, 16]] == 0)


def test_motion_does_not_compare_across_videos() -> None:
    images = flat([(200, 30, 30), (30, 200, 30)], [6, 6])  # video 1 looks nothing like video 0
    pool = frames_pool(images, video_index=np.repeat([0, 1], 6))
    assert motion.frame_difference(pool).max() < 0.05  # the switch of video is no motion


# -- features, query-free ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["kmeans", "kmedoids", "kcenter", "facility_location"])
def test_clustering_and_coverage_take_one_frame_per_planted_cluster(name: str) -> None:
    pool, labels = clusters([12, 3, 8, 5])
    chosen = select(name, pool, 4, seed=1).indices
    assert sorted(labels[chosen].tolist()) == [0, 1, 2, 3]


def test_kmeans_and_kmedoids_representatives_are_centroid_nearest_and_medoids() -> None:
    pool, labels = clusters([12, 3, 8, 5])
    x = pool.features
    for c, i in zip(labels[k := select("kmeans", pool, 4).indices], k, strict=True):
        members = np.flatnonzero(labels == c)
        assert i == members[np.argmin(np.linalg.norm(x[members] - x[members].mean(0), axis=1))]
    for c, i in zip(labels[m := select("kmedoids", pool, 4).indices], m, strict=True):
        members = np.flatnonzero(labels == c)
        assert i == members[np.argmin((1 - x[members] @ x[members].T).sum(1))]


def test_kcenter_radius_is_within_twice_the_optimum() -> None:
    rng = np.random.default_rng(4)
    pool = Pool(times=np.arange(12.0), duration=12.0, features=unit(rng.normal(size=(12, 3))))
    x = pool.features

    def radius(chosen: tuple[int, ...] | np.ndarray) -> float:
        return float((1 - x @ x[list(chosen)].T).min(axis=1).max())

    best = min(radius(c) for c in itertools.combinations(range(12), 3))
    assert radius(select("kcenter", pool, 3).indices) <= 2 * best + 1e-9


def test_facility_location_is_greedy_and_within_one_minus_one_over_e() -> None:
    rng = np.random.default_rng(5)
    pool = Pool(times=np.arange(10.0), duration=10.0, features=unit(rng.normal(size=(10, 4))))
    sim = (1 + pool.features @ pool.features.T) / 2
    chosen: list[int] = []
    for _ in range(3):  # the greedy run by hand
        gain = [coverage.facility_value(sim, chosen + [j]) if j not in chosen else -1 for j in range(10)]
        chosen.append(int(np.argmax(gain)))
    assert select("facility_location", pool, 3).indices.tolist() == sorted(chosen)
    best = max(coverage.facility_value(sim, c) for c in itertools.combinations(range(10), 3))
    assert coverage.facility_value(sim, chosen) >= (1 - 1 / np.e) * best


def test_saliency_picks_the_planted_outliers() -> None:
    rng = np.random.default_rng(6)
    features = unit(np.eye(8)[0] + 0.05 * rng.normal(size=(30, 8)))
    features[[7, 22]] = unit(np.eye(8)[[3, 5]] + 0.05 * rng.normal(size=(2, 8)))
    pool = Pool(times=np.arange(30.0), duration=30.0, features=features)
    assert select("saliency", pool, 2).indices.tolist() == [7, 22]


def test_kts_finds_the_planted_change_points_and_takes_segment_middles() -> None:
    lengths = [5, 12, 3, 10]
    rng = np.random.default_rng(7)
    base = np.repeat(np.eye(6)[[0, 2, 4, 1]], lengths, axis=0)
    features = unit(base + 0.05 * rng.normal(size=base.shape))
    assert kts.segment(features, 4) == [5, 17, 20]
    pool = Pool(times=np.arange(30.0), duration=30.0, features=features)
    assert select("kts", pool, 4).indices.tolist() == [2, 10, 18, 24]  # (first + last) // 2


def test_greedy_dpp_beats_random_on_log_det_and_each_step_is_the_best_addition() -> None:
    pool, labels = clusters([20, 2, 2, 2, 2], dim=8, noise=0.1, seed=2)
    L = dpp.kernel(pool)
    chosen = select("dpp", pool, 5).indices
    assert sorted(labels[chosen].tolist()) == [0, 1, 2, 3, 4]
    randoms = [dpp.log_det(L, select("random", pool, 5, seed=s).indices) for s in range(50)]
    assert dpp.log_det(L, chosen) > max(randoms)
    order, _ = dpp.greedy_map(L, 5)
    for k in range(1, 5):  # Chen et al.'s incremental gains pick the argmax of the brute-force log-det
        trials = {j: dpp.log_det(L, order[:k] + [j]) for j in range(pool.n) if j not in order[:k]}
        assert order[k] == max(trials, key=trials.get)


# -- query-aware ---------------------------------------------------------------------------------------------------
SCORES = [0.1, 0.9, 0.3, 0.85, 0.2, 0.95, 0.0, 0.5]


def test_topk_returns_the_highest_similarity_frames() -> None:
    assert select("topk", scored(SCORES), 3).indices.tolist() == [1, 3, 5]


def test_segment_top1_takes_the_best_of_each_segment() -> None:
    assert select("segment_top1", scored(SCORES), 4).indices.tolist() == [1, 3, 5, 7]


def test_nms_topk_suppresses_temporal_neighbours() -> None:
    s = np.zeros(40)
    s[[9, 10, 11]] = [0.8, 0.9, 0.8]
    s[30] = 0.6
    assert select("topk", scored(s), 2).indices.tolist() == [9, 10]
    assert select("nms_topk", scored(s), 2, sigma=0, radius=5).indices.tolist() == [10, 30]


def test_mmr_lambda_one_is_topk_and_lower_lambda_trades_relevance_for_diversity() -> None:
    q = np.array([1.0, 0.0, 0.0])
    dup = unit(np.array([0.9, 0.43, 0.0]))  # three near-identical, most relevant frames
    other = unit(np.array([0.8, 0.0, 0.6]))  # less relevant, different
    rng = np.random.default_rng(0)
    features = np.stack([unit(dup + 0.01 * rng.normal(size=3)) for _ in range(3)] + [other])
    pool = Pool(times=np.arange(4.0), duration=4.0, features=features, query="q", query_features=q)
    assert np.array_equal(select("mmr", pool, 3, lam=1.0).indices, select("topk", pool, 3).indices)
    assert 3 not in select("mmr", pool, 2, lam=1.0).indices
    picked = select("mmr", pool, 2, lam=0.5).indices.tolist()
    first = int(np.argmax(features @ q))
    second = max((j for j in range(4) if j != first),
                 key=lambda j: 0.5 * features[j] @ q - 0.5 * features[j] @ features[first])
    assert picked == sorted([first, second]) and 3 in picked


def test_aks_judge_and_split_matches_the_hand_computed_recursion() -> None:
    s = [0.0, 0.1, 0.2, 0.1, 0.9, 1.0, 0.0, 0.3]  # already min-max normalised
    # every segment is judged with the whole budget n=4: root top-4 mean 0.6 - mean 0.325 = 0.275
    assert select("aks", scored(s), 4, threshold=0.2).indices.tolist() == [2, 4, 5, 7]  # root kept: top-4
    # split once (depth 1): each half takes floor(4 / 2) = 2 of its own
    assert select("aks", scored(s), 4, threshold=0.3, depth=1).indices.tolist() == [1, 2, 4, 5]
    # split twice: four quarters take floor(4 / 4) = 1 each. The right half is split too, since it is judged
    # with the whole budget (top-4 = all its frames: 0.55 - 0.55 = 0), not with its half of it (0.95 - 0.55 = 0.4)
    assert select("aks", scored(s), 4, threshold=0.3, depth=2).indices.tolist() == [1, 2, 5, 7]
    # depth 3: leaves take floor(4 / 8) = 0, as in the released code; the budget is then filled by score
    assert aks.judge_and_split(np.array(s), 4, threshold=0.3, depth=3) == []
    assert select("aks", scored(s), 4, threshold=0.3, depth=3).indices.tolist() == [2, 4, 5, 7]


def test_bolt_takes_the_quantiles_of_the_score_cdf() -> None:
    s = [0.0, 0.2, 0.4, 1.0, 0.4, 0.2, 0.0, 0.0, 0.6, 0.0]
    # alpha 1: cdf = cumsum(s) / 2.8 = 0, .071, .214, .571, .714, .786, .786, .786, 1, 1; quantiles .125 .375 .625 .875
    assert select("bolt", scored(s), 4, alpha=1.0).indices.tolist() == [2, 3, 4, 8]
    # alpha 0: uniform weights, cdf = (i + 1) / 10
    assert select("bolt", scored(s), 4, alpha=0.0).indices.tolist() == [1, 3, 6, 8]
    assert bolt.quantile_picks(np.array(s), 2, alpha=50.0).tolist() == [3, 3]  # sharp: both quantiles on the peak
    assert select("bolt", scored(s), 2, alpha=50.0).indices.tolist() == [2, 3]  # the repeat: nearest free, earlier


def test_qframe_gumbel_max_draws_follow_the_softmax_distribution() -> None:
    s = np.array([0.1, 0.2, 0.3, 0.25])
    tau = 0.1
    p = qframe.softmax(s / tau)
    draws = np.bincount([select("qframe", scored(s), 1, seed=k, tau=tau).indices[0] for k in range(3000)],
                        minlength=4) / 3000
    assert np.allclose(draws, p, atol=0.03)
    assert select("qframe", scored(s), 2, tau=1e-4).indices.tolist() == [2, 3]  # cold: top-k


def test_mdp3_allocates_the_budget_across_segments_by_its_dynamic_programme() -> None:
    rng = np.random.default_rng(8)
    for _ in range(20):
        values = [np.concatenate([[0.0], np.cumsum(rng.normal(size=rng.integers(1, 5)))]) for _ in range(3)]
        budget = int(rng.integers(1, sum(len(v) - 1 for v in values) + 1))
        best = max((sum(v[m] for v, m in zip(values, ms, strict=True)), ms)
                   for ms in itertools.product(*[range(len(v)) for v in values]) if sum(ms) == budget)
        got = mdp3.allocate(values, budget)
        assert sum(got) == budget and np.isclose(sum(v[m] for v, m in zip(values, got, strict=True)), best[0])
    # planted: segment 0 is ten near-duplicates, more relevant than segment 1's ten distinct frames
    dup = unit(np.eye(12)[10] + 0.01 * rng.normal(size=(10, 12)))
    distinct = np.eye(12)[:10]
    q = unit(np.r_[np.ones(10), 3.0, 0.0])
    pool = Pool(times=np.arange(20.0), duration=20.0, features=np.concatenate([dup, distinct]), query="q",
                query_features=q)
    assert (select("topk", pool, 4).indices < 10).all()  # relevance alone takes four duplicates
    chosen = select("mdp3", pool, 4, segment=10).indices
    assert (chosen < 10).sum() == 1 and (chosen >= 10).sum() == 3  # one duplicate is worth it, a second is not


@pytest.mark.parametrize("name", ["kmedoids", "facility_location", "saliency", "kts", "dpp"])
def test_quadratic_selectors_thin_large_pools_evenly(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from neurips26.methods.frameselect.selectors import _common

    monkeypatch.setattr(_common, "PAIRWISE_LIMIT", 50)
    rng = np.random.default_rng(9)
    features = unit(np.eye(8)[0] + 0.05 * rng.normal(size=(199, 8)))
    features[[40, 121]] = np.eye(8)[[3, 5]]  # outliers on the thinned grid (linspace(0, 198, 50), rounded)
    pool = Pool(times=np.arange(199.0), duration=199.0, features=features)
    rows = set(np.linspace(0, 198, 50).round().astype(int).tolist())
    assert {40, 121} <= rows
    chosen = select(name, pool, 4).indices
    assert set(chosen.tolist()) <= rows and len(set(chosen.tolist())) == 4
    if name in ("saliency", "dpp", "facility_location"):
        assert {40, 121} <= set(chosen.tolist())  # the planted outliers, at their own positions in the pool


def test_timeline_puts_each_video_after_the_previous_one() -> None:
    times = np.array([0.0, 1.0, 2.0, 0.0, 1.0])
    index = np.array([0, 0, 0, 1, 1])
    known = Pool(times=times, duration=5.5, video_ids=["a", "b"], video_index=index, video_durations=[3.5, 2.0])
    np.testing.assert_allclose(known.timeline, [0, 1, 2, 3.5, 4.5])
    guessed = Pool(times=times, duration=5.0, video_ids=["a", "b"], video_index=index)
    np.testing.assert_allclose(guessed.timeline, [0, 1, 2, 3, 4])  # one candidate step after the last
    with pytest.raises(ValueError, match="2 videos"):
        Pool(times=times, duration=5.0, video_ids=["a", "b"], video_index=index, video_durations=[1.0])


def test_registries_are_documented_and_check_needs() -> None:
    from neurips26.methods.frameselect import ANSWERERS, BENCHMARKS, ENCODERS, SELECTION_EVALUATORS
    from neurips26.methods.video_metrics import VIDEO_SCORERS

    for registry in (SELECTORS, ENCODERS, SELECTION_EVALUATORS, BENCHMARKS, ANSWERERS, VIDEO_SCORERS):
        assert len(registry) > 0
        for name, component in registry.items():
            assert (component.__doc__ or "").strip(), f"{registry.kind} {name} has no docstring"
    with pytest.raises(ValueError, match="unknown needs \\['colour'\\]"):
        SELECTORS.register("paint", needs=("colour",))
    with pytest.raises(ValueError, match="registered twice"):
        SELECTORS.register("uniform")(lambda pool, budget, rng: None)
