"""IPG on transformers models: hooks, sampling vs scoring, batching, captum oracles, the task, the CLI."""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from neurips26.methods.ipg import arithmetic
from neurips26.methods.ipg.baselines import answer_attributions
from neurips26.methods.ipg.estimator import estimate_ipg, row_gradients, sample_rows
from neurips26.methods.ipg.outcomes import final_number, number_match
from neurips26.methods.ipg.policy import LMPolicy
from neurips26.methods.ipg.scaling import SAE, intervene, neuron_sites, sae_site
from transformers import LlamaConfig, LlamaForCausalLM

PROMPT = torch.tensor([1, 5, 9, 4, 7])


def tiny_llama(vocab: int = 16, seed: int = 0, init: float = 0.3) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=24, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         initializer_range=init, bos_token_id=1, eos_token_id=2, pad_token_id=2,
                         tie_word_embeddings=False)
    return LlamaForCausalLM(config).eval()


def odd(out: tuple[int, ...], answer: object) -> float:
    return float(out[0] % 2 == 1)


@pytest.fixture(scope="module")
def model() -> LlamaForCausalLM:
    return tiny_llama()


def test_neuron_multipliers_one_is_identity_zero_is_ablation(model: LlamaForCausalLM) -> None:
    sites = neuron_sites(model, [0, 1])
    assert [s.size for s in sites] == [24, 24] and sites[0].module is model.model.layers[0].mlp.down_proj
    with torch.no_grad():
        plain = model(PROMPT[None]).logits
        with intervene(sites, torch.ones(1, 48)):
            same = model(PROMPT[None]).logits
        scales = torch.ones(1, 48)
        scales[0, :24] = 0
        with intervene(sites, scales):
            zeroed = model(PROMPT[None]).logits
        ablated = copy.deepcopy(model)
        ablated.model.layers[0].mlp.down_proj.weight.zero_()
        expected = ablated(PROMPT[None]).logits
    torch.testing.assert_close(same, plain)
    torch.testing.assert_close(zeroed, expected)
    assert not torch.allclose(zeroed, plain)
    with pytest.raises(ValueError, match="out of range"):
        neuron_sites(model, [2])


def test_other_architecture_gpt2() -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=16, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                      eos_token_id=2, bos_token_id=1)).eval()
    sites = neuron_sites(gpt2, [1])
    assert sites[0].module is gpt2.transformer.h[1].mlp.c_proj and sites[0].size == 128
    policy = LMPolicy(gpt2, sites, temperature=0.8, max_new_tokens=5)
    scales = torch.full((4, 128), 0.5)
    rollouts = policy.sample(PROMPT, scales, torch.rand(4, 5, generator=torch.Generator().manual_seed(0)))
    with torch.no_grad():
        torch.testing.assert_close(policy.log_prob(PROMPT, rollouts, scales), rollouts.logp, atol=1e-4, rtol=1e-4)


def test_sae_features_reconstruct_exactly_at_one(model: LlamaForCausalLM, tmp_path: Path) -> None:
    from safetensors.torch import save_file

    g = torch.Generator().manual_seed(0)
    weights = {"W_enc": torch.randn(32, 40, generator=g), "b_enc": torch.zeros(40),
               "W_dec": torch.randn(32, 40, generator=g),  # stored [d, F]: oriented on load
               "b_dec": torch.randn(32, generator=g)}
    save_file(weights, tmp_path / "sae.safetensors")
    sae = SAE.load(tmp_path / "sae.safetensors", d_model=32)
    assert sae.w_dec.shape == (40, 32)
    site = sae_site(model, 0, sae)
    with torch.no_grad():
        plain = model(PROMPT[None]).logits
        with intervene([site], torch.ones(1, 40)):
            same = model(PROMPT[None]).logits
        with intervene([site], torch.zeros(1, 40)):
            off = model(PROMPT[None]).logits
    torch.testing.assert_close(same, plain, atol=1e-4, rtol=1e-4)
    assert not torch.allclose(off, plain, atol=1e-3)
    policy = LMPolicy(model, [site], max_new_tokens=2)
    result = estimate_ipg(policy, [PROMPT], [None], odd, steps=2, samples=4)
    assert result.ipg.shape == (40,) and np.isfinite(result.ipg).all()
    save_file({"W_enc": weights["W_enc"]}, tmp_path / "bad.safetensors")
    with pytest.raises(ValueError, match="lacks"):
        SAE.load(tmp_path / "bad.safetensors", d_model=32)


def test_sampling_log_probs_match_teacher_forcing(model: LlamaForCausalLM) -> None:
    policy = LMPolicy(model, neuron_sites(model, [0, 1]), temperature=0.7, max_new_tokens=8, stop_ids=[2, 3])
    scales = torch.linspace(0, 1.5, 12)[:, None].repeat(1, 48)
    rollouts = policy.sample(PROMPT, scales, torch.rand(12, 8, generator=torch.Generator().manual_seed(0)))
    assert rollouts.mask.sum(1).min() < rollouts.mask.shape[1]  # some rows stopped early
    with torch.no_grad():
        scored = policy.log_prob(PROMPT, rollouts, scales)
    torch.testing.assert_close(scored, rollouts.logp, atol=1e-4, rtol=1e-4)


def test_batched_gradients_equal_row_by_row(model: LlamaForCausalLM) -> None:
    policy = LMPolicy(model, neuron_sites(model, [1]), max_new_tokens=6, stop_ids=[2, 3])
    alphas = torch.tensor([0.25, 0.25, 0.25, 0.75, 0.75, 0.75])
    rollouts = sample_rows(policy, PROMPT, alphas, torch.Generator().manual_seed(1), batch_rows=4)
    coefs = torch.tensor([0.5, -0.25, 0.0, 1.0, -1.0, 0.3], dtype=torch.float64)
    one = row_gradients(policy, PROMPT, rollouts, alphas, coefs, batch_rows=1)
    before = policy.counts.gradient_batches
    all_rows = row_gradients(policy, PROMPT, rollouts, alphas, coefs, batch_rows=64)
    assert policy.counts.gradient_batches == before + 1
    torch.testing.assert_close(one, all_rows, atol=1e-6, rtol=1e-5)
    assert torch.all(one[2] == 0)


def exact_outcome(policy: LMPolicy, scales: torch.Tensor) -> torch.Tensor:
    """J(s) for one-token completions: sum_v pi_s(v) R(v), for each row of ``scales``."""
    vocab = torch.arange(policy.model.config.vocab_size)
    rewards = torch.tensor([odd((v,), None) for v in vocab.tolist()])
    from neurips26.methods.ipg.policy import Rollouts

    rollouts = Rollouts(vocab[:, None], torch.ones(len(vocab), 1, dtype=torch.bool))
    return torch.stack([(policy.log_prob(PROMPT, rollouts, s[None].expand(len(vocab), -1)).exp() * rewards).sum()
                        for s in scales])


def test_lm_ipg_matches_captum_on_exact_outcome(model: LlamaForCausalLM) -> None:
    from captum.attr import IntegratedGradients

    policy = LMPolicy(model, neuron_sites(model, [1]), temperature=0.5, max_new_tokens=1, stop_ids=[])
    ones = torch.ones(1, policy.n_components)
    captum = IntegratedGradients(lambda s: exact_outcome(policy, s)).attribute(
        ones, baselines=torch.zeros_like(ones), n_steps=4, method="riemann_middle")[0].detach().numpy()
    mc = estimate_ipg(policy, [PROMPT], [None], odd, steps=4, samples=2000, batch_rows=8000, endpoints=True)
    assert np.abs(captum).max() > 5 * mc.stderr.max()  # the comparison has power
    assert np.all(np.abs(mc.ipg - captum) < 4.5 * mc.stderr + 1e-5)
    j1 = float(exact_outcome(policy, ones))
    j0 = float(exact_outcome(policy, torch.zeros_like(ones)))
    assert abs(captum.sum() - (j1 - j0)) < 0.05  # completeness, up to the 4-step Riemann error


def test_baselines_match_captum(model: LlamaForCausalLM) -> None:
    from captum.attr import InputXGradient, IntegratedGradients

    policy = LMPolicy(model, neuron_sites(model, [0, 1]), temperature=0.7)
    reference = torch.tensor([6, 3, 11])
    from neurips26.methods.ipg.policy import Rollouts

    def answer_logp(s: torch.Tensor) -> torch.Tensor:
        rollouts = Rollouts(reference[None].expand(len(s), -1), torch.ones(len(s), 3, dtype=torch.bool))
        return policy.log_prob(PROMPT, rollouts, s, temperature=1.0)

    scores, mean = answer_attributions(policy, [PROMPT], [reference], steps=5)
    ones = torch.ones(1, policy.n_components)
    ig = IntegratedGradients(answer_logp).attribute(ones, baselines=torch.zeros_like(ones), n_steps=5,
                                                    method="riemann_middle")[0].detach().numpy()
    gxa = InputXGradient(answer_logp).attribute(ones.clone().requires_grad_(True))[0].detach().numpy()
    np.testing.assert_allclose(scores["integrated_gradients"], ig, atol=1e-5, rtol=1e-4)
    np.testing.assert_allclose(scores["grad_x_act"], gxa, atol=1e-5, rtol=1e-4)
    assert scores["activation"].shape == mean.shape == (48,) and (scores["activation"] >= np.abs(mean) - 1e-9).all()


def test_arithmetic_problems_are_checkable() -> None:
    problems = arithmetic.generate(50, steps=3, seed=7)
    assert problems == arithmetic.generate(50, steps=3, seed=7) and problems != arithmetic.generate(50, 3, seed=8)
    for p in problems:  # recompute each answer from the text
        sentences = p.question.split(". ")
        value = int(re.search(r"has (\d+)", sentences[0]).group(1))
        for s in sentences[1:-1]:  # the operations, between the start and the question
            nums = [int(n) for n in re.findall(r"\d+", s)]
            if "bags" in s or "boxes" in s:
                value += nums[0] * nums[1]
            elif re.search(r"gives|loses|uses", s):
                value -= nums[0]
            else:
                value += nums[0]
        assert str(value) == p.answer and value >= 1 and p.steps == 3
    with pytest.raises(ValueError):
        arithmetic.generate(0)


def test_final_number() -> None:
    assert final_number("Tom has 5 + 3 = 8 apples.") == "8"
    assert final_number("The answer is 1,200. Then 7 more") == "1200"
    assert final_number("#### 42") == "42" and final_number("no digits") is None
    assert number_match("So she has 14.0 marbles", "14") == 1.0 and number_match("13", "14") == 0.0


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama with the embedded model's tokenizer, saved as a model folder."""
    from transformers import AutoTokenizer

    from neurips26.models import default_model_dir

    folder = tmp_path_factory.mktemp("tiny-llama")
    tokenizer = AutoTokenizer.from_pretrained(default_model_dir())
    tiny_llama(vocab=len(tokenizer), init=0.02).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_cli_writes_ranked_table_and_plot(tiny_folder: Path, tmp_path: Path) -> None:
    import datasets
    import typer
    from neurips26.methods.ipg.cli import ipg
    from typer.testing import CliRunner

    app = typer.Typer()
    app.command()(ipg)
    out = tmp_path / "run"
    args = ["--model", str(tiny_folder), "--layers", "0,1", "--steps", "2", "--samples", "2", "--problems", "2",
            "--max-new-tokens", "3", "--eval-samples", "2", "--seeds", "2", "--top-k", "3", "--device", "cpu",
            "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    components = datasets.load_dataset(str(out), "components", split="train")
    assert len(components) == 48 and components["rank"] == list(range(1, 49))
    assert set(components["site"]) == {"L0", "L1"} and sorted(components["ipg"], reverse=True) == components["ipg"]
    validation = datasets.load_dataset(str(out), "validation", split="train")
    assert validation["condition"].count("ablate") == 4 + 3 and validation["condition"].count("amplify") == 1 + 3
    card = (out / "README.md").read_text()
    assert (out / "ipg.png").stat().st_size > 0 and "Integrated Policy Gradient" in card and "2 held-out" in card
    shutil.rmtree(out / "data")
    bad = CliRunner().invoke(app, [*args[:4], "--layers", "0,x"])
    assert isinstance(bad.exception, ValueError) and "comma-separated" in str(bad.exception)
    bad = CliRunner().invoke(app, [*args, "--samples", "1"])
    assert isinstance(bad.exception, ValueError) and "samples" in str(bad.exception)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    bad = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "mine")])
    assert isinstance(bad.exception, FileExistsError) and (tmp_path / "mine" / "notes.txt").is_file()


def test_embedded_model_smoke() -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from neurips26.models import default_model_dir

    folder = default_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    policy = LMPolicy(model, neuron_sites(model, [15]), tokenizer, max_new_tokens=3)
    problem = arithmetic.generate(1, steps=1)[0]
    prompt = torch.tensor(arithmetic.prompt_ids(tokenizer, problem.question))
    result = estimate_ipg(policy, [prompt], [problem.answer], lambda out, answer: float(len(out) % 2),
                          steps=2, samples=2)
    assert result.ipg.shape == (1536,) and np.isfinite(result.ipg).all()
    assert policy.counts.generate_batches == 1 and policy.counts.gradient_batches <= 1
