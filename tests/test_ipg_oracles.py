"""IPG against exact oracles on a tiny autoregressive policy whose trajectories can all be enumerated."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from neurips26.methods.ipg.estimator import estimate_ipg, midpoints
from neurips26.methods.ipg.policy import Counts, Rollouts, inverse_cdf
from neurips26.methods.ipg.validation import validate


class ToyPolicy:
    """Vocab V, horizon H; the state is the one-hot history, hidden units h = tanh(W1 x + b1) are the
    components (h -> s * h + o), logits = W2 h + b2."""

    def __init__(self, vocab: int = 3, horizon: int = 3, hidden: int = 6, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.V, self.H, self.n_components = vocab, horizon, hidden
        self.w1 = torch.randn(horizon * vocab, hidden, generator=g, dtype=torch.float64)
        self.b1 = 0.5 * torch.randn(hidden, generator=g, dtype=torch.float64)
        self.w2 = torch.randn(hidden, vocab, generator=g, dtype=torch.float64)
        self.b2 = 0.5 * torch.randn(vocab, generator=g, dtype=torch.float64)
        self.horizon = horizon
        self.device = torch.device("cpu")
        self.counts = Counts()

    def logits(self, history: torch.Tensor, scales: torch.Tensor, offsets: torch.Tensor | None) -> torch.Tensor:
        x = torch.zeros(history.shape[0], self.H * self.V, dtype=torch.float64)
        for t in range(history.shape[1]):
            x[torch.arange(len(x)), t * self.V + history[:, t]] = 1.0
        h = torch.tanh(x @ self.w1 + self.b1) * scales.double()
        if offsets is not None:
            h = h + offsets.double()
        return h @ self.w2 + self.b2

    def sample(self, prompt, scales, uniforms, offsets=None) -> Rollouts:
        tokens = torch.zeros(uniforms.shape[0], 0, dtype=torch.long)
        with torch.no_grad():
            for t in range(self.H):
                probs = torch.softmax(self.logits(tokens, scales, offsets), -1)
                tokens = torch.cat([tokens, inverse_cdf(probs, uniforms[:, t].double())[:, None]], 1)
        self.counts.generate_batches += 1
        return Rollouts(tokens, torch.ones_like(tokens, dtype=torch.bool))

    def log_prob(self, prompt, rollouts, scales, offsets=None) -> torch.Tensor:
        tokens = rollouts.tokens
        total = torch.zeros(tokens.shape[0], dtype=torch.float64)
        for t in range(tokens.shape[1]):
            logp = torch.log_softmax(self.logits(tokens[:, :t], scales, offsets), -1)
            total = total + logp.gather(1, tokens[:, t:t + 1]).squeeze(1)
        self.counts.gradient_batches += 1
        return total

    def outputs(self, rollouts: Rollouts) -> list[tuple[int, ...]]:
        return [tuple(row) for row in rollouts.tokens.tolist()]

    def exact(self, scales: torch.Tensor, reward, offsets: torch.Tensor | None = None) -> torch.Tensor:
        """J(s) = sum over all V^H trajectories of pi_s(tau) R(tau), for each row of ``scales`` [B, C]."""
        trajs = torch.tensor(list(itertools.product(range(self.V), repeat=self.H)))
        rewards = torch.tensor([reward(tuple(t), None) for t in trajs.tolist()], dtype=torch.float64)
        rollouts = Rollouts(trajs, torch.ones_like(trajs, dtype=torch.bool))
        values = []
        for s in scales:
            logp = self.log_prob(None, rollouts, s[None].expand(len(trajs), -1), offsets)
            values.append((logp.exp() * rewards).sum())
        return torch.stack(values)


def reward(tau: tuple[int, ...], answer: object) -> float:
    return float(sum(tau) >= 4)


def exact_ipg(policy: ToyPolicy, steps: int) -> np.ndarray:
    """Midpoint Riemann sum of the exact gradient of J along s = alpha 1."""
    total = torch.zeros(policy.n_components, dtype=torch.float64)
    for alpha in midpoints(steps):
        s = torch.full((1, policy.n_components), alpha, dtype=torch.float64, requires_grad=True)
        (grad,) = torch.autograd.grad(policy.exact(s, reward).sum(), s)
        total += grad[0]
    return (total / steps).numpy()


def j(policy: ToyPolicy, value: float) -> float:
    return float(policy.exact(torch.full((1, policy.n_components), value, dtype=torch.float64), reward))


@pytest.fixture(scope="module")
def toy() -> ToyPolicy:
    return ToyPolicy()


@pytest.fixture(scope="module")
def mc(toy: ToyPolicy):
    return estimate_ipg(toy, [None, None], [None, None], reward, steps=4, samples=3000, batch_rows=4096,
                        endpoints=True, seed=1)


def test_exact_riemann_sum_is_complete(toy: ToyPolicy) -> None:
    assert abs(exact_ipg(toy, 64).sum() - (j(toy, 1.0) - j(toy, 0.0))) < 1e-3
    assert abs(j(toy, 1.0) - j(toy, 0.0)) > 0.05  # the check is not vacuous


def test_monte_carlo_ipg_converges_to_exact_riemann_sum(toy: ToyPolicy, mc) -> None:
    exact = exact_ipg(toy, 4)
    assert mc.stderr.max() < 0.02 and np.abs(exact).max() > 0.05
    assert np.all(np.abs(mc.ipg - exact) < 4.5 * mc.stderr + 1e-4), (mc.ipg, exact, mc.stderr)
    assert abs(mc.j0 - j(toy, 0.0)) < 0.03 and abs(mc.j1 - j(toy, 1.0)) < 0.03


def test_monte_carlo_completeness(toy: ToyPolicy, mc) -> None:
    riemann_error = abs(exact_ipg(toy, 4).sum() - (j(toy, 1.0) - j(toy, 0.0)))
    gap = abs(mc.ipg.sum() - (j(toy, 1.0) - j(toy, 0.0)))
    assert gap < 4.5 * mc.stderr_total + riemann_error + 1e-4
    assert abs(mc.completeness_gap) < 4.5 * mc.stderr_total + riemann_error + 0.06  # j0, j1 sampled too


def test_matches_captum_integrated_gradients(toy: ToyPolicy, mc) -> None:
    from captum.attr import IntegratedGradients

    ig = IntegratedGradients(lambda s: toy.exact(s, reward))
    ones = torch.ones(1, toy.n_components, dtype=torch.float64)
    captum = ig.attribute(ones, baselines=torch.zeros_like(ones), n_steps=4, method="riemann_middle")[0].numpy()
    np.testing.assert_allclose(exact_ipg(toy, 4), captum, atol=1e-10)
    assert np.all(np.abs(mc.ipg - captum) < 4.5 * mc.stderr + 1e-4)


def test_zero_coefficient_rows_skip_backward() -> None:
    policy = ToyPolicy(seed=3)
    result = estimate_ipg(policy, [None], [None], lambda tau, a: 1.0, steps=3, samples=4)
    assert policy.counts.gradient_batches == 0 and np.all(result.ipg == 0)


def test_planted_unit_ranks_first_and_ablation_beats_random() -> None:
    policy = ToyPolicy(vocab=3, horizon=3, hidden=8, seed=5)
    policy.w2 *= 0.3
    policy.w1[:, 0] = 0.0
    policy.b1[0] = 2.0  # unit 0 is always on ...
    policy.w2[0] = torch.tensor([-1.0, -1.0, 2.0], dtype=torch.float64)  # ... and drives token 2
    result = estimate_ipg(policy, [None], [None], reward, steps=4, samples=256, batch_rows=4096)
    assert int(np.argmax(result.ipg)) == 0
    rows = validate(policy, [None] * 4, [None] * 4, reward, {"ipg": result.ipg}, k=1, seeds=5, gamma=1.5,
                    samples=256, batch_rows=4096)
    by = {(r.condition, r.ranking, r.seed): r for r in rows}
    top, rand = by[("ablate", "ipg", -1)], by[("ablate", "random", -1)]
    assert top.delta < -0.3 and top.delta < rand.delta - 0.2 and top.delta_high < 0
    assert by[("amplify", "ipg", -1)].delta > 0
