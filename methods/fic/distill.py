"""View-asymmetric self-distillation, on-policy (FiC's training method).

The same model plays two roles. The **teacher** is a frozen copy that sees a single-turn view of a train
instruction (``concat``: every shard in one turn; ``full``: the original prompt) and answers it greedily. The
**student** sees the *sharded* multi-turn view of the same instruction **with its own replies**: each shard is a
user turn and, before the next shard, the current student generates its reply (sampled, ``turn_temperature``),
regenerated at every step (on-policy). After the last shard come the teacher's response tokens, and the student
is trained to match the teacher's next-token distribution on them: loss = KL(p_teacher || p_student), summed over
the vocabulary, averaged over response tokens and then over the batch.

Controls at equal steps (``student_view``): ``concat`` (the student sees the concatenated single-turn view:
fine-tuning on concatenated instructions, same targets) and ``teacher`` (the student sees the teacher's own view:
no view asymmetry, hence no distillation signal). ``on_policy=False`` puts a fixed acknowledgement (``ACK``) in
place of the student's replies (the earlier, off-policy variant).

LoRA (peft, rank ``lora_rank`` on the attention projections; the teacher is the base with the adapter disabled)
or full fine-tuning (the teacher a frozen deep copy). Train instructions come from the ``train`` split, disjoint
from the evaluated ``test`` split. CUDA when present, else CPU.
"""

from __future__ import annotations

import copy
import random
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn.functional as F

from .chatids import ChatIds, generate
from .simulator import CONCAT_LEAD, bullets

ACK = "Got it. Please go on."
STUDENT_VIEWS = ("sharded", "concat", "teacher")


@dataclass(frozen=True)
class DistillConfig:
    """Training settings."""

    steps: int = 100
    lr: float = 2e-4
    lora: bool = True
    lora_rank: int = 8
    max_new_tokens: int = 64  # teacher response tokens
    seed: int = 0
    teacher_view: str = "concat"  # or "full": the original single-turn prompt
    student_view: str = "sharded"  # FiC; "concat" and "teacher" are the controls
    on_policy: bool = True  # sharded view: the student's own replies between shards (else ACK)
    turn_tokens: int = 32  # tokens of each of the student's own intermediate replies
    turn_temperature: float = 1.0
    batch_size: int = 1  # instructions per optimiser step
    weight_decay: float = 0.0
    anchor: float = 0.0  # weight of the same KL on the teacher's own view (keeps the single-turn answers)


@dataclass
class Cost:
    """What a run cost: wall seconds (teacher generation, training), tokens trained on, peak memory."""

    teacher_seconds: float = 0.0
    train_seconds: float = 0.0
    steps: int = 0
    response_tokens: int = 0
    context_tokens: int = 0  # tokens of the student's contexts (its own replies included)
    trainable_params: int = 0
    peak_memory_mb: float = 0.0
    device: str = "cpu"
    final_loss: float = float("nan")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def teacher_messages(instruction: Mapping[str, Any], view: str = "concat") -> list[dict[str, str]]:
    """The teacher's single-turn view: every shard in one user turn (the ``concat`` setting's message), or the
    original ``full`` prompt."""
    if view == "full":
        return [{"role": "user", "content": instruction["full_prompt"]}]
    if view != "concat":
        raise ValueError(f"teacher view {view!r}: concat or full")
    return [{"role": "user", "content": f"{CONCAT_LEAD}\n{bullets(list(instruction['shards']))}"}]


def student_messages(instruction: Mapping[str, Any], replies: Sequence[str] | None = None) -> list[dict[str, str]]:
    """The sharded view as text: one user turn per shard, ``replies[k]`` (else ``ACK``) after shard ``k``."""
    messages: list[dict[str, str]] = []
    for i, shard in enumerate(instruction["shards"]):
        if i:
            messages.append({"role": "assistant", "content": replies[i - 1] if replies else ACK})
        messages.append({"role": "user", "content": shard})
    return messages


def chat_ids(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    """``messages`` through the tokenizer's chat template, with the generation prompt."""
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def sharded_on_policy(model: Any, chat: ChatIds, rows: Sequence[Mapping[str, Any]], *, turn_tokens: int,
                      temperature: float, generator: torch.Generator | None = None) -> list[list[int]]:
    """Each row's sharded conversation up to its answer: shard 1, the model's own reply, shard 2, ..., the last
    shard and the generation prompt (the replies generated now, in lockstep, by ``model``)."""
    ids = [chat.prefix() + chat.user(row["shards"][0]) + chat.open_reply() for row in rows]
    for k in range(1, max(len(row["shards"]) for row in rows)):
        active = [i for i, row in enumerate(rows) if len(row["shards"]) > k]
        replies = generate(model, [ids[i] for i in active], chat.end, max_new_tokens=turn_tokens,
                           temperature=temperature, generator=generator)
        for i, reply in zip(active, replies, strict=True):
            ids[i] += chat.close_reply(reply) + chat.user(rows[i]["shards"][k]) + chat.open_reply()
    return ids


def student_contexts(model: Any, chat: ChatIds, rows: Sequence[Mapping[str, Any]], config: DistillConfig,
                     generator: torch.Generator | None = None) -> list[list[int]]:
    """The student's view of each row under ``config.student_view`` (see the module doc)."""
    if config.student_view == "teacher":
        return [chat.conversation(teacher_messages(row, config.teacher_view)) for row in rows]
    if config.student_view == "concat":
        return [chat.conversation(teacher_messages(row, "concat")) for row in rows]
    if config.student_view != "sharded":
        raise ValueError(f"student view {config.student_view!r}: one of {', '.join(STUDENT_VIEWS)}")
    if not config.on_policy:
        return [chat.conversation(student_messages(row)) for row in rows]
    return sharded_on_policy(model, chat, rows, turn_tokens=config.turn_tokens, temperature=config.turn_temperature,
                             generator=generator)


def teacher_responses(model: Any, chat: ChatIds, rows: Sequence[Mapping[str, Any]], max_new_tokens: int,
                      view: str = "concat", teacher: Callable[[], AbstractContextManager] = nullcontext
                      ) -> list[list[int]]:
    """The teacher's greedy response ids on each row's single-turn view (ending with end-of-turn when reached)."""
    with teacher():
        return generate(model, [chat.conversation(teacher_messages(row, view)) for row in rows], chat.end,
                        max_new_tokens=max_new_tokens)


def kl_on_response(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """Mean over response positions of KL(teacher || student), both ``[tokens, vocab]`` logits."""
    teacher_logp = F.log_softmax(teacher_logits.float(), dim=-1)
    student_logp = F.log_softmax(student_logits.float(), dim=-1)
    return F.kl_div(student_logp, teacher_logp, log_target=True, reduction="batchmean")


def response_logits(model: Any, context: list[int], response: list[int], device: str) -> torch.Tensor:
    """The logits predicting each ``response`` token after ``context`` (``[len(response), vocab]``)."""
    return batch_response_logits(model, [context], [response], device)[0]


def batch_response_logits(model: Any, contexts: Sequence[list[int]], responses: Sequence[list[int]],
                          device: str) -> list[torch.Tensor]:
    """:func:`response_logits` of several sequences in one right-padded forward pass."""
    sequences = [list(c) + list(r) for c, r in zip(contexts, responses, strict=True)]
    width = max(len(s) for s in sequences)
    ids = torch.tensor([s + [0] * (width - len(s)) for s in sequences], device=device)
    mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in sequences], device=device)
    logits = model(input_ids=ids, attention_mask=mask).logits
    return [logits[b, len(c) - 1:len(c) + len(r) - 1] for b, (c, r) in enumerate(zip(contexts, responses, strict=True))]


def _peak_mb(device: str) -> float:
    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def distill(model: Any, tokenizer: Any, rows: Sequence[Mapping[str, Any]], config: DistillConfig, device: str,
            advance: Callable[[int], None] | None = None, chat: ChatIds | None = None) -> tuple[Any, Cost]:
    """Train ``model`` on ``rows`` (train instructions) by view-asymmetric self-distillation (``config``); returns
    the trained model (LoRA merged into the weights) and the cost. ``chat`` maps text to the model's ids (default:
    the tokenizer's own)."""
    chat = chat or ChatIds(tokenizer)
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    cost = Cost(device=device)
    if config.lora:
        from peft import LoraConfig, get_peft_model

        student = get_peft_model(model, LoraConfig(r=config.lora_rank, lora_alpha=2 * config.lora_rank,
                                                   target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                                                   lora_dropout=0.0))
        teacher_model, teacher = student, student.disable_adapter
    else:
        student = model
        teacher_model = copy.deepcopy(model).eval().requires_grad_(False)
        teacher = nullcontext
    student.eval()
    started = time.perf_counter()
    responses = teacher_responses(teacher_model, chat, rows, config.max_new_tokens, config.teacher_view, teacher)
    kept = [(row, response) for row, response in zip(rows, responses, strict=True) if response]
    teacher_contexts = [chat.conversation(teacher_messages(row, config.teacher_view)) for row, _ in kept]
    cost.teacher_seconds = time.perf_counter() - started
    params = [p for p in student.parameters() if p.requires_grad]
    cost.trainable_params = sum(p.numel() for p in params)
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    order = random.Random(config.seed)
    started = time.perf_counter()
    for step in range(config.steps):
        picked = [order.randrange(len(kept)) for _ in range(config.batch_size)]
        contexts = student_contexts(student, chat, [kept[i][0] for i in picked], config, generator)
        cost.context_tokens += sum(len(c) for c in contexts)
        answers = [kept[i][1] for i in picked]
        with torch.no_grad(), teacher():  # batched as the student's batch: identical views give identical logits
            targets = batch_response_logits(teacher_model, [teacher_contexts[i] for i in picked], answers, device)
        student.train()
        logits = batch_response_logits(student, contexts, answers, device)
        loss = torch.stack([kl_on_response(s, t) for s, t in zip(logits, targets, strict=True)]).mean()
        if config.anchor:
            own = batch_response_logits(student, [teacher_contexts[i] for i in picked], answers, device)
            loss = loss + config.anchor * torch.stack([kl_on_response(s, t)
                                                       for s, t in zip(own, targets, strict=True)]).mean()
        optimizer.zero_grad(set_to_none=False)
        if loss.item() != 0.0:  # an exact 0 (student view and weights the teacher's) has a zero gradient, whose
            loss.backward()  # float residue (~1e-9) Adam would otherwise scale up to steps of size lr
        optimizer.step()
        cost.final_loss = float(loss.detach())
        cost.response_tokens += sum(len(a) for a in answers)
        cost.steps = step + 1
        if advance:
            advance(1)
    cost.train_seconds = time.perf_counter() - started
    cost.peak_memory_mb = _peak_mb(device)
    student.eval()
    trained = student.merge_and_unload() if config.lora else student
    return trained, cost
