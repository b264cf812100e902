"""The shared-pass policy gives LMPolicy's numbers; exact short-answer outcomes, ablations and patching."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from neurips26.methods.ipg.arithmetic import FEW_SHOT, carry_additions
from neurips26.methods.ipg.baselines import answer_attributions
from neurips26.methods.ipg.estimator import estimate_ipg
from neurips26.methods.ipg.exact import (
    ablation_scales,
    answer_gradient,
    answer_probability,
    exact_match,
    unit_ablation_effects,
)
from neurips26.methods.ipg.policy import LMPolicy
from neurips26.methods.ipg.scaling import neuron_sites
from neurips26.methods.ipg.shared import SharedPolicy
from transformers import LlamaForCausalLM

from neurips26.errors import UserError
from tests.test_ipg import PROMPT, tiny_llama


@pytest.fixture(scope="module")
def model() -> LlamaForCausalLM:
    return tiny_llama()


def pair(model: LlamaForCausalLM, layers: list[int], **kw) -> tuple[LMPolicy, SharedPolicy]:
    sites = neuron_sites(model, layers)
    return (LMPolicy(model, sites, max_new_tokens=3, stop_ids=[2], **kw),
            SharedPolicy(model, sites, max_new_tokens=3, stop_ids=[2], batch_rows=3, **kw))


def test_samples_log_probs_and_row_gradients_equal_lmpolicy(model: LlamaForCausalLM) -> None:
    plain, shared = pair(model, [1], temperature=0.9)
    uniforms = torch.rand(8, 3, generator=torch.Generator().manual_seed(0))
    scales = torch.tensor([0.25] * 4 + [0.75] * 4)[:, None].repeat(1, 24)
    a, b = plain.sample(PROMPT, scales, uniforms), shared.sample(PROMPT, scales, uniforms)
    assert torch.equal(a.tokens, b.tokens) and torch.equal(a.mask, b.mask)
    torch.testing.assert_close(a.logp, b.logp, atol=1e-5, rtol=1e-5)
    rollouts = a[torch.tensor([0, 1, 0, 1, 4, 5, 4, 5])]  # duplicated rows share one group but keep their gradients
    s1, s2 = scales.clone().requires_grad_(True), scales.clone().requires_grad_(True)
    coefs = torch.tensor([1.0, -2.0, 0.5, 3.0, -1.0, 0.0, 2.0, 1.5])
    la, lb = plain.log_prob(PROMPT, rollouts, s1), shared.log_prob(PROMPT, rollouts, s2)
    (la * coefs).sum().backward()
    (lb * coefs).sum().backward()
    torch.testing.assert_close(lb, la, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(s2.grad, s1.grad, atol=1e-5, rtol=1e-5)
    assert s1.grad[5].abs().sum() == 0 and s1.grad[0].abs().sum() > 0
    distinct = {(float(scales[r, 0]), tuple(rollouts.tokens[r].tolist())) for r in range(8)}
    assert shared.counts.gradient_rows == len(distinct) <= 4 < plain.counts.gradient_rows == 8


def test_residual_is_the_untouched_lower_layers(model: LlamaForCausalLM) -> None:
    _, shared = pair(model, [1])
    with torch.no_grad():
        hidden = model(PROMPT[None], output_hidden_states=True).hidden_states[1]
    torch.testing.assert_close(shared.residual(PROMPT[None]), hidden)
    assert len(shared.memo) == 1
    shared.residual(PROMPT[None].repeat(3, 1))
    assert len(shared.memo) == 1  # memoised per distinct token sequence


def test_ipg_with_shared_passes_equals_lmpolicy(model: LlamaForCausalLM) -> None:
    plain, shared = pair(model, [0, 1])
    def score(out, answer):
        return float(out[0] % 2 == 1)
    a = estimate_ipg(plain, [PROMPT], [0], score, steps=2, samples=5, seed=1)
    b = estimate_ipg(shared, [PROMPT], [0], score, steps=2, samples=5, seed=1)
    np.testing.assert_allclose(b.ipg, a.ipg, atol=1e-6)
    np.testing.assert_allclose(b.stderr, a.stderr, atol=1e-6)
    assert np.abs(a.ipg).max() > 1e-3
    assert shared.counts.gradient_rows <= plain.counts.gradient_rows


def test_shared_policy_needs_a_llama_style_decoder() -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=16, n_embd=32, n_layer=2, n_head=4, n_positions=64)).eval()
    with pytest.raises(UserError, match="Llama-style"):
        SharedPolicy(gpt2, neuron_sites(gpt2, [1]))


def test_exact_answer_probability_ablation_and_patching(model: LlamaForCausalLM) -> None:
    plain, shared = pair(model, [1])
    answer = torch.tensor([6, 9])
    sets = [np.array([], dtype=np.int64), np.array([3, 7]), np.arange(24)]
    scales = ablation_scales(24, sets)
    assert scales[0].eq(1).all() and scales[1, [3, 7]].eq(0).all() and scales[1].sum() == 22 and scales[2].sum() == 0
    probs = answer_probability(shared, PROMPT, answer, scales)
    for row, idx in enumerate(sets):  # by hand: zero the neurons' columns of down_proj, softmax over the answer
        edited = tiny_llama()
        with torch.no_grad():
            edited.model.layers[1].mlp.down_proj.weight[:, torch.as_tensor(idx)] = 0
            logits = edited(torch.cat([PROMPT, answer])[None]).logits[0, -3:-1]
        expected = torch.log_softmax(logits, -1).gather(1, answer[:, None]).sum().exp().item()
        assert probs[row] == pytest.approx(expected, rel=1e-5)
    effects = unit_ablation_effects(shared, PROMPT, answer, np.array([3, 7, 11]))
    singles = answer_probability(plain, PROMPT, answer, ablation_scales(24, [np.array([u]) for u in (3, 7, 11)]))
    np.testing.assert_allclose(effects, probs[0] - singles, rtol=1e-3, atol=1e-8)
    assert np.abs(effects).max() > 1e-6


def test_answer_gradient_is_grad_x_act(model: LlamaForCausalLM) -> None:
    plain, shared = pair(model, [0, 1])
    answer = torch.tensor([6, 9, 4])
    scores, _ = answer_attributions(plain, [PROMPT], [answer], steps=2)
    np.testing.assert_allclose(answer_gradient(shared, PROMPT, answer), scores["grad_x_act"], rtol=1e-4, atol=1e-6)


def test_carry_additions_and_exact_match() -> None:
    items = carry_additions()
    assert len(items) == 45 and len(set(items)) == 45 and items == carry_additions()
    for prompt, answer in items:
        a, b = prompt.removeprefix(FEW_SHOT).rstrip("=").split("+")
        assert int(a) + int(b) == int(answer) and len(answer) == 2 and 1 <= int(a) <= 9 and 1 <= int(b) <= 9
    assert exact_match((1, 4, 7), (1, 4)) == 1.0 and exact_match((1, 5), (1, 4)) == 0.0
    assert exact_match((1,), (1, 4)) == 0.0
