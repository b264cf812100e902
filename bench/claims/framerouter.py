"""FrameRouter: per-question budgets routed by evidence demand beat a fixed budget at the same mean budget.

Data: the test sets of generated CLoVR and TAR releases (release seed ``s``; exact ground truth,
:mod:`frameselect_sets`), their questions with evidence spans (TAR: the temporal-localisation questions).
For each benchmark and reference budget ``b``, FrameRouter (:mod:`neurips26.methods.frameselect.router`,
training-free) gives each question a budget and a sampling policy, the budgets' mean over the
benchmark's questions being ``b`` exactly; the baseline gives every question ``b`` uniform frames.

Metric: answer accuracy. CLoVR questions are answered by HOLMES's descriptor readout from exactly the
chosen frames (:mod:`frameselect_readout`); TAR has no answerer that reads frames here, so its questions
are scored by an answerer with perfect perception (right when a chosen frame lies in the evidence span,
else wrong: the answer is a span, no guess is possible). Items: questions, paired across arms. Main
comparison: both benchmarks at mean budget 8 (each question scored by its benchmark's answerer);
conditions: each benchmark at 4, 8 and 16 (``tiny``: main at 4; 2 and 4). ``extra``: the routed budgets'
mean and range, and a third arm, ``fixed_policy`` (the router's policy per question at the fixed budget),
which separates the budget allocation from the policy bank. Nothing trains: ``train_steps`` 0.
"""

from __future__ import annotations

import numpy as np
from frameselect_readout import ReadoutAnswerer
from frameselect_sets import oracle, pick, questions
from neurips26.methods.frameselect.router import route

from claims.core import CLAIMS, Arm, Outcome

BENCHMARKS = ("clovr", "tar")
BUDGETS = {"tiny": (2, 4), "default": (4, 8, 16), "large": (4, 8, 16, 32)}  # reference (mean) budgets
MAIN = {"tiny": 4, "default": 8, "large": 8}
ARMS = ("framerouter", "fixed", "fixed_policy")


def run_set(benchmark: str, seed: int, scale: str, answerer: ReadoutAnswerer) -> dict[int, dict]:
    """Per reference budget: each arm's per-question accuracy and the routed budgets."""
    qs, pools = questions(benchmark, "test", seed, scale)

    def score(q, p, indices) -> float:
        return answerer.accuracy(q, p, indices) if benchmark == "clovr" else oracle(q, p, indices)

    out = {}
    for b in BUDGETS[scale]:
        routed = route([q.query for q in qs], pools, b, seed=seed)
        picks = {"framerouter": [r.selection.indices for r in routed],
                 "fixed": [pick("uniform", p, b, seed)[0].indices for p in pools],
                 "fixed_policy": [pick(r.policy, p, b, seed)[0].indices for r, p in zip(routed, pools, strict=True)]}
        out[b] = {arm: [score(q, p, c) for q, p, c in zip(qs, pools, chosen, strict=True)]
                  for arm, chosen in picks.items()}
        out[b]["budgets"] = [r.budget for r in routed]
        out[b]["policies"] = [r.policy for r in routed]
    return out


@CLAIMS.register("framerouter", method="FrameRouter",
                 claim="Routing a per-question frame budget (and sampling policy) by the question's evidence demand "
                       "answers more questions correctly than one fixed budget with the same mean",
                 metric="answer accuracy (CLoVR: descriptor readout; TAR: perfect-perception answerer)",
                 direction="higher", baseline="uniform frames at the fixed budget equal to the routed mean",
                 method_arm="framerouter", baseline_arm="fixed")
def framerouter(scale: str, seeds: list[int]) -> Outcome:
    """Routed against fixed budgets on CLoVR and TAR at mean budgets 4, 8 and 16; see the module docstring."""
    answerer = ReadoutAnswerer()
    runs = {bench: [run_set(bench, s, scale, answerer) for s in seeds] for bench in BENCHMARKS}

    def arms(benches: tuple[str, ...], b: int) -> dict[str, Arm]:
        out = {}
        for arm in ARMS:
            items = [sum((runs[bench][i][b][arm] for bench in benches), []) for i in range(len(seeds))]
            out[arm] = Arm(values=[float(np.mean(x)) for x in items], items=items, compute={"train_steps": 0})
        return out

    budgets_of, main = BUDGETS[scale], MAIN[scale]
    conditions = {f"{bench}@{b}": arms((bench,), b) for bench in BENCHMARKS for b in budgets_of}
    budgets = {f"{bench}@{b}": {"mean": [float(np.mean(r[b]["budgets"])) for r in runs[bench]],
                                "min": int(min(min(r[b]["budgets"]) for r in runs[bench])),
                                "max": int(max(max(r[b]["budgets"]) for r in runs[bench])),
                                "policies": sorted({p for r in runs[bench] for p in r[b]["policies"]})}
               for bench in BENCHMARKS for b in budgets_of}
    extra = {"budgets": list(budgets_of), "main": f"clovr+tar@{main}", "routed_budgets": budgets,
             "questions": {bench: [len(r[main]["fixed"]) for r in runs[bench]] for bench in BENCHMARKS},
             "fixed_policy": {c: float(np.mean(a["fixed_policy"].values)) for c, a in conditions.items()},
             "answerers": {"clovr": ReadoutAnswerer.name, "tar": "perfect perception (evidence span seen)"}}
    return Outcome(arms=arms(BENCHMARKS, main), conditions=conditions, extra=extra)
