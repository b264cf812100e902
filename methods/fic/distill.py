"""View-asymmetric self-distillation (FiC's training baseline).

The same model plays two roles. The **teacher** is a frozen copy that sees the single-turn *concatenated* view
of a train instruction and generates its response (greedy). The **student** sees the *multi-turn* view of the
same instruction (shards as user turns, a fixed acknowledgement as each intermediate assistant turn) followed
by the teacher's response tokens, and is trained to match the teacher's next-token distribution on those
tokens: loss = KL(p_teacher || p_student), summed over the vocabulary, averaged over response tokens.

LoRA (peft, rank ``lora_rank`` on the attention projections; the teacher is the base with the adapter
disabled) or full fine-tuning (the teacher a frozen deep copy). Train instructions come from the ``train`` split,
disjoint from the evaluated ``test`` split. CUDA when present, else CPU.

Deviation to note: the student's intermediate assistant turns are a fixed acknowledgement, not its own sampled
replies (cheaper; on-policy turns are left as an option for later).
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

from .simulator import CONCAT_LEAD, bullets

ACK = "Got it. Please go on."


@dataclass(frozen=True)
class DistillConfig:
    """Training settings."""

    steps: int = 100
    lr: float = 2e-4
    lora: bool = True
    lora_rank: int = 8
    max_new_tokens: int = 64
    seed: int = 0
    teacher_view: str = "concat"  # or "full": the original single-turn prompt


@dataclass
class Cost:
    """What a run cost: wall seconds (teacher generation, training), tokens trained on, peak memory."""

    teacher_seconds: float = 0.0
    train_seconds: float = 0.0
    steps: int = 0
    response_tokens: int = 0
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


def student_messages(instruction: Mapping[str, Any]) -> list[dict[str, str]]:
    """The student's view: one user turn per shard, a fixed acknowledgement between them."""
    messages: list[dict[str, str]] = []
    for i, shard in enumerate(instruction["shards"]):
        if i:
            messages.append({"role": "assistant", "content": ACK})
        messages.append({"role": "user", "content": shard})
    return messages


def chat_ids(tokenizer: Any, messages: list[dict[str, str]]) -> list[int]:
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


@torch.no_grad()
def teacher_responses(model: Any, tokenizer: Any, rows: Sequence[Mapping[str, Any]], max_new_tokens: int,
                      device: str, teacher: Callable[[], AbstractContextManager] = nullcontext,
                      view: str = "concat") -> list[list[int]]:
    """The teacher's greedy response token ids on each instruction's single-turn view (ending at end-of-turn)."""
    out = []
    for row in rows:
        prompt = torch.tensor([chat_ids(tokenizer, teacher_messages(row, view))], device=device)
        with teacher():
            generated = model.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                                       max_new_tokens=max_new_tokens, pad_token_id=tokenizer.eos_token_id)
        out.append(generated[0, prompt.shape[1]:].tolist())
    return out


def kl_on_response(student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
    """Mean over response positions of KL(teacher || student), both ``[tokens, vocab]`` logits."""
    teacher_logp = F.log_softmax(teacher_logits.float(), dim=-1)
    student_logp = F.log_softmax(student_logits.float(), dim=-1)
    return F.kl_div(student_logp, teacher_logp, log_target=True, reduction="batchmean")


def response_logits(model: Any, context: list[int], response: list[int], device: str) -> torch.Tensor:
    ids = torch.tensor([context + response], device=device)
    logits = model(input_ids=ids).logits[0]
    return logits[len(context) - 1:len(context) + len(response) - 1]  # position t predicts token t + 1


def _peak_mb(device: str) -> float:
    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def distill(model: Any, tokenizer: Any, rows: Sequence[Mapping[str, Any]], config: DistillConfig, device: str,
            advance: Callable[[int], None] | None = None) -> tuple[Any, Cost]:
    """Train ``model`` on ``rows`` (train instructions) by view-asymmetric self-distillation; returns the trained
    model (LoRA merged into the weights) and the cost."""
    torch.manual_seed(config.seed)
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
    responses = teacher_responses(teacher_model, tokenizer, rows, config.max_new_tokens, device, teacher,
                                  config.teacher_view)
    cost.teacher_seconds = time.perf_counter() - started
    examples = [(chat_ids(tokenizer, teacher_messages(r, config.teacher_view)),
                 chat_ids(tokenizer, student_messages(r)), response)
                for r, response in zip(rows, responses, strict=True) if response]
    params = [p for p in student.parameters() if p.requires_grad]
    cost.trainable_params = sum(p.numel() for p in params)
    optimizer = torch.optim.AdamW(params, lr=config.lr)
    order = random.Random(config.seed)
    started = time.perf_counter()
    student.train()
    for step in range(config.steps):
        teacher_ctx, student_ctx, response = examples[order.randrange(len(examples))]
        with torch.no_grad(), teacher():
            target = response_logits(teacher_model, teacher_ctx, response, device)
        loss = kl_on_response(response_logits(student, student_ctx, response, device), target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        cost.final_loss = float(loss.detach())
        cost.response_tokens += len(response)
        cost.steps = step + 1
        if advance:
            advance(1)
    cost.train_seconds = time.perf_counter() - started
    cost.peak_memory_mb = _peak_mb(device)
    student.eval()
    trained = student.merge_and_unload() if config.lora else student
    return trained, cost
