"""The intervention a failure signature names, made concrete, and a random intervention of the same cost.

A signature (:mod:`.signatures`) names an intervention *class*; :data:`NAMED` gives the concrete intervention this
package applies for a signature, and :func:`random_same_cost` the control it is measured against: the same number
of extra prompts, each with as many tokens changed, in the same region of the prompt, but changed at random.

* ``position_bias`` (class prompt/format): **cyclic option permutation** (as in permutation debiasing of
  multiple-choice answers). A lettered question's options are shown in the k cyclic orders (option i at letter
  (i + j) mod k for j = 0..k-1) and each option's score is the mean log-probability of the letter it sits at: a
  preference for a letter adds the same amount to every option and cancels. Cost: k prompts (k - 1 extra).
* The controls (:func:`permutation_and_controls`) make k - 1 extra prompts of the same length, changing the option
  block only: ``random_tokens`` shuffles the tokens at as many random positions as the matching permuted prompt
  changes; ``random_line_order`` shows the option lines in a random order, each letter kept with its text. Each
  arm averages an option's letter log-probability over its k prompts the same way.

Prompts are scored by a causal LM (:class:`LetterScorer`): the log-probability of each option letter (preceded by
the task's target delimiter) as the next token, the prompt's shared prefix (everything before the options) run
once with its key/value cache reused for all variants.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

OPTION_LINE = re.compile(r"^([A-Z])\. (.*)$", re.M)


@dataclass(frozen=True)
class OptionBlock:
    """The lettered options of a prompt: where the block starts and ends, the letters and the option texts."""

    start: int
    end: int
    letters: tuple[str, ...]
    texts: tuple[str, ...]

    def render(self, order: Sequence[int]) -> str:
        """The block with option ``order[p]`` at letter ``p``."""
        return "".join(f"{letter}. {self.texts[i]}\n" for letter, i in zip(self.letters, order, strict=True))


def option_block(prompt: str) -> OptionBlock | None:
    """The last run of consecutive lines ``A. ...``, ``B. ...`` (letters in order from A) in ``prompt``: the options
    come after the question, and a lettered list inside the text before them is not taken for them. None if none."""
    lines = list(OPTION_LINE.finditer(prompt))
    found = None
    for first, match in enumerate(lines):
        if match.group(1) != "A":
            continue
        run = [match]
        for nxt in lines[first + 1:]:
            if nxt.start() != run[-1].end() + 1 or ord(nxt.group(1)) != ord(run[-1].group(1)) + 1:
                break
            run.append(nxt)
        if len(run) >= 2:
            found = OptionBlock(run[0].start(), run[-1].end() + 1, tuple(m.group(1) for m in run),
                                tuple(m.group(2) for m in run))
    return found


def cyclic_orders(k: int) -> list[list[int]]:
    """The k cyclic orders: in order j, letter p shows option (p - j) mod k, so option i sits at (i + j) mod k."""
    return [[(p - j) % k for p in range(k)] for j in range(k)]


def cyclic_average(scores: np.ndarray) -> np.ndarray:
    """(k,) per option: the mean over the k cyclic orders of the letter score it sits at (``scores[j]``: the letter
    scores under order j of :func:`cyclic_orders`). A score that depends on the letter alone adds the same to every
    option."""
    k = scores.shape[0]
    return np.array([np.mean([scores[j, (i + j) % k] for j in range(k)]) for i in range(k)])


def changed_tokens(a: Sequence[int], b: Sequence[int]) -> int:
    """Tokens that differ between two token sequences, position by position (a length difference counts)."""
    return sum(x != y for x, y in zip(a, b, strict=False)) + abs(len(a) - len(b))


def shuffle_tokens(ids: Sequence[int], count: int, rng: np.random.Generator) -> list[int]:
    """``ids`` with the tokens at ``count`` random positions shuffled among those positions so that each one gets
    a token of another value (the chosen tokens, in random order, sorted by value and handed on by the largest
    multiplicity: every position changes unless one value fills more than half of them)."""
    out = list(ids)
    count = min(count, len(out))
    if count < 2:
        return out
    where = rng.choice(len(out), size=count, replace=False)
    values = np.array([ids[i] for i in where])
    order = np.argsort(values, kind="stable")
    shift = max(1, int(np.unique(values, return_counts=True)[1].max()))
    for rank, slot in enumerate(order):
        out[where[slot]] = int(values[order[(rank + shift) % count]])
    return out


class LetterScorer:
    """Next-token log-probabilities of option letters after prompts, with a causal LM on ``device``."""

    def __init__(self, model: Any, tokenizer: Any, letters: Sequence[str], delimiter: str = " ",
                 device: str = "cpu") -> None:
        self.model, self.tokenizer, self.device = model.to(device).eval(), tokenizer, device
        ids = [tokenizer(delimiter + letter, add_special_tokens=False)["input_ids"] for letter in letters]
        if any(len(i) != 1 for i in ids):
            raise ValueError(f"option letters {list(letters)} are not single tokens after {delimiter!r}: {ids}")
        self.letter_ids = [i[0] for i in ids]

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` (no special tokens)."""
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    @torch.no_grad()
    def score(self, prefix: Sequence[int], suffixes: Sequence[Sequence[int]]) -> np.ndarray:
        """(len(suffixes), letters): log-probability of each letter after ``prefix + suffix``; the prefix is run
        once, the suffixes in one batch over its key/value cache (right-padded, read at each one's last token)."""
        out = self.model(torch.tensor([list(prefix)], device=self.device), use_cache=True)
        cache = out.get("cache")  # transformers 5's name for the key/value cache (past_key_values before)
        cache = out.past_key_values if cache is None else cache
        cache.batch_repeat_interleave(len(suffixes))
        width = max(len(s) for s in suffixes)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        batch = torch.tensor([list(s) + [pad] * (width - len(s)) for s in suffixes], device=self.device)
        mask = torch.ones(len(suffixes), len(prefix) + width, dtype=torch.long, device=self.device)
        logits = self.model(batch, cache=cache, attention_mask=mask).logits
        last = torch.tensor([len(s) - 1 for s in suffixes], device=self.device)
        rows = logits[torch.arange(len(suffixes), device=self.device), last].float().log_softmax(-1)
        return rows[:, self.letter_ids].cpu().numpy()


@dataclass(frozen=True)
class Scored:
    """One multiple-choice prompt scored as asked, under the named intervention and under each same-cost control."""

    base: np.ndarray  # (k,) letter log-probabilities of the prompt as asked
    arms: dict[str, np.ndarray]  # per arm (``named`` and each of :data:`CONTROLS`): (k,) score per option
    changed: dict[str, list[int]]  # per arm: tokens changed by each of its k - 1 extra prompts


CONTROLS = ("random_tokens", "random_line_order")


def permutation_and_controls(scorer: LetterScorer, prompt: str, rng: np.random.Generator) -> Scored:
    """Score ``prompt`` as asked, with cyclic option permutation (the intervention ``position_bias`` names) and
    with two random controls of the same cost, in one prefix pass and one batch of suffixes:

    * ``random_tokens``: each extra prompt shuffles the tokens at m random positions of the option block (m: the
      tokens the matching permuted prompt changes);
    * ``random_line_order``: each extra prompt shows the option lines in a random other order, each letter kept
      with its text (the same lines move, but a letter preference no longer cancels).

    Every arm scores option i by the mean, over its k prompts, of the log-probability of the letter option i sits
    at."""
    block = option_block(prompt)
    if block is None:
        raise ValueError("the prompt has no lettered option block (A. ..., B. ...)")
    k = len(block.letters)
    if k > len(scorer.letter_ids):
        raise ValueError(f"{k} options but the scorer knows {len(scorer.letter_ids)} letters")
    prefix, cue = scorer.encode(prompt[:block.start]), scorer.encode(prompt[block.end:])
    asked = scorer.encode(block.render(range(k)))
    named = [scorer.encode(block.render(order)) for order in cyclic_orders(k)[1:]]
    tokens = [shuffle_tokens(asked, changed_tokens(asked, b), rng) for b in named]
    lines = []
    for _ in named:
        order = rng.permutation(k)
        while k > 1 and (order == np.arange(k)).all():
            order = rng.permutation(k)
        lines.append(scorer.encode("".join(f"{block.letters[i]}. {block.texts[i]}\n" for i in order)))
    edits = {"named": named, "random_tokens": tokens, "random_line_order": lines}
    scores = scorer.score(prefix, [asked + cue] + [e + cue for group in edits.values() for e in group])[:, :k]
    base, rest = scores[0], scores[1:].reshape(len(edits), k - 1, k)
    arms = {"named": cyclic_average(np.vstack([base[None], rest[0]]))}
    for slot, name in enumerate(CONTROLS, start=1):
        arms[name] = np.vstack([base[None], rest[slot]]).mean(axis=0)
    return Scored(base, arms, {name: [changed_tokens(asked, e) for e in group] for name, group in edits.items()})


NAMED = {"position_bias": permutation_and_controls}  # signature -> its concrete intervention (with its controls)
