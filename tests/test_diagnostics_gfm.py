"""Gated Forensic Memory: a zero gate changes nothing, a training step changes only the relay, a write must reach
the answer, the relay learns a signal its image tokens carry; held-out photographs; the vision probe."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from neurips26.methods.diagnostics import forgery, gfm, probing, vision
from neurips26.methods.diagnostics.vlm import tiny_idefics3


@pytest.fixture(scope="module")
def examples() -> list[forgery.Forgery]:
    return forgery.generate(16, size=64, seed=0)


def test_forgeries_have_exact_masks_and_token_labels(examples: list[forgery.Forgery]) -> None:
    kinds = [e.kind for e in examples]
    assert kinds[:4] == ["authentic", "copy-move", "authentic", "splice"] and set(kinds) == set(forgery.KINDS)
    for e in examples:
        assert e.image.shape == (64, 64, 3) and e.image.min() >= 0 and e.image.max() <= 1
        assert e.mask.any() == e.tampered
    e = next(e for e in examples if e.kind == "copy-move")
    labels = forgery.token_labels(e.mask, 4)
    share = e.mask.reshape(4, 16, 4, 16).mean(axis=(1, 3)).ravel()
    assert np.array_equal(labels == 1, share >= 0.5) and np.array_equal(labels == 0, share == 0)
    assert forgery.generate(3, seed=5)[2].image.tobytes() == forgery.generate(3, seed=5)[2].image.tobytes()


def test_a_zero_gate_leaves_the_outputs_bit_identical(examples: list[forgery.Forgery]) -> None:
    vlm = tiny_idefics3(layers=4, dim=32)
    inputs = vlm.inputs(examples[1].image)
    with torch.no_grad():
        plain = vlm.model(**inputs, output_hidden_states=True)
        relay = gfm.ForensicRelay(32, read_layer=1, write_layers=(2, 3)).attach(vlm.text_layers)
        relay.at(vlm.image_positions(inputs["input_ids"]))
        relayed = vlm.model(**inputs, output_hidden_states=True)
    assert torch.equal(plain.logits, relayed.logits)
    assert all(torch.equal(a, b) for a, b in zip(plain.hidden_states, relayed.hidden_states, strict=True))
    with torch.no_grad():
        relay.gate.fill_(0.5)
        opened = vlm.model(**inputs).logits
    assert not torch.equal(plain.logits, opened)  # the relay is really in the forward pass
    with pytest.raises(ValueError, match="after the read layer"):
        gfm.ForensicRelay(32, read_layer=3, write_layers=(2,))


def test_a_training_step_changes_only_the_relay(examples: list[forgery.Forgery]) -> None:
    vlm = tiny_idefics3(layers=4, dim=32)
    base = {name: p.detach().clone() for name, p in vlm.model.named_parameters()}
    relay = gfm.ForensicRelay(32, read_layer=1, write_layers=gfm.write_layers(4))
    start = {name: p.detach().clone() for name, p in relay.named_parameters()}
    result = gfm.train(vlm, relay, examples[:8], examples[8:], steps=2, lr=1e-2, batch=4)
    assert result.steps == 2 and len(result.losses) == 2 and 0 <= result.accuracy_before <= 1
    assert len(result.correct_after) == 8 and result.accuracy_after == np.mean(result.correct_after)
    assert all(torch.equal(base[name], p) for name, p in vlm.model.named_parameters())
    assert not all(p.requires_grad for p in vlm.model.parameters())
    changed = {name for name, p in relay.named_parameters() if not torch.equal(start[name], p)}
    assert "gate" in changed and any(name.startswith("encode.") for name in changed)
    assert (relay.gate != 0).all(dim=1).tolist() == [True, True]  # every write layer's gate trained


def test_a_write_after_the_last_block_is_refused_because_it_never_reaches_the_answer(
        examples: list[forgery.Forgery]) -> None:
    vlm = tiny_idefics3(layers=4, dim=32)
    assert gfm.write_layers(4) == (2, 3) and gfm.write_layers(6) == (4, 5)
    with pytest.raises(ValueError, match="last block"):
        gfm.ForensicRelay(32, read_layer=2, write_layers=(3, 4)).attach(vlm.text_layers)
    # why: the last block's output at the image tokens is read by nothing, so its gate gets no gradient
    relay = gfm.ForensicRelay(32, read_layer=1, write_layers=(3,))
    gfm.freeze(vlm.model)
    handle = vlm.text_layers[3].register_forward_hook(relay._writer(0))
    read = vlm.text_layers[0].register_forward_hook(relay._read)
    with torch.no_grad():
        relay.gate.fill_(0.5)
    loss = torch.nn.functional.cross_entropy(gfm.answer_logits(vlm, relay, examples[:4]), gfm.targets(examples[:4]))
    loss.backward()
    handle.remove()
    read.remove()
    assert relay.gate.grad is None or not relay.gate.grad.any()


def with_square(example: forgery.Forgery, on: bool) -> forgery.Forgery:
    """The image with a white square in its top-left quarter when ``on``: a signal any image tokens carry."""
    image = example.image.copy()
    if on:
        image[:32, :32] = 1.0
    return forgery.Forgery(image, example.mask, example.kind, example.photo)


def test_the_relay_overturns_the_frozen_answer_when_its_image_tokens_carry_the_signal(
        examples: list[forgery.Forgery], one_torch_thread: None) -> None:
    vlm = tiny_idefics3(layers=4, dim=32)
    planted = [with_square(e, e.tampered) for e in examples]
    if gfm.accuracy(vlm, None, planted) >= 0.5:  # the square goes on the side the frozen answer gets wrong
        planted = [with_square(e, not e.tampered) for e in examples]
    assert gfm.accuracy(vlm, None, planted) < 0.5
    relay = gfm.ForensicRelay(32, read_layer=1, write_layers=gfm.write_layers(4))
    relayed = gfm.train(vlm, relay, planted, planted, steps=40, lr=3e-2, batch=8)
    relay.detach()
    prior = gfm.train(vlm, gfm.AnswerPrior(), planted, planted, steps=40, lr=3e-2, batch=8)
    assert relayed.accuracy_after >= 0.9 and np.mean(relayed.losses[-5:]) < np.mean(relayed.losses[:5])
    assert prior.accuracy_after <= 0.5 + 1e-9  # a bias on the answer cannot tell images apart (half tampered)


def test_held_out_images_share_no_photograph_with_the_training_images() -> None:
    train, test = forgery.split_photos(seed=3)
    assert len(test) == 5 and not set(train) & set(test) and set(train) | set(test) == set(forgery.PHOTOS)
    assert forgery.split_photos(seed=3) == (train, test) and forgery.split_photos(seed=4) != (train, test)
    assert {e.photo for e in forgery.generate(12, seed=0, photos=test)} <= set(test)


def test_vision_probe_runs_over_image_tokens(examples: list[forgery.Forgery]) -> None:
    vlm = tiny_idefics3(layers=4, dim=32)
    items = vision.items(vlm, examples)
    both = [e for e in examples if e.tampered and {0, 1} <= set(forgery.token_labels(e.mask, vlm.grid).tolist())]
    assert len(items) == len(both) >= 3  # tampered images whose token grid has both labels
    tokens = probing.collect(vlm.model, items)
    assert tokens.states.shape[:2] == (5, int((tokens.labels >= 0).sum()))
    scores = probing.probe(tokens, folds=3, n_boot=20)
    assert len(scores) == 5 and all(0 <= s.auc <= 1 for s in scores)
