"""Bayesian GRPO frame selection: GRPO's advantage and update by hand, Plackett-Luce log-probabilities, the reward
(a frozen answerer's likelihood that never reads evidence labels), GRPO and SFT-only at equal steps, the posterior
shrinking with data, the Hub-ready model folder and selection from it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from neurips26.methods.frameselect import Pool, select
from neurips26.methods.frameselect.bgrpo import Config, card, example, grpo, load, train
from neurips26.methods.frameselect.bgrpo.policy import log_prob
from neurips26.methods.frameselect.bgrpo.reward import AnswerReward, spread


def test_group_normalised_advantages_by_hand() -> None:
    assert grpo.advantages([1.0, 3.0]).tolist() == pytest.approx([-1.0, 1.0])  # mean 2, population std 1
    assert grpo.advantages([0.0, 0.0, 6.0]).tolist() == pytest.approx([-2 / np.sqrt(8), -2 / np.sqrt(8),
                                                                       4 / np.sqrt(8)])
    assert grpo.advantages([5.0, 5.0]).tolist() == [0.0, 0.0]  # no preference inside the group


def test_plackett_luce_log_prob_and_its_gradient_by_hand() -> None:
    phi = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    w = np.array([np.log(2.0), 0.0])  # scores log 2, 0, log 2: weights 2, 1, 2
    lp, grad = log_prob(phi, w, np.array([2, 1]))
    assert lp == pytest.approx(np.log(2 / 5) + np.log(1 / 3))  # pick 2 of {2,1,2}, then 1 of {2,1}
    first = phi[2] - (2 * phi[0] + phi[1] + 2 * phi[2]) / 5
    second = phi[1] - (2 * phi[0] + phi[1]) / 3
    assert grad == pytest.approx(first + second)
    eps = 1e-6  # and it is the derivative
    numeric = [(log_prob(phi, w + eps * e, np.array([2, 1]))[0] - lp) / eps for e in np.eye(2)]
    assert grad == pytest.approx(numeric, abs=1e-4)


def test_grpo_update_matches_hand_computation_on_a_toy() -> None:
    phi = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    w = np.zeros(2)  # uniform first pick: p = 1/3 each, mean feature (1/3, 1/3)
    picks, rewards = [np.array([0]), np.array([1])], [1.0, 3.0]  # advantages -1, +1
    new, stats = grpo.step(w, w.copy(), phi, picks, rewards, lr=0.5, beta=0.04)
    # grad = 1/2 [ -1 (phi0 - mean) + 1 (phi1 - mean) ] = (phi1 - phi0) / 2 = (-1/2, 1/2); KL term 0 at w = w_ref
    assert new == pytest.approx([-0.25, 0.25]) and stats["kl"] == pytest.approx(0.0)
    # away from the reference the KL estimator k3 = rho - log rho - 1 pulls back: rho = pi_ref / pi
    w = np.array([np.log(2.0), 0.0])  # p = (2, 1, 1) / 4
    grad, stats = grpo.gradient(w, np.zeros(2), phi, picks, rewards, beta=1.0)
    mean = (2 * phi[0] + phi[1] + phi[2]) / 4
    rho0, rho1 = (1 / 3) / (2 / 4), (1 / 3) / (1 / 4)
    hand = ((-1 - (1 - rho0)) * (phi[0] - mean) + (1 - (1 - rho1)) * (phi[1] - mean)) / 2
    assert grad == pytest.approx(hand)
    assert stats["kl"] == pytest.approx(np.mean([r - np.log(r) - 1 for r in (rho0, rho1)]))


def planted(seed: int, n: int = 40, dim: int = 8, signal: float = 2.0) -> tuple[Pool, list[tuple[int, float, float]]]:
    """A two-video pool whose evidence frames (a span in each video) share a planted direction with the query."""
    rng = np.random.default_rng(seed)
    f = rng.normal(size=(n, dim)) * 0.5
    video = np.repeat([0, 1], n // 2)
    times = np.concatenate([np.arange(n // 2), np.arange(n // 2)]).astype(float)
    start = [int(rng.integers(0, n // 2 - 4)) for _ in range(2)]
    inside = np.zeros(n, bool)
    for v in range(2):
        inside |= (video == v) & (times >= start[v]) & (times < start[v] + 4)
    f[inside, 0] += signal
    f /= np.linalg.norm(f, axis=1, keepdims=True)
    q = np.eye(dim)[0]
    pool = Pool(times=times, duration=float(n), video_ids=["a", "b"], video_index=video, features=f, query="q",
                query_features=q)
    return pool, [(v, float(start[v]), float(start[v] + 4)) for v in range(2)]


def sees_all(pool: Pool, spans: list[tuple[int, float, float]]):
    """A toy frozen answerer: right when the picks show every planted span, wrong otherwise."""
    return lambda picks: float(all(any(pool.video_index[i] == v and a <= pool.times[i] < b for i in picks)
                                   for v, a, b in spans))


def planted_example(seed: int, signal: float = 2.0):
    pool, spans = planted(seed, signal=signal)
    return example(pool, spans, judge=sees_all(pool, spans))


def examples(seeds: range, signal: float = 2.0) -> list:
    return [planted_example(s, signal) for s in seeds]


def toy_reward(budget: int = 4) -> AnswerReward:
    return AnswerReward().fit(examples(range(500, 510)), budget)


def test_posterior_uncertainty_shrinks_with_training_data() -> None:
    config = Config(members=5, epochs=1, group=4, budget=4, seed=0)
    held_out = [planted(1000 + s, signal=1.0)[0] for s in range(6)]
    spread = {}
    for n in (2, 10, 40):
        posterior = train(examples(range(n), signal=1.0), toy_reward(), config=config)
        spread[n] = np.mean([posterior.disagreement(p, 8) for p in held_out])  # members' top-8 sets differ
    assert spread[2] > spread[10] > spread[40] and spread[40] < 0.6 * spread[2], spread


def test_training_saves_a_hub_ready_folder_that_selects_evidence(tmp_path: Path) -> None:
    data = examples(range(30))
    posterior = train(data, toy_reward(), config=Config(members=3, epochs=2, group=4, budget=4, seed=1))
    assert len(posterior.history) == 6 and all(np.isfinite(h["reward"]) for h in posterior.history)
    folder = posterior.save(tmp_path / "bgrpo", card(posterior, len(data), "planted pools"))
    assert {p.name for p in folder.iterdir()} == {"model.safetensors", "config.json", "README.md"}
    assert json.loads((folder / "config.json").read_text())["training"]["members"] == 3
    assert (folder / "README.md").read_text().startswith("---\nlibrary_name: neurips26")
    assert np.array_equal(load(folder).weights, posterior.weights.astype(np.float32).astype(np.float64))
    hits = {"bgrpo": 0, "random": 0}
    for s in range(10):
        pool, spans = planted(2000 + s)
        for name in hits:
            chosen = select(name, pool, 8, seed=s, **({"model": str(folder)} if name == "bgrpo" else {})).indices
            hits[name] += sum(any(pool.video_index[i] == v and a <= pool.times[i] < b for i in chosen)
                              for v, a, b in spans)  # evidence spans hit
    assert hits["bgrpo"] >= 19 and hits["bgrpo"] >= hits["random"] + 4, hits  # of 20 spans
    with pytest.raises(ValueError, match="not a bgrpo model folder"):
        select("bgrpo", planted(0)[0], 4, model=str(tmp_path / "nothing"))


def test_the_reward_is_the_answerers_calibrated_likelihood_by_hand() -> None:
    verdicts = iter([1.0, 1.0, 0.0, None])  # calibration: 2 right of 3 committed, one abstention
    calib = [example(*planted(s), judge=lambda picks: next(verdicts)) for s in range(4)]
    reward = AnswerReward().fit(calib, 4)
    assert reward.confidence == pytest.approx((2 + 1) / (3 + 2)) and reward.n_calibration == 4
    c, k = 0.6, 4
    for verdict, expected in ((1.0, np.log(c)), (0.0, np.log((1 - c) / (k - 1))), (None, -np.log(k))):
        ex = example(*planted(9), judge=lambda picks, v=verdict: v)
        assert reward.loglik(ex, np.arange(4)) == pytest.approx(expected)
    assert spread(10, 4).tolist() == [0, 3, 6, 9]


def test_the_reward_cannot_see_evidence_labels() -> None:
    """Fitted on examples whose labels are shuffled (and scored on them), the reward is the same reward."""
    rng = np.random.default_rng(0)
    calib, train_set = examples(range(10)), examples(range(20, 30))
    shuffled = [type(e)(e.phi, e.video_index, rng.permutation(e.labels), e.n_options, e.judge) for e in calib]
    assert any(not np.array_equal(a.labels, b.labels) for a, b in zip(calib, shuffled, strict=True))
    true, fake = AnswerReward().fit(calib, 8), AnswerReward().fit(shuffled, 8)
    assert true.confidence == fake.confidence
    picks = [rng.choice(len(e.labels), 8, replace=False) for e in train_set]
    scored = [type(e)(e.phi, e.video_index, rng.permutation(e.labels), e.n_options, e.judge) for e in train_set]
    assert [true.loglik(e, s) for e, s in zip(train_set, picks, strict=True)] == \
        [fake.loglik(e, s) for e, s in zip(scored, picks, strict=True)]
    # and the answerer's verdict does move it: covering every planted span is rewarded
    e = train_set[0]
    inside = [int(np.flatnonzero(e.labels & (e.video_index == v))[0]) for v in (0, 1)]
    assert true.loglik(e, np.array(inside)) > true.loglik(e, np.flatnonzero(~e.labels)[:2])


def test_grpo_and_sft_only_take_equal_steps_from_the_same_prior() -> None:
    data = examples(range(12))
    config = Config(members=2, epochs=2, group=4, budget=4, lr=1.0, seed=3)
    grpo_post = train(data, toy_reward(), config, mode="grpo")
    sft_post = train(data, None, config, mode="sft")
    assert grpo_post.steps == sft_post.steps > 2 * 2 * len(data)  # pre-training iterations + 2 epochs x 2 members
    assert np.array_equal(grpo_post.reference, sft_post.reference)  # the same prior (resample, anchor, fit)
    assert not np.allclose(grpo_post.weights, grpo_post.reference)
    assert not np.allclose(sft_post.weights, sft_post.reference) and not np.allclose(sft_post.weights,
                                                                                       grpo_post.weights)
    assert len(grpo_post.history) == 4 and sft_post.history == []
    with pytest.raises(ValueError, match="GRPO needs a reward"):
        train(data, None, config, mode="grpo")


def test_cli_trains_on_a_built_clovr_folder(small_video_releases: Path, tmp_path: Path) -> None:
    from neurips26.methods.frameselect import benchmarks
    from neurips26.methods.frameselect.pool import build_pool
    from typer.testing import CliRunner

    from neurips26.cli import app

    result = CliRunner().invoke(app, ["frameselect", "train-bgrpo", "--train", str(small_video_releases / "clovr"),
                                      "--out", str(tmp_path / "m"), "--members", "2", "--epochs", "0"])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and (tmp_path / "m" / "model.safetensors").is_file()
    q = benchmarks.clovr(small_video_releases / "clovr")[0]
    pool = build_pool(q.video_paths, query=q.query, candidate_fps=2.0)
    assert len(select("bgrpo", pool, 8, model=str(tmp_path / "m")).indices) == 8
    bad = CliRunner().invoke(app, ["frameselect", "train-bgrpo", "--train", str(tmp_path / "none")])
    assert bad.exit_code == 2 and "not a built clovr folder" in bad.output
