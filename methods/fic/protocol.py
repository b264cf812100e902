"""The leaderboard protocols of FiC: one task per task type, on the ``fic`` board.

A document is a test instruction; its samples row records every simulation's score per setting
(``simulation_scores``), from which the board recomputes the per-instruction P, A and U of each setting
(:mod:`neurips26.leaderboard.metrics`). The ranking metric is ``fic_p_sharded``: performance when the
instruction arrives over turns. The standard run: all five settings, N = 10 simulations, LiC's temperature 1.0,
the test split, the task type's token budget; any other run is stored unranked. Each baseline is measured
(:mod:`.baselines`): the best P of an assistant that never reads the instruction (an empty, a constant and a
random reply) on the test split, recorded in :data:`MEASURED` by ``python -m neurips26.tasks.measure --record``.
"""

from __future__ import annotations

from neurips26.protocol import PROTOCOLS, MeasuredBaseline, Protocol

from .simulator import SETTINGS

TASK_VERSION = 1.0
STANDARD_SIMULATIONS = 10
STANDARD_TEMPERATURE = 1.0
MAX_GEN_TOKS = {"translation": 512, "code": 512, "arithmetic": 64}
TEST_SIZES = {"translation": 30, "code": 100, "arithmetic": 60}
METRICS = tuple(f"fic_{m}_{s}" for s in SETTINGS for m in ("p", "a", "u"))

# the best answerers that know nothing: `python -m neurips26.tasks.measure --record` rewrites this block
MEASURED = {
    "fic_translation": MeasuredBaseline(
        answerer="constant", scores={"empty": 0.0, "constant": 0.0137, "random": 0.0116},
        answer="No Davis Cup reform: Best-of-five continues\nThe president of the International …", n=30, seeds=5,
        data="fic translation/test, released data, manifest 7704214f7227", how="methods/fic/baselines.py"),
    "fic_code": MeasuredBaseline(
        answerer="empty", scores={"empty": 0.0, "constant": 0.0, "random": 0.0},
        answer="\n\ndef monotonic(l: list):\n    \"\"\"Return True is list elements are monotonically…", n=100, seeds=5,
        data="fic code/test, released data, manifest 7704214f7227", how="methods/fic/baselines.py"),
    "fic_arithmetic": MeasuredBaseline(
        answerer="constant", scores={"empty": 0.0, "constant": 0.0847, "random": 0.0433}, answer="3", n=60, seeds=5,
        data="fic arithmetic/test, released data, manifest 7704214f7227", how="methods/fic/baselines.py"),
}


def task_name(task_type: str) -> str:
    """The leaderboard task of a task type (``fic_code``...)."""
    return f"fic_{task_type}"


def standard_settings(task_type: str) -> dict[str, object]:
    """The run settings of the standard run of ``task_type`` (compared with a run's recorded settings)."""
    return {"settings": list(SETTINGS), "simulations": STANDARD_SIMULATIONS, "temperature": STANDARD_TEMPERATURE,
            "max_gen_toks": MAX_GEN_TOKS[task_type]}


PROTOCOLS_BY_TYPE = {
    task_type: PROTOCOLS.register(task_name(task_type), group="fic", output_type="generate_until",
                                  version=TASK_VERSION, metrics=METRICS)(Protocol(
        split="test", num_fewshot=0, fewshot_split=None, chat_template=True, metric="fic_p_sharded",
        higher_is_better=True, baseline_from=MEASURED[task_name(task_type)], range=(0, 1), size=TEST_SIZES[task_type],
        task_metadata=standard_settings(task_type),
        note="P, A and U per setting are recomputed from the recorded per-simulation scores"))
    for task_type in MAX_GEN_TOKS
}
