"""Generated multi-digit addition: prompts ``AAAA+BBBB=`` and answers of ``digits + 1`` digits, zero-padded.

The package generates the problems, so every answer is exact: there is nothing to download and nothing to label.
An answer digit depends on the carry from every lower digit, so committing the digits in parallel is harder than
committing them one at a time, and a wrong digit committed early misleads the digits decided after it: the task
has the dependency structure under which decoding errors cascade.

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
DATA_VERSION = "1"  # bump when the generator changes the problems of a seed


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


def generate(n: int, digits: int, seed: int) -> Problems:
    """``n`` problems ``a + b`` with ``a, b`` uniform in ``[0, 10**digits)``, from ``seed``."""
    if digits < 1 or digits > 17:
        raise ValueError("digits must be between 1 and 17")
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 10 ** digits, size=n, dtype=np.int64)
    b = rng.integers(0, 10 ** digits, size=n, dtype=np.int64)
    prompts = np.concatenate([digits_of(a, digits), np.full((n, 1), PLUS), digits_of(b, digits),
                              np.full((n, 1), EQUALS)], axis=1)
    return Problems(digits, prompts.astype(np.int64), digits_of(a + b, digits + 1).astype(np.int64))


def evaluation_set(digits: int, n: int = 512) -> Problems:
    """The fixed evaluation problems of ``digits``-digit addition (seed 0; training draws from other seeds)."""
    return generate(n, digits, seed=0)


def detokenize(tokens: np.ndarray) -> str:
    """Tokens as text; a masked position prints as ``_``."""
    return "".join(VOCAB[t] if 0 <= t < len(VOCAB) else "_" for t in np.asarray(tokens).tolist())
