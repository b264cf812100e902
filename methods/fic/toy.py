"""A small chat model trained from scratch on a closed domain, standing in for an instruct model where the
embedded one cannot be trained in the time a CPU allows.

Its vocabulary is every id the embedded tokenizer gives the domain's texts under the chat template
(:meth:`.chatids.ChatIds.compact`); it is a Llama of a few layers. :func:`pretrain` teaches it the domain in one
view only (cross-entropy on the reference answer after that view's prompt), so it knows every instruction's
answer when asked in one turn and has never seen the instruction arrive over turns.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from .chatids import ChatIds
from .distill import ACK, batch_response_logits, teacher_messages
from .simulator import FINAL_ASK


def domain_texts(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every text a conversation over ``rows`` can hold: prompts, shards, the concatenated view, answers, and
    the simulator's and the distillation's fixed turns."""
    texts = [FINAL_ASK, ACK]
    for row in rows:
        texts += [row["full_prompt"], row["reference"], *row["shards"], teacher_messages(row, "concat")[0]["content"]]
    return texts


def model(chat: ChatIds, *, hidden: int, layers: int, heads: int = 4, init_std: float = 0.1, seed: int = 0) -> Any:
    """A randomly initialised Llama over ``chat``'s vocabulary (tied input and output embeddings; weights drawn
    with standard deviation ``init_std``: wider than Llama's 0.02, which leaves a model this small on a loss
    plateau for hundreds of steps)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=chat.size, hidden_size=hidden, intermediate_size=4 * hidden,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=1024, tie_word_embeddings=True, eos_token_id=chat.end,
                         pad_token_id=chat.end, bos_token_id=None, initializer_range=init_std)
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)


def answer_ids(chat: ChatIds, row: Mapping[str, Any]) -> list[int]:
    """The reference answer as a reply: its ids and the end-of-turn."""
    return chat.encode(str(row["reference"])) + [chat.end]


def pretrain(net: Any, chat: ChatIds, rows: Sequence[Mapping[str, Any]], *, steps: int, lr: float,
             batch_size: int, seed: int, view: str = "full", device: str = "cpu") -> list[float]:
    """Cross-entropy on each row's reference answer after its single-turn ``view``; returns the loss per step."""
    examples = [(chat.conversation(teacher_messages(row, view)), answer_ids(chat, row)) for row in rows]
    optimizer = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 20))
    order = random.Random(seed)
    losses = []
    net.train()
    for _ in range(steps):
        batch = [examples[order.randrange(len(examples))] for _ in range(batch_size)]
        logits = batch_response_logits(net, [c for c, _ in batch], [a for _, a in batch], device)
        loss = torch.stack([F.cross_entropy(lg.float(), torch.tensor(a, device=lg.device))
                            for lg, (_, a) in zip(logits, batch, strict=True)]).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
    net.eval()
    return losses
