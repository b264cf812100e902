"""The claims harness: one registered claim per paper, measured against the baseline it beats.

A claim is a function registered on :data:`CLAIMS` with what it claims; it trains and scores its arms for
each seed at a scale and returns an :class:`Outcome`. The harness, not the claim, computes the effect, its
95% interval and the verdict, and writes the results file (``bench/results/<name>.json``)::

    @CLAIMS.register("rediff", method="ReDiff", claim="...", metric="exact match", direction="higher",
                     baseline="base masked-diffusion decoder, same total steps", method_arm="rediff",
                     baseline_arm="base")
    def rediff(scale: str, seeds: list[int]) -> Outcome:
        ...
        return Outcome(arms={"rediff": Arm(values=[...], items=[[...], ...], compute={"train_steps": 1200}),
                             "base": Arm(...)})

Arms report one value per seed (``values``) and, where the metric is a mean over items, the per-item scores
of each seed (``items``, paired across the two compared arms: item ``i`` is the same question in both). The
interval is then a two-level bootstrap (seeds, then items within each seed) of the paired difference; without
items, a Student t interval over the per-seed differences. ``compute.train_steps`` counts every optimiser
step an arm's model received (pre-training included) and must be equal across the compared arms.

A claim that cannot be tested on this machine returns ``Outcome(untestable="needs ...")`` (arms may still be
reported); its verdict is ``untestable here``. ``conditions`` reports the same comparison under further
settings (budgets, splits, tokens per step), each with its own effect, interval and verdict.
"""

from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from scipy import stats

from neurips26.errors import UserError
from neurips26.output import jsonable
from neurips26.registry import Registry

SCALES = ("tiny", "default", "large")
VERDICTS = ("reproduced", "not reproduced", "untestable here")
ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
BOOTSTRAP = 4000


def _check(name: str, info: dict[str, Any]) -> None:
    missing = {"method", "claim", "metric", "direction", "baseline", "method_arm", "baseline_arm"} - set(info)
    if missing:
        raise ValueError(f"claim {name!r} is registered without {', '.join(sorted(missing))}")
    if info["direction"] not in ("higher", "lower"):
        raise ValueError(f"claim {name!r}: direction must be 'higher' or 'lower', not {info['direction']!r}")


class ClaimRefused(UserError):
    """The harness refuses a run or an outcome (unknown scale, too few seeds, unequal compute, missing arm)."""


class ClaimFunction(Protocol):
    def __call__(self, scale: str, seeds: list[int]) -> Outcome: ...


CLAIMS: Registry[ClaimFunction] = Registry("claim", group="neurips26.claims", check=_check)


@dataclass
class Arm:
    """One arm's scores: one value per seed, optionally the per-item scores behind each value."""

    values: list[float]
    compute: dict[str, Any]
    items: list[list[float]] | None = None


@dataclass
class Outcome:
    """What a claim measured: its arms, further conditions, and anything else worth keeping (``extra``)."""

    arms: dict[str, Arm] = field(default_factory=dict)
    conditions: dict[str, dict[str, Arm]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    untestable: str | None = None


def interval(method: Arm, baseline: Arm, seed: int = 0) -> tuple[float, tuple[float, float]]:
    """Effect (mean of ``method`` - mean of ``baseline`` over seeds) and its 95% interval.

    Two-level paired bootstrap (seeds, then items within each resampled seed) when both arms give items
    of equal length per seed; otherwise a t interval over the per-seed differences."""
    a, b = np.asarray(method.values, float), np.asarray(baseline.values, float)
    if a.shape != b.shape or a.size == 0:
        raise ClaimRefused(f"arms have {a.size} and {b.size} seed values; a claim compares the same seeds")
    effect = float(a.mean() - b.mean())
    paired = (method.items is not None and baseline.items is not None
              and [len(x) for x in method.items] == [len(x) for x in baseline.items]
              and all(len(x) for x in method.items))
    if paired:
        diffs = [np.asarray(x, float) - np.asarray(y, float) for x, y in zip(method.items, baseline.items,
                                                                             strict=True)]
        rng = np.random.default_rng(seed)
        n_seeds = len(diffs)
        draws = np.empty(BOOTSTRAP)
        for k in range(BOOTSTRAP):
            picked = rng.integers(0, n_seeds, n_seeds)
            draws[k] = np.mean([diffs[s][rng.integers(0, diffs[s].size, diffs[s].size)].mean() for s in picked])
        lo, hi = np.quantile(draws, [0.025, 0.975])
        return effect, (float(lo), float(hi))
    d = a - b
    if d.size < 2:
        return effect, (-math.inf, math.inf)
    sd = float(d.std(ddof=1))
    if sd == 0:
        return effect, (effect, effect)
    half = float(stats.t.ppf(0.975, d.size - 1)) * sd / math.sqrt(d.size)
    return effect, (effect - half, effect + half)


def verdict(ci95: tuple[float, float], direction: str, untestable: str | None = None) -> str:
    """``reproduced`` when the interval excludes no effect in the claimed direction, else ``not reproduced``."""
    if untestable:
        return "untestable here"
    lo, hi = ci95
    return "reproduced" if (lo > 0 if direction == "higher" else hi < 0) else "not reproduced"


def _compare(arms: dict[str, Arm], info: dict[str, Any], untestable: str | None) -> dict[str, Any]:
    m, b = arms.get(info["method_arm"]), arms.get(info["baseline_arm"])
    if m is None or b is None:
        if untestable:
            return {"effect": None, "ci95": None, "verdict": "untestable here"}
        raise ClaimRefused(f"the outcome has arms {sorted(arms)}; the claim compares "
                         f"{info['method_arm']!r} with {info['baseline_arm']!r}")
    steps = {name: arm.compute.get("train_steps") for name, arm in arms.items()}
    if steps[info["method_arm"]] != steps[info["baseline_arm"]]:
        raise ClaimRefused(f"unequal compute: train_steps {steps}; a claim compares arms at equal steps")
    effect, ci = interval(m, b)
    return {"effect": effect, "ci95": list(ci), "verdict": verdict(ci, info["direction"], untestable)}


def _arm_json(arm: Arm) -> dict[str, Any]:
    out: dict[str, Any] = {"values": [float(v) for v in arm.values], "mean": float(np.mean(arm.values)),
                           "compute": arm.compute}
    if arm.items is not None:
        out["n_items"] = [len(x) for x in arm.items]
    return out


def result(name: str, outcome: Outcome, *, scale: str, seeds: list[int], command: str) -> dict[str, Any]:
    """The results file's content for ``outcome`` of claim ``name`` (effect, interval and verdict computed)."""
    info = CLAIMS.info(name)
    head = _compare(outcome.arms, info, outcome.untestable)
    out: dict[str, Any] = {
        "name": name, "method": info["method"], "claim": info["claim"], "metric": info["metric"],
        "direction": info["direction"], "baseline": info["baseline"],
        "method_arm": info["method_arm"], "baseline_arm": info["baseline_arm"],
        "arms": {k: _arm_json(v) for k, v in outcome.arms.items()},
        **head, "seeds": list(seeds), "scale": scale, "command": command,
    }
    if outcome.untestable:
        out["needs"] = outcome.untestable
    if outcome.conditions:
        out["conditions"] = {c: {**_compare(arms, info, outcome.untestable),
                                 "arms": {k: _arm_json(v) for k, v in arms.items()}}
                             for c, arms in outcome.conditions.items()}
    out.update(outcome.extra)
    return out


def run_claim(name: str, *, scale: str = "default", seeds: int = 3, out: Path = RESULTS,
              command: str | None = None) -> dict[str, Any]:
    """Run claim ``name`` over seeds ``0..seeds-1`` at ``scale`` and write ``out/<name>.json``.

    The file also records the run's wall time (``seconds``); everything else in it follows from the seeds."""
    if scale not in SCALES:
        raise ClaimRefused(f"unknown scale {scale!r}; known: {', '.join(SCALES)}")
    if seeds < 3:
        raise ClaimRefused(f"--seeds {seeds}: a claim needs at least 3 seeds for an interval")
    fn = CLAIMS.get(name)
    seed_list = list(range(seeds))
    start = time.perf_counter()
    outcome = fn(scale, seed_list)
    cmd = command or f"python bench/claims/run.py {name} --scale {scale} --seeds {seeds}"
    res = result(name, outcome, scale=scale, seeds=seed_list, command=cmd)
    res["seconds"] = round(time.perf_counter() - start, 1)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(res, indent=2, sort_keys=False, default=jsonable) + "\n")
    tmp.replace(path)
    return res


def load_all() -> None:
    """Import every claim module of this folder (each registers itself)."""
    import importlib
    import pkgutil

    here = Path(__file__).parent
    if str(here.parent) not in sys.path:
        sys.path.insert(0, str(here.parent))
    for mod in pkgutil.iter_modules([str(here)]):
        if mod.name not in ("core", "run", "report") and not mod.name.startswith("_"):
            importlib.import_module(f"claims.{mod.name}")
