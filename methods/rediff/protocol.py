"""The leaderboard protocol of ``rediff_arithmetic``: exact match of generated addition answers.

The standard run decodes the fixed 512 problems of 6-digit addition with long carry chains
(:func:`~.data.evaluation_set`), committing :data:`STANDARD_TOKENS_PER_STEP` answer tokens per step; a run with
other settings is stored unranked. The baseline is measured (:mod:`.baselines`): the best exact match of an empty,
a constant and a random answer of the answer's length and digits on the standard set, recorded in
:data:`MEASURED` by ``python -m neurips26.tasks.measure --record rediff_arithmetic``.
"""

from __future__ import annotations

from neurips26.protocol import PROTOCOLS, MeasuredBaseline, Protocol

TASK = "rediff_arithmetic"
TASK_VERSION = 2.0  # 2.0: 6-digit problems with long carry chains (data version 2)
STANDARD_DIGITS = 6
STANDARD_TOKENS_PER_STEP = 2
STANDARD_SIZE = 512

# the best answerer that knows nothing: `python -m neurips26.tasks.measure --record` rewrites this block
MEASURED = {
    "rediff_arithmetic": MeasuredBaseline(
        answerer="constant", scores={"empty": 0.0, "constant": 0.0137, "random": 0.0}, answer="0999999", n=512, seeds=5,
        data="rediff_arithmetic digits6/test (seed-0 evaluation set, data version 2), sha256 dc212536207b",
        how="methods/rediff/baselines.py"),
}


PROTOCOL = PROTOCOLS.register(TASK, group="rediff", output_type="generate_until", version=TASK_VERSION,
                              metrics=("exact_match",))(Protocol(
    split="test", num_fewshot=0, fewshot_split=None, chat_template=False, metric="exact_match",
    higher_is_better=True, baseline_from=MEASURED[TASK], range=(0, 1),
    size=STANDARD_SIZE, task_metadata={"digits": STANDARD_DIGITS, "tokens_per_step": STANDARD_TOKENS_PER_STEP}))
