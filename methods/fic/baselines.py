"""The measured baselines of ``fic_<task type>``: ``fic_p_sharded`` of assistants that never read the instruction.

An answerer that knows nothing gives the same reply at every turn, so a sharded conversation's final answer is
that reply's answer attempt (:func:`~.evaluate.answer_of`) and its P over N simulations is that answer's score
(:func:`~.scoring.score`; a random answerer's P is the mean of its draws). On the test instructions of the built
``fic`` folder:

* ``empty``: the empty reply (no answer attempt: 0);
* ``constant``: the same reply for every instruction, the best of the split's most frequent references
  (:func:`neurips26.knownothing.constant_gold`, each scored on the other instructions);
* ``random``: per instruction, the reference of another instruction drawn uniformly
  (:func:`neurips26.knownothing.random_gold`): a translation of another document, another problem's solution,
  another problem's number.
"""

from __future__ import annotations

from pathlib import Path

from neurips26.knownothing import SEEDS, constant_gold, random_gold
from neurips26.protocol import MeasuredBaseline

from .evaluate import answer_of, instructions
from .scoring import score


def measure(task: str, limit: int | None = None, root: Path | None = None) -> MeasuredBaseline:
    """The empty, constant and random answerers' ``fic_p_sharded`` on the test instructions of ``task``
    (``fic_<task type>``; their first ``limit``), read from the built ``fic`` folder under ``root`` (default: the
    data root)."""
    task_type = task.removeprefix("fic_")
    rows, provenance = instructions(task_type, "test", limit, root)
    if not rows:
        raise ValueError(f"no {task_type} test instructions to measure on")
    golds = [str(row["reference"]) for row in rows]

    def scored(i: int, reply: str) -> float:
        return score(rows[i], answer_of(rows[i], reply))

    constant, answer = constant_gold(golds, scored)
    scores = {"empty": sum(scored(i, "") for i in range(len(rows))) / len(rows), "constant": constant,
              "random": random_gold(golds, scored)}
    kind = "demo" if provenance.get("demo") else "released"
    data = (f"fic {task_type}/test, {kind} data, manifest {str(provenance.get('manifest_sha256'))[:12]}")
    return MeasuredBaseline.best_of(scores, True, answer=answer if len(answer) <= 80 else answer[:79] + "…",
                                    n=len(rows), seeds=SEEDS, data=data, how="methods/fic/baselines.py")
