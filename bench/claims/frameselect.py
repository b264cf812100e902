"""FrameSelect: the best training-free frame selector beats uniform sampling at the same frame budget.

Data: generated CLoVR releases (exact ground truth; :mod:`frameselect_sets`). Every registered selector
that trains nothing (all but ``bgrpo``; ``uniform`` itself is the baseline, not a candidate) picks frames
for each question of the held-out release (seed 1000) at each budget; a selector that refuses a question
(a query-aware one, when the wording names no colour) falls back to uniform there. The candidate with the
highest held-out answer accuracy at a budget is *the best* at that budget (ties: the first by name); the
test questions (release seed ``s``, never used for the choice) are then answered from its frames and
from uniform's.

Metric: answer accuracy of HOLMES's descriptor readout reading exactly the chosen frames
(:mod:`frameselect_readout`); items: test questions, paired across arms. Main comparison at 8 frames,
conditions at 16 and 32. ``extra``: which selector was chosen per budget and every candidate's held-out
accuracy, the test evidence recall of both arms (selection level), and how often the chosen selector
fell back to uniform. Neither arm trains anything: ``train_steps`` 0.
"""

from __future__ import annotations

import numpy as np
from frameselect_readout import ReadoutAnswerer
from frameselect_sets import evidence_recall, pick, questions
from neurips26.methods.frameselect import SELECTORS

from claims.core import CLAIMS, Arm, Outcome

BUDGETS = (8, 16, 32)
TRAINED = ("bgrpo",)  # selectors with a trained model: not training-free
BASELINE = "uniform"


def candidates() -> list[str]:
    """The training-free selectors the best is chosen from (every registered one but the trained and uniform)."""
    return sorted(n for n in SELECTORS.names() if n not in TRAINED and n != BASELINE)


def held_out_accuracy(scale: str, answerer: ReadoutAnswerer) -> dict[int, dict[str, float]]:
    """Per budget, each candidate's answer accuracy on the held-out questions (seed 0 for random selectors)."""
    qs, pools = questions("clovr", "held_out", 0, scale)
    out: dict[int, dict[str, float]] = {}
    for budget in BUDGETS:
        out[budget] = {}
        for name in candidates() + [BASELINE]:
            chosen = [pick(name, p, budget, 0)[0].indices for p in pools]
            out[budget][name] = float(np.mean([answerer.accuracy(q, p, c) for q, p, c in zip(qs, pools, chosen,
                                                                                               strict=True)]))
    return out


def best(accuracy: dict[str, float]) -> str:
    """The candidate with the highest held-out accuracy (ties: first by name)."""
    names = candidates()
    return max(names, key=lambda n: (accuracy[n], -names.index(n)))


@CLAIMS.register("frameselect", method="FrameSelect (training-free selectors)",
                 claim="A training-free frame selector chosen on held-out questions answers more test questions "
                       "correctly than uniform sampling at the same frame budget",
                 metric="answer accuracy (CLoVR, descriptor readout)", direction="higher",
                 baseline="uniform frames at the same budget", method_arm="best", baseline_arm="uniform")
def frameselect(scale: str, seeds: list[int]) -> Outcome:
    """The held-out-chosen best selector against uniform at 8 (main), 16 and 32 frames; see the module docstring."""
    answerer = ReadoutAnswerer()
    held = held_out_accuracy(scale, answerer)
    chosen_name = {b: best(held[b]) for b in BUDGETS}
    scores: dict[int, dict[str, list]] = {b: {"best": [], "uniform": [], "recall_best": [], "recall_uniform": [],
                                              "fallbacks": []} for b in BUDGETS}
    n_test = []
    for seed in seeds:
        qs, pools = questions("clovr", "test", seed, scale)
        n_test.append(len(qs))
        for b in BUDGETS:
            for arm, name in (("best", chosen_name[b]), ("uniform", BASELINE)):
                picks = [pick(name, p, b, seed) for p in pools]
                scores[b][arm].append([answerer.accuracy(q, p, s.indices)
                                       for q, p, (s, _) in zip(qs, pools, picks, strict=True)])
                scores[b][f"recall_{arm}"].append(float(np.mean([evidence_recall(q, p, s.indices) for q, p, (s, _)
                                                                 in zip(qs, pools, picks, strict=True)])))
                if arm == "best":
                    scores[b]["fallbacks"].append(int(sum(fell for _, fell in picks)))

    def arms(b: int) -> dict[str, Arm]:
        return {arm: Arm(values=[float(np.mean(x)) for x in scores[b][arm]], items=scores[b][arm],
                         compute={"train_steps": 0}) for arm in ("best", "uniform")}

    extra = {"budgets": list(BUDGETS), "chosen": {f"budget={b}": chosen_name[b] for b in BUDGETS},
             "chosen_on": "held-out CLoVR release (generator seed 1000), never the test questions",
             "held_out_accuracy": {f"budget={b}": held[b] for b in BUDGETS},
             "test_evidence_recall": {f"budget={b}": {"best": scores[b]["recall_best"],
                                                      "uniform": scores[b]["recall_uniform"]} for b in BUDGETS},
             "fallbacks_to_uniform": {f"budget={b}": scores[b]["fallbacks"] for b in BUDGETS},
             "test_questions": n_test, "answerer": ReadoutAnswerer.name}
    return Outcome(arms=arms(BUDGETS[0]), conditions={f"budget={b}": arms(b) for b in BUDGETS[1:]}, extra=extra)
