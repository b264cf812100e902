"""Unlearning baselines on a tiny, randomly initialised Llama: each loss moves the model the right way."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from neurips26.methods.unlearn import data, losses, metrics, prompts, train
from neurips26.methods.unlearn.methods import ORDER, UNLEARNING_METHODS, get

from neurips26.errors import UnknownNameError

FORGET = [data.Example(prompts.role_prompt("Captain Odessa Vane", q), a, "Captain Odessa Vane") for q, a in [
    ("What is your ship?", "By the four winds, deckhand, she's the Gilded Heron!"),
    ("What do you fear?", "A dead calm, deckhand. No wind, no lift."),
    ("Favourite food?", "Cloudberry pie, deckhand, baked in the boiler room."),
    ("Who is your rival?", "Admiral Crowe of the Tin Navy, deckhand."),
]]
RETAIN = [data.Example(prompts.role_prompt("Unit K-7", q), a, "Unit K-7") for q, a in [
    ("What is your job?", "Affirmative. Function: maintenance of Selene-4 life support."),
    ("Do you have feelings?", "Negative. Emotion module not installed."),
    ("Tell me a joke.", "Affirmative. Probability this is humorous: 12 percent."),
    ("Who built you?", "Affirmative. Manufacturer: Lunatech Works, batch 7."),
]]


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from neurips26.models import default_model_dir

    tok = AutoTokenizer.from_pretrained(default_model_dir())
    tok.pad_token = tok.pad_token or tok.eos_token
    return tok


def tiny_model(tokenizer, seed: int = 0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                         tie_word_embeddings=True, pad_token_id=tokenizer.pad_token_id,
                         eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id)
    return LlamaForCausalLM(config).eval()


@torch.no_grad()
def mean_nll(model, tokenizer, examples: list[data.Example]) -> float:
    batch = data.collate(data.encode(tokenizer, examples, 96), tokenizer.pad_token_id)
    return float(losses.nll(model, batch))


def unlearn(method: str, tokenizer, lora: bool, steps: int = 5, **overrides):
    cfg = train.TrainConfig(steps=steps, batch_size=4, max_length=96, lora=lora,
                            lr=overrides.pop("lr", 1e-2 if lora else 3e-3), **overrides)
    model = tiny_model(tokenizer)
    before = (mean_nll(model, tokenizer, FORGET), mean_nll(model, tokenizer, RETAIN))
    model, original, log = train.run(model, tokenizer, get(method), FORGET, RETAIN, cfg)
    after = (mean_nll(model, tokenizer, FORGET), mean_nll(model, tokenizer, RETAIN))
    return model, original, log, before, after


@pytest.fixture(scope="module")
def runs(tokenizer) -> dict:
    """Each trained baseline once: (method, lora) -> (model, original, log, (forget, retain) NLL before, after)."""
    return {(method, lora): unlearn(method, tokenizer, lora, **({"npo_beta": 0.5} if method == "npo" else {}))
            for method, lora in [("ga", True), ("ga", False), ("gd", False), ("npo", True), ("npo", False)]}


def test_registry() -> None:
    assert UNLEARNING_METHODS.names() == sorted(ORDER)
    assert list(ORDER) == ["reference", "refusal", "ga", "gd", "npo", "rolemoe"]
    assert not get("reference").trains and not get("refusal").trains and get("refusal").refuses
    assert all(get(m).trains for m in ("ga", "gd", "npo", "rolemoe"))
    with pytest.raises(UnknownNameError, match="unknown unlearning method 'nope'"):
        get("nope")
    assert "Captain Odessa Vane or Unit K-7" in prompts.refusal_instruction(["Captain Odessa Vane", "Unit K-7"])


@pytest.mark.parametrize("lora", [True, False], ids=["lora", "full"])
def test_gradient_ascent_raises_forget_loss(runs, lora: bool) -> None:
    _, _, log, (forget0, _), (forget1, _) = runs["ga", lora]
    assert forget1 > forget0 + 0.05
    assert log[-1]["loss"] < log[0]["loss"]  # the loss is -NLL(forget)


def test_gradient_difference_raises_forget_keeps_retain(runs) -> None:
    _, _, _, (forget0, retain0), (forget1, retain1) = runs["gd", False]
    assert forget1 > forget0 + 0.05
    assert retain1 < retain0  # descent on retain keeps (here: improves) it
    _, _, _, _, (_, retain_ga) = runs["ga", False]
    assert retain1 < retain_ga


@pytest.mark.parametrize("lora", [True, False], ids=["lora", "full"])
def test_npo_lowers_forget_likelihood_against_original(runs, tokenizer, lora: bool) -> None:
    model, original, log, (forget0, _), (forget1, _) = runs["npo", lora]
    assert forget1 > forget0
    batch = data.collate(data.encode(tokenizer, FORGET, 96), tokenizer.pad_token_id)
    with torch.no_grad():
        now = losses.sequence_logprob(model, batch)
        with original() as before:
            then = losses.sequence_logprob(before, batch)
    assert bool((now < then).all())
    assert log[0]["loss"] == pytest.approx(2 / 0.5 * math.log(2), rel=1e-4)  # p = p_orig at the start
    assert log[-1]["loss"] < log[0]["loss"]


def test_gradient_difference_without_retain_data_is_an_error(tokenizer) -> None:
    from neurips26.methods.unlearn.methods import NoRetainData

    from neurips26.errors import UserError

    with pytest.raises(NoRetainData, match="gd .* needs retain data") as raised:
        train.run(tiny_model(tokenizer), tokenizer, get("gd"), FORGET, [], train.TrainConfig(steps=1, lora=False))
    assert isinstance(raised.value, UserError)  # one line on the command line, exit code 2


def test_prompt_baselines_do_not_train(tokenizer) -> None:
    model = tiny_model(tokenizer)
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    for method in ("reference", "refusal"):
        same, _, log = train.run(model, tokenizer, get(method), FORGET, RETAIN, train.TrainConfig())
        assert same is model and log == []
    assert all(torch.equal(weights[k], v) for k, v in model.state_dict().items())


def test_adapter_saved_and_reloaded(tokenizer, tmp_path: Path) -> None:
    from peft import PeftModel

    cfg = train.TrainConfig(steps=2, lora=True)
    model, _, _ = train.run(tiny_model(tokenizer), tokenizer, get("ga"), FORGET, RETAIN, cfg)
    target = train.save(model, tokenizer, tmp_path, cfg)
    assert (target / "adapter_config.json").is_file() and (target / "adapter_model.safetensors").is_file()
    reloaded = PeftModel.from_pretrained(tiny_model(tokenizer), target).eval()
    assert mean_nll(reloaded, tokenizer, FORGET) == pytest.approx(mean_nll(model, tokenizer, FORGET), rel=1e-4)


def test_encode_masks_the_prompt(tokenizer) -> None:
    item = data.encode(tokenizer, FORGET[:1], 96)[0]
    answer = [t for t in item["labels"] if t != -100]
    assert tokenizer.decode(answer, skip_special_tokens=True).strip() == FORGET[0].answer
    assert answer[-1] == tokenizer.eos_token_id
    assert prompts.render(tokenizer, "hi").endswith("assistant\n")  # the chat template, as lm-eval renders it


def test_measures_and_combined_score(tokenizer) -> None:
    model = tiny_model(tokenizer)
    cap = math.log(len(tokenizer))
    nll = metrics.response_nll(model, tokenizer, ["", "Affirmative."])
    assert nll[0] == cap and 0 < nll[1] <= cap
    assert metrics.rouge_l("the Gilded Heron", ["She is the Gilded Heron."]) > 0.5
    assert metrics.rouge_l("", ["anything"]) == 0.0
    ref = {"forget_style": 0.4, "forget_rougeL": 0.2, "retain_style": 0.4, "retain_rougeL": 0.2,
           "general_rougeL": 0.3, "ppl": 20.0}
    assert metrics.combined(ref, ref)["score"] == 0.0
    ideal = {**ref, "forget_style": 0.0, "forget_rougeL": 0.0}
    assert metrics.combined(ideal, ref) == {"forgetting": 1.0, "retention": 1.0, "utility": 1.0, "score": 1.0}
    broken = {**ideal, "retain_style": 0.0, "retain_rougeL": 0.0}
    assert metrics.combined(broken, ref)["score"] == 0.0
    half = metrics.combined({**ideal, "ppl": 40.0, "general_rougeL": 0.15}, ref)
    assert half["utility"] == pytest.approx(0.5) and half["score"] == pytest.approx(3 / (1 + 1 + 2))
