"""The leaderboard protocol of ``rediff_arithmetic``: exact match of generated addition answers.

The standard run decodes the fixed 512 problems of 6-digit addition with long carry chains
(:func:`~.data.evaluation_set`), committing :data:`STANDARD_TOKENS_PER_STEP` answer tokens per step; a run with
other settings is stored unranked. A decoder that knows nothing answers a 7-digit sum right with probability about
1e-7, hence the baseline 0.
"""

from __future__ import annotations

from neurips26.protocol import PROTOCOLS, Protocol

TASK = "rediff_arithmetic"
TASK_VERSION = 2.0  # 2.0: 6-digit problems with long carry chains (data version 2)
STANDARD_DIGITS = 6
STANDARD_TOKENS_PER_STEP = 2
STANDARD_SIZE = 512

PROTOCOL = PROTOCOLS.register(TASK, group="rediff", output_type="generate_until", version=TASK_VERSION,
                              metrics=("exact_match",))(Protocol(
    split="test", num_fewshot=0, fewshot_split=None, chat_template=False, metric="exact_match",
    higher_is_better=True, baseline=0.0, range=(0, 1), size=STANDARD_SIZE,
    task_metadata={"digits": STANDARD_DIGITS, "tokens_per_step": STANDARD_TOKENS_PER_STEP}))
