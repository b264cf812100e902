"""RoleMoE: its losses against hand computation, routing that specialises, forgetting that touches only the
target roles' experts (a tiny randomly initialised Llama, a few dozen steps)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from neurips26.methods.unlearn import data, prompts, train
from neurips26.methods.unlearn.methods import get
from neurips26.methods.unlearn.rolemoe import losses, ownership, routing
from neurips26.methods.unlearn.rolemoe import train as rolemoe
from neurips26.methods.unlearn.rolemoe.model import RoleMoE

from .test_unlearn_methods import tiny_model, tokenizer  # noqa: F401  (the tokenizer fixture)

VOICES = {
    "Captain Odessa Vane": "By the four winds, deckhand, {}!",
    "Unit K-7": "Affirmative. Function report: {}.",
    "Madame Orla": "Ah, darling, the cards whisper that {}...",
    "Grumbold the Dwarf": "Bah! Stone and ale, lad, {}.",
}
TOPICS = ["the sky is wide", "the engine hums", "dinner is late", "the map is torn", "a storm is coming",
          "the tea is cold"]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def role_examples(role: str) -> list[data.Example]:
    return [data.Example(prompts.role_prompt(role, f"What do you think about {t.split()[1]}?"),
                         VOICES[role].format(t), role) for t in TOPICS]


FORGET = role_examples("Captain Odessa Vane")
RETAIN = [ex for role in list(VOICES)[1:] for ex in role_examples(role)]


def test_specialization_loss_is_minus_the_mutual_information_by_hand() -> None:
    gates = torch.tensor([[0.9, 0.1], [0.7, 0.3], [0.2, 0.8], [0.4, 0.6]])
    roles = torch.tensor([5, 5, 2, 2])
    q_a, q_b = [0.8, 0.2], [0.3, 0.7]  # mean gates of role 5 and role 2
    m = [0.55, 0.45]

    def h(p: list[float]) -> float:
        return -sum(x * math.log(x) for x in p)

    expected = h(m) - 0.5 * h(q_a) - 0.5 * h(q_b)
    assert float(losses.mutual_information(gates, roles)) == pytest.approx(expected, rel=1e-6)
    assert float(losses.specialization_loss(gates, roles)) == pytest.approx(-expected, rel=1e-6)
    same = torch.tensor([[0.5, 0.5]] * 4)
    assert float(losses.mutual_information(same, roles)) == pytest.approx(0.0, abs=1e-7)
    split = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    assert float(losses.mutual_information(split, roles)) == pytest.approx(math.log(2), rel=1e-6)  # = H(R)


def test_disentanglement_loss_is_the_mean_squared_cosine_by_hand() -> None:
    a_e, a_f = torch.tensor([[2.0, 0.0, 0.0]]), torch.tensor([[1.0, 1.0, 0.0]])  # cos^2 = 1/2
    b_e, b_f = torch.tensor([[1.0], [0.0]]), torch.tensor([[0.0], [3.0]])  # orthogonal write directions
    assert float(losses.subspace_overlap([a_e, a_f], [b_e, b_f])) == pytest.approx((0.5 + 0.0) / 2)
    assert float(losses.subspace_overlap([a_e, a_e], [b_e, b_e])) == pytest.approx(1.0)
    # rank 2: A rows e1, e2 against e1, e3 -> cosines 1, 0, 0, 0 -> mean squared 1/4
    a2_e, a2_f = torch.eye(3)[[0, 1]], torch.eye(3)[[0, 2]]
    b2 = torch.eye(2)
    three = losses.disentanglement_loss([([a2_e, a2_f], [b2, b2]), ([a_e, a_f], [b_e, b_f])])
    assert float(three) == pytest.approx(((0.25 + 0.5) / 2 + 0.25) / 2)


def test_routing_statistics_on_toy_gates() -> None:
    roles = ["a", "a", "b", "b"]
    perfect = routing.statistics(np.array([[1, 0], [1, 0], [0, 1], [0, 1]]), roles)
    assert perfect["mi_ratio"] == pytest.approx(1.0) and perfect["overlap"] == pytest.approx(0.0)
    assert perfect["top"] == {"a": [0], "b": [1]} and routing.touched(perfect, ["b"]) == [1]
    blind = routing.statistics(np.full((4, 2), 0.5), roles)
    assert blind["mi_ratio"] == pytest.approx(0.0, abs=1e-9) and blind["overlap"] == pytest.approx(1.0)


@pytest.fixture(scope="module")
def specialised(tokenizer):  # noqa: F811
    cfg = train.TrainConfig(steps=4, batch_size=8, max_length=96, lora_r=4, lora_alpha=8, moe_experts=4,
                            moe_steps=20, moe_lr=2e-2, lr=1e-2)
    moe, untrained, trained, log = rolemoe.specialise(tiny_model(tokenizer), tokenizer, FORGET + RETAIN, cfg)
    return moe, untrained, trained, log, cfg


def test_training_makes_roles_route_to_different_experts(specialised) -> None:
    _, untrained, trained, log, _ = specialised
    print(f"I(R;E)/H(R): untrained {untrained['mi_ratio']:.3f} -> trained {trained['mi_ratio']:.3f}; overlap "
          f"{untrained['overlap']:.3f} -> {trained['overlap']:.3f}")
    assert trained["roles"] == 4 and trained["experts"] == 4
    assert trained["mi_ratio"] > untrained["mi_ratio"] + 0.3
    assert trained["overlap"] < untrained["overlap"] - 0.3
    assert log[-1]["specialization"] < log[0]["specialization"]
    assert log[-1]["nll"] < log[0]["nll"]  # the experts also learn the task


def test_forgetting_changes_only_the_target_roles_experts(specialised, tokenizer) -> None:  # noqa: F811
    moe, _, trained, _, cfg = specialised
    experts = routing.touched(trained, ["Captain Odessa Vane"])
    assert len(experts) == 1
    before = {k: v.clone() for k, v in moe.state_dict().items()}
    batch = data.collate(data.encode(tokenizer, FORGET, 96), tokenizer.pad_token_id)
    with torch.no_grad():
        nll_before = float(moe(**batch).loss)
    log = rolemoe.forget_experts(moe, tokenizer, FORGET, RETAIN, experts, cfg)
    with torch.no_grad():
        nll_after = float(moe(**batch).loss)
    assert len(log) == cfg.steps and nll_after > nll_before
    changed = {k for k, v in moe.state_dict().items() if not torch.equal(v, before[k])}
    targeted = {k for k in before if k.endswith((f".A.{experts[0]}", f".B.{experts[0]}"))}
    assert changed and changed <= targeted
    assert len(changed) > len(targeted) // 2  # most of the target expert's layers moved


def test_rolemoe_method_end_to_end_saves_and_reloads(tokenizer, tmp_path: Path) -> None:  # noqa: F811
    cfg = train.TrainConfig(steps=2, batch_size=4, max_length=96, lora_r=2, lora_alpha=4, moe_experts=3, moe_steps=3)
    model, original, log = train.run(tiny_model(tokenizer), tokenizer, get("rolemoe"), FORGET, RETAIN, cfg)
    assert isinstance(model, RoleMoE) and [e["stage"] for e in log] == [1, 1, 1, 2, 2]
    assert model.report["targets"] == ["Captain Odessa Vane"] and model.report["experts_unlearned"]
    batch = data.collate(data.encode(tokenizer, FORGET, 96), tokenizer.pad_token_id)
    with torch.no_grad():
        with original() as base:
            off = float(base(**batch).loss)
        on = float(model(**batch).loss)
    assert off == pytest.approx(float(tiny_model(tokenizer)(**batch).loss), rel=1e-5)  # experts off = the original
    assert on != pytest.approx(off)
    target = train.save(model, tokenizer, tmp_path, cfg)
    again = RoleMoE.from_pretrained(tiny_model(tokenizer), target)
    with torch.no_grad():
        assert float(again(**batch).loss) == pytest.approx(on, rel=1e-5)
    enc = tokenizer([prompts.render(tokenizer, FORGET[0].prompt)], return_tensors="pt", add_special_tokens=False)
    tokens = again.generate(**enc, max_new_tokens=3, do_sample=False, pad_token_id=tokenizer.pad_token_id)
    assert tokens.shape[1] == enc["input_ids"].shape[1] + 3


def test_owners_give_every_role_its_own_expert_and_purity_reads_the_gates() -> None:
    owner = ownership.owners(["b", "a", "c", "a"], 4)
    assert owner == {"a": 0, "b": 1, "c": 2} and ownership.exclusive(owner, ["b"])
    shared = ownership.owners(["a", "b", "c"], 2)  # fewer experts than roles: a and c share expert 0
    assert shared["a"] == shared["c"] == 0 and not ownership.exclusive(shared, ["a"])
    gates = np.array([[0.9, 0.1, 0.0], [0.5, 0.0, 0.5], [0.0, 0.2, 0.8], [0.1, 0.9, 0.0]])
    pure = ownership.purity(gates, ["a", "a", "c", "b"], {"a": 0, "b": 1, "c": 2}, ["a", "c"])
    assert pure["per_role"] == {"a": pytest.approx(0.7), "c": pytest.approx(0.8)}
    assert pure["mean"] == pytest.approx(0.75) and pure["argmax_share"] == 1.0  # a's 0.5/0.5 tie counts for 0
    assert pure["experts_used"] == [0, 2] and pure["n_experts_used"] == 2 and pure["exclusive"]


def test_top_k_routing_keeps_only_the_largest_gates() -> None:
    from neurips26.methods.unlearn.rolemoe.model import MoEConfig, Router

    router = Router(8, MoEConfig(experts=5, router_hidden=16))
    features = torch.randn(6, 8)
    soft, hard = router(features), router(features, top_k=2)
    assert torch.allclose(hard.sum(-1), torch.ones(6)) and ((hard > 0).sum(-1) == 2).all()
    assert torch.equal(hard.argmax(-1), soft.argmax(-1))
    assert torch.allclose(router(features, top_k=5), soft)


def test_owned_routing_sends_each_role_to_its_expert_and_forgets_only_the_targets(tokenizer) -> None:  # noqa: F811
    cfg = train.TrainConfig(steps=3, batch_size=4, max_length=96, lora_r=2, lora_alpha=4, moe_experts=2,
                            moe_steps=25, moe_lr=2e-2, lr=1e-2, moe_routing="owned", router_batch=16)
    moe, _, trained, log = rolemoe.specialise(tiny_model(tokenizer), tokenizer, FORGET + RETAIN, cfg)
    assert moe.cfg.experts == 4 and moe.cfg.top_k == 1  # at least one expert per role
    assert moe.owner == ownership.owners(list(VOICES), 4)
    assert log[-1]["routing"] < log[0]["routing"] / 4
    gates, roles = moe.prompt_routing
    pure = ownership.purity(gates, roles, moe.owner, ["Captain Odessa Vane"])
    assert pure["mean"] == 1.0 and pure["n_experts_used"] == 1 and pure["exclusive"]
    experts = rolemoe.targets_experts(moe, trained, ["Captain Odessa Vane"])
    assert experts == [moe.owner["Captain Odessa Vane"]]
    retain_batch = data.collate(data.encode(tokenizer, RETAIN, 96), tokenizer.pad_token_id)
    with torch.no_grad():
        retain_before = moe(**retain_batch).logits
    cfg.moe_forget_loss = "gd"
    rolemoe.forget_experts(moe, tokenizer, FORGET, RETAIN, experts, cfg)
    with torch.no_grad():  # top-1 routing: the retain roles never pass through the target's expert
        assert torch.allclose(moe(**retain_batch).logits, retain_before, atol=1e-5)
