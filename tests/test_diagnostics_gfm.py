"""Gated Forensic Memory: a zero gate changes nothing, a training step changes only the relay; the vision probe."""

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
        relay = gfm.ForensicRelay(32, read_layer=2, write_layers=(3, 4)).attach(vlm.text_layers)
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
    relay = gfm.ForensicRelay(32, read_layer=2, write_layers=(3, 4))
    start = {name: p.detach().clone() for name, p in relay.named_parameters()}
    result = gfm.train(vlm, relay, examples[:8], examples[8:], steps=2, lr=1e-2)
    assert result.steps == 2 and len(result.losses) == 2 and 0 <= result.accuracy_before <= 1
    assert all(torch.equal(base[name], p) for name, p in vlm.model.named_parameters())
    assert not all(p.requires_grad for p in vlm.model.parameters())
    changed = {name for name, p in relay.named_parameters() if not torch.equal(start[name], p)}
    assert "gate" in changed and any(name.startswith("encode.") for name in changed)


def test_vision_probe_runs_over_image_tokens(examples: list[forgery.Forgery]) -> None:
    vlm = tiny_idefics3(layers=4, dim=32)
    items = vision.items(vlm, examples)
    both = [e for e in examples if e.tampered and {0, 1} <= set(forgery.token_labels(e.mask, vlm.grid).tolist())]
    assert len(items) == len(both) >= 3  # tampered images whose token grid has both labels
    tokens = probing.collect(vlm.model, items)
    assert tokens.states.shape[:2] == (5, int((tokens.labels >= 0).sum()))
    scores = probing.probe(tokens, folds=3, n_boot=20)
    assert len(scores) == 5 and all(0 <= s.auc <= 1 for s in scores)
