"""The decoder interface: propose -> commit -> optionally revise, with every intermediate draft exposed.

Any masked-diffusion LM plugs into the cascade evaluator through a :class:`Denoiser`: given the prompts and the
current canvas (the answer positions, :data:`~.data.MASK` where undecided), it proposes a token and a confidence
for every answer position. :func:`decode` runs the standard confidence-based parallel unmasking every decoder
shares: at each step it commits exactly ``tokens_per_step`` of the still-masked positions (the most confident),
and, when the denoiser revises, first replaces committed tokens that its new proposal disagrees with. The
returned :class:`Trace` holds the canvas after every step, the step at which each position was committed, the
token committed there, and the final answer: what :mod:`.cascade` measures.

Wrapping a Hub model (LLaDA, Dream) on a GPU machine: write ``logits_fn(prompts, canvas)`` that puts the
tokenized prompt and the canvas into one sequence and returns the logits at the canvas positions as an
``(n, length, vocab)`` array, wrap it with :class:`LogitsDenoiser`, and decode with the model's mask token id::

    model = AutoModel.from_pretrained("GSAI-ML/LLaDA-8B-Instruct", trust_remote_code=True,
                                      torch_dtype=torch.bfloat16).cuda().eval()

    def logits_fn(prompts, canvas):  # token ids of the model's own tokenizer
        ids = torch.from_numpy(np.concatenate([prompts, canvas], axis=1)).cuda()
        with torch.no_grad():
            return model(ids).logits[:, prompts.shape[1]:].float().cpu().numpy()

    trace = decode(LogitsDenoiser(logits_fn), prompts, length=64, tokens_per_step=4, mask=126336)

Dream predicts position ``i`` from the logits at ``i - 1`` (shift the slice by one) and its mask id is the
tokenizer's ``mask_token_id``. Then score the trace against the tokenized targets with :mod:`.cascade`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .data import MASK


class Denoiser(Protocol):
    """A masked-diffusion model as the decoding loop sees it."""

    revises: bool  # whether committed tokens may be replaced by a later proposal

    def propose(self, prompts: np.ndarray, canvas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(tokens, confidences), each ``(n, length)``: a token and its probability for every answer position."""
        ...


class LogitsDenoiser:
    """A :class:`Denoiser` from any ``logits_fn(prompts, canvas) -> (n, length, vocab)`` (a Hub model, see the
    module docstring): the proposal is the argmax token, its confidence its softmax probability."""

    def __init__(self, logits_fn: Callable[[np.ndarray, np.ndarray], np.ndarray], revises: bool = False) -> None:
        self.logits_fn = logits_fn
        self.revises = revises

    def propose(self, prompts: np.ndarray, canvas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits = np.asarray(self.logits_fn(prompts, canvas), dtype=np.float64)
        logits = logits - logits.max(axis=-1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=-1, keepdims=True)
        tokens = probs.argmax(axis=-1)
        return tokens, np.take_along_axis(probs, tokens[..., None], axis=-1)[..., 0]


@dataclass(frozen=True)
class Trace:
    """What a parallel decoding did, per problem: arrays over (problem, [step,] answer position)."""

    tokens_per_step: int
    drafts: np.ndarray  # (n, passes + 1, length): the canvas before the first pass and after every pass
    commit_step: np.ndarray  # (n, length): the step (1-based) at which each position was first committed
    committed: np.ndarray  # (n, length): the token committed there at that step
    final: np.ndarray  # (n, length): the answer after the last step (and revisions)
    revisions: np.ndarray  # (n, length): how many times a committed token was replaced
    forward_passes: int  # model calls per problem

    @property
    def steps(self) -> int:
        """Commit steps (``ceil(length / tokens_per_step)``)."""
        return int(self.commit_step.max()) if self.commit_step.size else 0


def decode(denoiser: Denoiser, prompts: np.ndarray, length: int, tokens_per_step: int,
           revise: bool | None = None, polish: int | None = None, mask: int = MASK) -> Trace:
    """Decode ``length`` answer positions for every prompt, committing ``tokens_per_step`` per step.

    ``revise`` (default: ``denoiser.revises``) lets each step replace committed tokens its proposal disagrees
    with; ``polish`` revision-only passes follow the last commit step (default 1 when revising, else 0), so the
    tokens committed last can be revised too. ``mask`` is the token id of an undecided position.
    """
    if tokens_per_step < 1:
        raise ValueError("tokens_per_step must be at least 1")
    revise = denoiser.revises if revise is None else revise
    polish = (1 if revise else 0) if polish is None else polish
    n = len(prompts)
    canvas = np.full((n, length), mask, dtype=np.int64)
    commit_step = np.zeros((n, length), dtype=np.int64)
    committed = np.full((n, length), mask, dtype=np.int64)
    revisions = np.zeros((n, length), dtype=np.int64)
    drafts = [canvas.copy()]
    rows = np.arange(n)[:, None]
    steps = math.ceil(length / tokens_per_step)
    for step in range(1, steps + polish + 1):
        tokens, confidence = denoiser.propose(prompts, canvas)
        tokens = np.asarray(tokens, dtype=np.int64)
        masked = canvas == mask
        if revise:
            changed = ~masked & (tokens != canvas)
            canvas = np.where(changed, tokens, canvas)
            revisions += changed
        if step > steps:  # a polishing pass: revisions only
            drafts.append(canvas.copy())
            continue
        take = min(tokens_per_step, length - (step - 1) * tokens_per_step)
        score = np.where(masked, np.asarray(confidence, dtype=np.float64), -np.inf)
        chosen = np.argsort(-score, axis=1, kind="stable")[:, :take]
        canvas[rows, chosen] = tokens[rows, chosen]
        committed[rows, chosen] = tokens[rows, chosen]
        commit_step[rows, chosen] = step
        drafts.append(canvas.copy())
    return Trace(tokens_per_step, np.stack(drafts, axis=1), commit_step, committed, canvas.copy(), revisions,
                 steps + polish)
