"""Robot actions: the DCT codec against scipy, the other codecs, smoothness, the flow-matching loss by hand, the
VQ's straight-through gradient, and pusht_rollout runs on the leaderboard (no data or simulator needed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.fft
import torch
from neurips26.methods.actions import codecs, freeact, smoothness
from neurips26.methods.actions.evaluate import Rollout, seeds, summary
from neurips26.methods.actions.policies import Policy, PolicyConfig, flow_matching_loss
from neurips26.methods.actions.protocol import METRICS, PROTOCOL, STANDARD, TASK
from neurips26.methods.actions.report import write_run

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("steps", [2, 7, 16, 33])
def test_dct_round_trip_is_exact_at_full_k_and_matches_scipy(steps: int) -> None:
    chunk = RNG.normal(size=(steps, 2)) * 100
    coefficients = codecs.dct_encode(chunk)
    expected = scipy.fft.dct(chunk, type=2, axis=0) / steps
    expected[0] /= 2
    np.testing.assert_allclose(coefficients, expected, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(codecs.dct_decode(coefficients, steps), chunk, atol=1e-9)
    # continuous: the curve between two samples, and its derivative, agree with finite differences
    u = np.linspace(0.1, 0.9, 5)
    h = 1e-6
    numeric = (codecs.dct_decode(coefficients, u + h) - codecs.dct_decode(coefficients, u - h)) / (2 * h)
    np.testing.assert_allclose(codecs.dct_derivative(coefficients, u), numeric, rtol=1e-4, atol=1e-3)


def test_truncated_dct_error_falls_with_k_and_other_codecs_round_trip_within_their_resolution() -> None:
    t = np.linspace(0, 1, 64)
    trajectories = [np.stack([200 + 80 * np.sin(2 * np.pi * f * t + p), 250 + 60 * np.cos(2 * np.pi * f * t)], 1)
                    for f, p in ((0.5, 0.0), (1.0, 1.0), (2.0, 2.0))]
    chunks = codecs.chunks_of(trajectories, 16)
    errors = [codecs.round_trip_error(codecs.DCTCodec(k), chunks) for k in (2, 4, 8, 16)]
    assert errors == sorted(errors, reverse=True) and errors[-1] < 1e-9
    binning = codecs.BinningCodec(64).fit(chunks)
    width = float(np.max(binning.high - binning.low)) / 64
    assert codecs.round_trip_error(binning, chunks) <= width / 2
    coarse, fine = (codecs.FASTCodec(s).fit(chunks) for s in (2.0, 200.0))
    assert codecs.round_trip_error(fine, chunks) < codecs.round_trip_error(coarse, chunks) < 60
    assert codecs.round_trip_error(fine, chunks) < 1.0
    rows = codecs.codec_table(chunks)
    assert {r["codec"] for r in rows} == {"raw", "binning", "dct", "fast"} and all(r["rmse"] >= 0 for r in rows)


def test_smoothness_of_sinusoids_matches_their_analytic_values() -> None:
    rate, amplitude = 100.0, 50.0
    t = np.arange(0, 10, 1 / rate)
    slow = np.stack([amplitude * np.sin(2 * np.pi * 0.5 * t), np.zeros_like(t)], 1)
    fast = np.stack([amplitude * np.sin(2 * np.pi * 8.0 * t), np.zeros_like(t)], 1)
    expected_jerk = amplitude**2 * (2 * np.pi * 0.5) ** 6 / 2
    assert smoothness.mean_squared_jerk(slow, rate) == pytest.approx(expected_jerk, rel=0.02)
    assert smoothness.high_frequency_energy(slow, rate) < 0.01 < 0.99 < smoothness.high_frequency_energy(fast, rate)
    assert smoothness.first_difference_energy(slow, rate) == pytest.approx(
        amplitude**2 * (2 * np.pi * 0.5) ** 2 / 2 * 0.01, rel=0.02)


def test_flow_matching_loss_matches_hand_computation_on_a_toy() -> None:
    """v(x, t, c) = W x + t + c on 2-D targets: the loss, and the first-derivative penalty, by hand."""
    w = torch.tensor([[0.5, -1.0], [2.0, 0.25]])

    def velocity(x: torch.Tensor, t: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return x @ w.T + t + c

    x1 = torch.tensor([[1.0, 2.0], [-1.0, 0.5]])
    x0 = torch.tensor([[0.5, -0.5], [0.0, 1.0]])
    t = torch.tensor([[0.25], [0.5]])
    c = torch.tensor([[0.1, 0.0], [0.0, -0.2]])
    d = torch.tensor([[1.0, -1.0]])  # "derivative": the difference of the two coordinates
    # by hand: x_t = (1 - t) x0 + t x1; v = W x_t + t + c; target = x1 - x0
    xt = [[0.75 * 0.5 + 0.25 * 1.0, 0.75 * -0.5 + 0.25 * 2.0], [0.5 * 0.0 + 0.5 * -1.0, 0.5 * 1.0 + 0.5 * 0.5]]
    v = [[0.5 * xt[0][0] - 1.0 * xt[0][1] + 0.25 + 0.1, 2.0 * xt[0][0] + 0.25 * xt[0][1] + 0.25],
         [0.5 * xt[1][0] - 1.0 * xt[1][1] + 0.5, 2.0 * xt[1][0] + 0.25 * xt[1][1] + 0.5 - 0.2]]
    target = [[0.5, 2.5], [-1.0, -0.5]]
    residual = [[v[i][j] - target[i][j] for j in range(2)] for i in range(2)]
    plain = sum(r * r for row in residual for r in row) / 4
    assert flow_matching_loss(velocity, x1, c, x0, t).item() == pytest.approx(plain, rel=1e-6)
    endpoint = [[(1 - 0.25) * r for r in residual[0]], [(1 - 0.5) * r for r in residual[1]]]
    penalty = sum((e[0] - e[1]) ** 2 for e in endpoint) / 2
    assert flow_matching_loss(velocity, x1, c, x0, t, d, sobolev=0.3).item() == pytest.approx(
        plain + 0.3 * penalty, rel=1e-6)


def test_fafm_penalty_acts_on_the_decoded_curves_derivative() -> None:
    policy = Policy(PolicyConfig(kind="flow", representation="dct", coefficients=4, sobolev=1.0))
    coefficients = np.array([[0.0, 0.0], [0.3, -0.1], [0.0, 0.2], [0.05, 0.0]])
    mapped = policy.derivative.numpy() @ coefficients.reshape(-1)
    expected = codecs.dct_derivative(coefficients, codecs.sample_times(16))
    np.testing.assert_allclose(mapped.reshape(16, 2), expected, rtol=1e-5, atol=1e-6)


def test_vq_straight_through_passes_the_gradient_to_the_encoder_unchanged() -> None:
    z = torch.tensor([[0.9, 0.1], [-0.2, 1.0], [0.6, -0.8]], requires_grad=True)
    codebook = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], requires_grad=True)
    quantised, index, loss = freeact.quantise(z, codebook, beta=0.25)
    assert index.tolist() == [0, 1, 0]
    np.testing.assert_allclose(quantised.detach().numpy(), codebook.detach()[index].numpy(), atol=1e-6)
    upstream = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    (quantised * upstream).sum().backward()
    # the quantiser is the identity for the gradient: dL/dz is the gradient at the quantised output
    normalised = torch.nn.functional.normalize(z.detach(), dim=1)
    jacobian_free = torch.autograd.functional.vjp(lambda x: torch.nn.functional.normalize(x, dim=1), z.detach(),
                                                  upstream)[1]
    np.testing.assert_allclose(z.grad.numpy(), jacobian_free.numpy(), atol=1e-6)
    assert codebook.grad is None or torch.all(codebook.grad == 0)  # codes move only through the VQ loss
    # the VQ loss moves the selected codes toward the (normalised) encoder outputs
    grad = torch.autograd.grad(loss, codebook)[0] if loss.requires_grad else None
    assert grad is not None and torch.all(grad[2] == 0) and torch.any(grad[0] != 0)
    assert normalised.shape == z.shape


def _synthetic_rollouts(rate: float, n: int) -> list[Rollout]:
    """Rollouts with made-up coverage traces and smooth commanded actions (the board does not simulate)."""
    runs = []
    for i, seed in enumerate(seeds(n)):
        steps = 20 + i % 7
        run = Rollout(seed, rate)
        run.coverage = [min(1.0, 0.02 * k * (1 + i % 3) / 2) for k in range(steps)]
        run.actions = [[200 + 3 * k + i, 260 - 2 * k] for k in range(steps)]
        runs.append(run)
    return runs


def test_a_rollout_run_is_ranked_on_its_own_board_and_a_changed_one_is_not(tmp_path: Path) -> None:
    """pusht_rollout runs written by the evaluator: the standard settings VALID (every metric recomputed from the
    rollouts), another rate UNRANKED with the reason; a hand-edited coverage is rejected."""
    from neurips26.leaderboard.store import Store

    store = Store(tmp_path / "lb")
    assert store.tasks[TASK].source == "registered" and store.tasks[TASK].group == "robot_actions"
    entries = {}
    for rate in (10.0, 20.0):
        runs = _synthetic_rollouts(rate, PROTOCOL.size)
        settings = {**STANDARD, "rate_hz": rate}
        folder = tmp_path / f"r{rate:g}"
        results = write_run(folder, runs, model_name=f"scripted-{rate:g}", model_args={"kind": "scripted"},
                            data={"resource": "pusht", "config": "episodes", "demo": False}, settings=settings)
        meta = {"model_id": f"org/scripted-{rate:g}", "revision": "0" * 40, "precision": "float32", "params": 1,
                "license": "mit", "model_type": "pretrained", "submitter": "alice"}
        entries[rate] = store.submit(results, meta, sorted(folder.glob("samples_*.jsonl")))
    assert entries[10.0].status == "VALID", entries[10.0].reason
    assert entries[20.0].status == "UNRANKED" and "rate_hz=20" in entries[20.0].reason, entries[20.0].reason
    rows = {r["metric"]: r for r in store.scores().to_pylist() if r["submission_id"] == entries[10.0].id}
    expected = summary(_synthetic_rollouts(10.0, PROTOCOL.size))
    assert set(rows) == set(METRICS) and all(r["task"] == TASK and r["n"] == PROTOCOL.size for r in rows.values())
    for metric in METRICS:
        assert rows[metric]["value"] == pytest.approx(expected[metric]), metric

    folder = tmp_path / "r10"
    samples = next(folder.glob("samples_*.jsonl"))
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    lines[0]["max_coverage"] = 0.99  # claims more than its coverage trace shows
    edited = tmp_path / "edited"
    edited.mkdir()
    (edited / samples.name).write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    results = next(folder.glob("results_*.json"))
    (edited / results.name).write_text(results.read_text())
    meta = {"model_id": "org/edited", "revision": "1" * 40, "precision": "float32", "params": 1, "license": "mit",
            "model_type": "pretrained", "submitter": "mallory"}
    entry = Store(tmp_path / "lb2").submit(edited / results.name, meta, [edited / samples.name])
    assert entry.status == "REJECTED" and "max_coverage" in entry.reason, entry.reason


def test_the_measured_still_policy_scores_the_standard_seeds_initial_coverage() -> None:
    from neurips26.corpora.pusht import sim

    initial = []
    for seed in seeds(STANDARD["episodes"]):
        env = sim.make_env()
        env.reset(seed=seed)
        initial.append(sim.coverage(env))
    measured = PROTOCOL.baseline_from
    assert measured is not None and measured.n == STANDARD["episodes"]
    # 3 of the 50 seeds start with the agent touching the block: the first step pushes them apart
    assert measured.scores["empty"] == pytest.approx(float(np.mean(initial)), abs=1e-3)
    assert PROTOCOL.baseline == max(measured.scores.values()) >= measured.scores["empty"]


def test_rollouts_execute_shifted_commands_and_record_the_commanded_ones() -> None:
    """A policy commanding one fixed point: on the mirrored robot the agent goes to the mirror image."""
    from neurips26.methods.actions.evaluate import rollouts
    from neurips26.methods.actions.shift import MIRROR_X

    class Still(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mean", torch.zeros(1))
            self.seen: list[np.ndarray] = []

        def act(self, states, keypoints, rate_hz, generator=None):
            self.seen.append(states)
            return [np.array([[100.0, 300.0]] * 4) for _ in states]

    plain, mirrored = Still(), Still()
    runs = [rollouts(policy, seeds(2), 10.0, 3.0, shift=s) for policy, s in ((plain, None), (mirrored, MIRROR_X))]
    for a, b in zip(*runs, strict=True):
        assert a.actions == b.actions == [[100.0, 300.0]] * 30
    assert np.all(np.abs(plain.seen[-1][:, 0] - 100.0) < 30)  # agents at the command, or the mirror image of it
    assert np.all(np.abs(mirrored.seen[-1][:, 0] - 412.0) < 30)
