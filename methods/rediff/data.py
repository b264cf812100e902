"""Generated multi-digit addition with long carry chains: prompts ``AAAA+BBBB=``, answers of ``digits + 1`` digits.

The package generates the problems, so every answer is exact: there is nothing to download and nothing to label.
At each digit position the two operand digits sum to 9 with probability :data:`PROPAGATE` (else both are uniform):
a carry entering such a position passes through it, so carries run along chains of several positions and an
answer digit depends on a digit pair far below it. Decoded one token at a time (lowest first), each digit follows
from the operands and the answer digit just below it; decoded in parallel, every digit of a chain must guess the
same far-away carry on its own, and the guesses disagree (``...0099...`` where the answer is ``...0000...``): the
dependency structure under which parallel commits produce inconsistent outputs.

Tokens are integers: ``0``-``9`` the digits, :data:`PLUS`, :data:`EQUALS`, and :data:`MASK` (an undecided answer
position). A model predicts one of the :data:`VOCAB` tokens at each answer position.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

VOCAB = "0123456789+="
PLUS, EQUALS = VOCAB.index("+"), VOCAB.index("=")
MASK = len(VOCAB)  # the mask token: not a prediction target
N_TOKENS = len(VOCAB) + 1
PROPAGATE = 0.5  # share of digit positions whose two operand digits sum to 9 (a carry passes through)
DATA_VERSION = "2"  # bump when the generator changes the problems of a seed


@dataclass(frozen=True)
class Problems:
    """A batch of addition problems: ``prompts`` (n, 2 * digits + 2) and ``targets`` (n, digits + 1) tokens."""

    digits: int
    prompts: np.ndarray
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.prompts)

    @property
    def answer_length(self) -> int:
        """Answer positions per problem."""
        return self.digits + 1

    def text(self, i: int) -> tuple[str, str]:
        """Problem ``i`` as (prompt, answer) strings."""
        return detokenize(self.prompts[i]), detokenize(self.targets[i])

    def digest(self) -> str:
        """sha256 of the problems (what a results file records as the data it was computed on)."""
        payload = json.dumps([self.digits, self.prompts.tolist(), self.targets.tolist()]).encode()
        return hashlib.sha256(payload).hexdigest()


def digits_of(numbers: np.ndarray, width: int) -> np.ndarray:
    """The decimal digits of ``numbers`` (most significant first), zero-padded to ``width``."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    return (numbers[:, None] // powers[None, :]) % 10


def generate(n: int, digits: int, seed: int, propagate: float = PROPAGATE) -> Problems:
    """``n`` problems ``a + b`` of ``digits``-digit operands from ``seed``: at each position the digit of ``b`` is
    ``9 -`` that of ``a`` with probability ``propagate`` (a carry passes through), else both digits are uniform."""
    if digits < 1 or digits > 17:
        raise ValueError("digits must be between 1 and 17")
    if not 0.0 <= propagate <= 1.0:
        raise ValueError("propagate must be between 0 and 1")
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 10, size=(n, digits), dtype=np.int64)
    b = rng.integers(0, 10, size=(n, digits), dtype=np.int64)
    b = np.where(rng.random((n, digits)) < propagate, 9 - a, b)
    powers = 10 ** np.arange(digits - 1, -1, -1, dtype=np.int64)
    total = (a * powers).sum(axis=1) + (b * powers).sum(axis=1)
    prompts = np.concatenate([a, np.full((n, 1), PLUS), b, np.full((n, 1), EQUALS)], axis=1)
    return Problems(digits, prompts.astype(np.int64), digits_of(total, digits + 1).astype(np.int64))


def carry_chain(problems: Problems) -> np.ndarray:
    """(n,) the longest run of positions per problem whose operand digits sum to 9 (a carry passes through all)."""
    d = problems.digits
    passes = problems.prompts[:, :d] + problems.prompts[:, d + 1:2 * d + 1] == 9
    longest = run = np.zeros(len(problems), dtype=np.int64)
    for column in passes.T:
        run = np.where(column, run + 1, 0)
        longest = np.maximum(longest, run)
    return longest


def evaluation_set(digits: int, n: int = 512) -> Problems:
    """The fixed evaluation problems of ``digits``-digit addition (seed 0; training draws from other seeds)."""
    return generate(n, digits, seed=0)


def detokenize(tokens: np.ndarray) -> str:
    """Tokens as text; a masked position prints as ``_``."""
    return "".join(VOCAB[t] if 0 <= t < len(VOCAB) else "_" for t in np.asarray(tokens).tolist())
