"""The FiC claim: on-policy self-distillation into the sharded view against the better control (fine-tuning on the
concatenated view, or no distillation) at equal optimiser steps; and its components: chat ids built turn by turn,
the student's own replies in its sharded view, the no-distillation control leaving the model as it was."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest
from neurips26.methods.fic import toy
from neurips26.methods.fic.chatids import ChatIds, generate
from neurips26.methods.fic.distill import DistillConfig, distill, student_contexts, student_messages
from neurips26.methods.fic.experiment import ARMS, recovered, splits
from neurips26.methods.fic.play import play
from transformers import AutoTokenizer

from neurips26 import models

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import run_claim  # noqa: E402
from claims.fic import SCALES  # noqa: E402  (registers the claim)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(models.default_model_dir())


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    data = splits()
    return data["train"] + data["test"]


@pytest.fixture(scope="module")
def chat(tokenizer, rows) -> ChatIds:
    return ChatIds.compact(tokenizer, toy.domain_texts(rows))


def test_tiny_run_writes_arms_at_equal_compute_and_both_controls_as_conditions(tmp_path: Path) -> None:
    res = run_claim("fic", scale="tiny", seeds=3, out=tmp_path)
    written = json.loads((tmp_path / "fic.json").read_text())
    assert written["name"] == "fic" and written["scale"] == "tiny" and written["seeds"] == [0, 1, 2]
    assert set(written["arms"]) == {"before", "control", *ARMS}
    steps = {a: written["arms"][a]["compute"]["train_steps"] for a in ("control", *ARMS)}
    assert len(set(steps.values())) == 1 and written["arms"]["before"]["compute"]["train_steps"] < steps["fic"]
    assert written["control_is"] in ("concat_ft", "no_distill")
    assert written["arms"]["control"] == written["arms"][written["control_is"]]
    assert set(written["conditions"]) == {"vs concat_ft", "vs no_distill"}
    for arm in written["arms"].values():
        assert arm["n_items"] == [SCALES["tiny"].test_limit] * 3 and all(0 <= v <= 1 for v in arm["values"])
    for arm in ARMS:
        assert set(written["settings"][arm]) == {"full", "concat", "sharded"}
        assert len(written["recovered"][arm]) == 3
    assert res["verdict"] in ("reproduced", "not reproduced")


def test_turn_by_turn_ids_equal_the_tokenizers_chat_template(tokenizer, rows) -> None:
    row = rows[0]
    messages = student_messages(row, ["12", "Sure, go on.", "7"])
    expected = tokenizer(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True),
                         add_special_tokens=False)["input_ids"]
    assert ChatIds(tokenizer).conversation(messages) == expected
    compact = ChatIds.compact(tokenizer, toy.domain_texts(rows) + ["Sure, go on."])
    assert [compact.vocab[i] for i in compact.conversation(messages)] == expected
    assert compact.size < 100 and compact.decode(compact.encode(row["full_prompt"])) == row["full_prompt"]


def test_the_sharded_student_view_holds_the_students_own_greedy_replies(chat, rows) -> None:
    net = toy.model(chat, hidden=32, layers=1, seed=3)
    row = rows[5]
    config = DistillConfig(student_view="sharded", on_policy=True, turn_tokens=5, turn_temperature=0.0)
    (context,) = student_contexts(net, chat, [row], config)
    ids = chat.prefix() + chat.user(row["shards"][0]) + chat.open_reply()
    replies = []
    for shard in row["shards"][1:]:  # replay the conversation: each reply is the model's own greedy one
        (reply,) = generate(net, [ids], chat.end, max_new_tokens=5)
        replies.append(reply)
        ids += chat.close_reply(reply) + chat.user(shard) + chat.open_reply()
    assert context == ids
    off_policy = student_contexts(net, chat, [row], DistillConfig(student_view="sharded", on_policy=False))[0]
    assert off_policy != context and off_policy == chat.conversation(student_messages(row))
    conversation = play(net, chat, [row], "sharded", max_new_tokens=5)[0]
    said = [m["content"] for m in conversation.messages if m["role"] == "assistant"]
    assert said[:len(replies)] == [chat.decode(r) for r in replies]  # the evaluation sees the same turns


def test_only_the_view_asymmetric_arms_move_the_model(tokenizer, chat, rows) -> None:
    net = toy.model(chat, hidden=32, layers=1, seed=0)
    toy.pretrain(net, chat, rows, steps=5, lr=3e-3, batch_size=4, seed=0)
    moved = {}
    for view in ("teacher", "sharded"):
        config = DistillConfig(steps=3, lr=1e-2, lora=False, max_new_tokens=3, teacher_view="full",
                               student_view=view, turn_tokens=3, batch_size=2)
        trained, cost = distill(copy.deepcopy(net), tokenizer, rows[:4], config, "cpu", chat=chat)
        assert cost.steps == 3
        moved[view] = max(float((a - b).abs().max()) for a, b in zip(trained.parameters(), net.parameters(),
                                                                      strict=True))
    assert moved["teacher"] == 0.0  # the student sees the teacher's view: KL 0, no gradient, nothing learned
    assert moved["sharded"] > 0


def test_recovered_share_of_the_gap() -> None:
    before = {"full": [1, 1, 1, 0], "sharded": [0, 0, 1, 0]}
    assert recovered(before, {"sharded": [1, 0, 1, 0]}) == pytest.approx(0.5)
    assert recovered(before, {"sharded": [0, 0, 0, 0]}) == pytest.approx(-0.5)
    assert recovered({"full": [0, 0], "sharded": [1, 0]}, {"sharded": [1, 1]}) is None


def test_the_committed_default_results_file_is_the_claims_own() -> None:
    res = json.loads((ROOT / "bench" / "results" / "fic.json").read_text())
    assert res["scale"] == "default" and len(res["seeds"]) >= 3
    assert res["command"] == f"python bench/claims/run.py fic --scale default --seeds {len(res['seeds'])}"
    assert len({res["arms"][a]["compute"]["train_steps"] for a in ("control", *ARMS)}) == 1
    lo, _ = res["ci95"]
    assert res["verdict"] == ("reproduced" if lo > 0 else "not reproduced")
