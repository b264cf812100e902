"""HOLMES against the uniform-frames baseline on a built CLoVR folder, scored against the generator's truth.

    rows, answers = evaluate(Path("clovr"), ["oracle", "learned"], [8, 16, 32], scenes=raw / "scenes",
                             planner=planner("reader"))

Per (method, perception, budget): accuracy per CLoVR level and task and overall (a closed gate
still answers; ``answered_open`` is the share through open gates and ``acc_open`` their
accuracy); slot F1 (an entity slot is *filled* when a verified binding was found; truth: the
scene records show the entity in that video); binding accuracy (a slot's bind-or-absent decision
agrees with the truth and, when bound, the track's sightings lie inside the entity's visible span);
and the certificates' calibration (searched-and-not-found against truly absent, by confidence band).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from neurips26.methods.frameselect import benchmarks
from neurips26.methods.frameselect.pool import build_pool, video_digest

from neurips26.errors import UserError

from .core import CLOVR_METHODS, PERCEPTION
from .learned import Learned
from .method import Answer
from .perception import Oracle
from .readout import verified

BANDS = ((0.0, 0.5), (0.5, 0.9), (0.9, 1.01))


def perception_of(name: str, scenes: Path | None, model: str | None = None, release: Path | None = None) -> Any:
    """The backend ``name`` (oracle needs ``scenes``; vlm takes ``model``; learned trains on ``release``)."""
    if name == "oracle":
        if scenes is None:
            raise UserError("the oracle backend needs the generated release's scenes folder (--scenes)")
        return PERCEPTION.get("oracle")(scenes)
    if name == "learned":
        return PERCEPTION.get("learned")(release=release)
    return PERCEPTION.get(name)(**({"model": model} if model and name == "vlm" else {}))


def described(name: str, backend: Any) -> str:
    """One line saying what a perception backend is (and, for learned, what it was trained on and how well)."""
    if isinstance(backend, Learned):
        c, held = backend.card, backend.card.get("held_out", {})
        return (f"{name}: MLPs on foreground blobs trained on {c.get('release')} ({c.get('train_frames')} frames of "
                f"{c.get('train_videos')} videos); on {c.get('held_out_videos')} held-out videos colour accuracy "
                f"{held.get('colour_acc', 0):.2f} (majority {held.get('colour_majority', 0):.2f}), type accuracy "
                f"{held.get('kind_acc', 0):.2f} (majority {held.get('kind_majority', 0):.2f}), recall "
                f"{backend.recall:.2f}")
    if isinstance(backend, Oracle):
        return f"{name}: the release's scene records ({backend.scenes}): ground truth, the upper bound"
    if name == "descriptor":
        return f"{name}: colour blobs against the renderer's palette (fixed rules, no training)"
    return f"{name}: {getattr(getattr(backend, 'answerer', None), 'name', type(backend).__name__)}"


def check_disjoint(backend: Learned, questions: list) -> None:
    """Learned perception must not have trained on an evaluated video."""
    shared = {p for q in questions for p in q.video_paths if video_digest(Path(p)) in backend.videos}
    if shared:
        raise UserError(f"learned perception was trained on {len(shared)} of the evaluated videos (e.g. "
                        f"{sorted(shared)[0]}); train it on another release (--train-release)")


def truth(answer: Answer, pool_ids: list[str], oracle: Oracle) -> list[tuple[bool, bool, bool]]:
    """(truly present, predicted present, bound to the right track) per entity slot of an answer."""
    out = []
    for slot in answer.plan.slots:
        e = slot.entity
        if e is None:
            continue
        real = [x for x in oracle.entities_of(pool_ids[slot.video]) if x.colour == e.colour and x.kind == e.kind]
        span = None
        if real:
            seen = [t for t in np.arange(0, 600, 0.1) if real[0].visible(float(t))]
            span = (min(seen), max(seen)) if seen else None
        b = answer.graph.find(slot.video, e.colour, e.kind)
        bound = verified(b, e)
        right = bound and span is not None and all(span[0] - 0.05 <= t <= span[1] + 0.05 for t in b.times)
        out.append((span is not None, bound, right))
    return out


def slot_scores(checks: list[tuple[bool, bool, bool]]) -> dict[str, float | None]:
    """Slot F1 (filled vs truly present) and binding accuracy over entity slots."""
    if not checks:
        return {"slot_f1": None, "binding_acc": None}
    tp = sum(real and pred for real, pred, _ in checks)
    fp = sum(pred and not real for real, pred, _ in checks)
    fn = sum(real and not pred for real, pred, _ in checks)
    correct = sum((right if pred else not real) for real, pred, right in checks)
    return {"slot_f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0, "binding_acc": correct / len(checks)}


def calibration(pairs: list[tuple[float, bool]]) -> list[dict[str, Any]]:
    """Per confidence band: certificates of searches that found nothing, mean confidence, share truly absent."""
    out = []
    for lo, hi in BANDS:
        inside = [(c, absent) for c, absent in pairs if lo <= c < hi]
        if inside:
            out.append({"band": f"[{lo:.1f}, {min(hi, 1.0):.1f}]", "n": len(inside),
                        "confidence": float(np.mean([c for c, _ in inside])),
                        "truly_absent": float(np.mean([a for _, a in inside]))})
    return out


def evaluate(folder: Path | None, perceptions: Sequence[str] | dict[str, Any], budgets: Sequence[int],
             methods: Sequence[str] = ("holmes", "uniform"), scenes: Path | None = None, limit: int | None = None,
             candidate_fps: float = 2.0, cache: Path | None = None, model: str | None = None,
             progress: Callable[[int, int], None] | None = None, planner: Any = None,
             train_release: Path | None = None) -> tuple[list[dict], list[dict]]:
    """Result rows and answer records (with certificates) of every (method, perception, budget).

    ``perceptions``: backend names, or backends by name (:func:`perception_of`); ``planner``: an object of
    :func:`.planner.planner` (None: the ``rules`` planner, which reads the release's subtask labels; any other
    planner reads the questions without them)."""
    questions = benchmarks.load("clovr", folder, limit=limit)
    if planner is not None:
        questions = [replace(q, row={**q.row, "subtask": None}) for q in questions]
    oracle = PERCEPTION.get("oracle")(scenes) if scenes is not None and Path(scenes).is_dir() else None
    backends = perceptions if isinstance(perceptions, dict) else \
        {name: perception_of(name, scenes, model, train_release) for name in perceptions}
    for backend in backends.values():
        if isinstance(backend, Learned):
            check_disjoint(backend, questions)
    pools = [build_pool(q.video_paths, query=q.query, encoder="descriptor", candidate_fps=candidate_fps, thumb=128,
                        cache=cache) for q in questions]
    rows, records = [], []
    steps, done = len(methods) * len(backends) * len(budgets) * len(questions), 0
    for method in methods:
        fn = CLOVR_METHODS.get(method)
        for pname, backend in backends.items():
            for budget in budgets:
                acc: dict[tuple[str, str], list[bool]] = defaultdict(list)
                opened, checks, certs = [], [], []
                for q, pool in zip(questions, pools, strict=True):
                    a = fn(q, pool, backend, budget=budget, reader=planner)
                    ok = a.letter == q.answer
                    for key in (("all", "all"), ("level", q.kind), ("task", q.row.get("task") or "")):
                        acc[key].append(ok)
                    if a.reason == "open":
                        opened.append(ok)
                    if oracle is not None:
                        checks += truth(a, pool.video_ids, oracle)
                        for c, slot in zip(a.certificates, a.plan.slots, strict=False):  # uniform: none
                            if slot.entity is not None and not c.found:
                                real = any(x.colour == slot.entity.colour and x.kind == slot.entity.kind
                                           for x in oracle.entities_of(c.video_id))
                                certs.append((c.confidence, not real))
                    records.append({**a.record(), "perception": pname, "correct": ok, "level": q.kind,
                                    "task": q.row.get("task")})
                    done += 1
                    if progress:
                        progress(done, steps)
                base = {"method": method, "perception": pname, "budget": int(budget)}
                for (scope, name), oks in sorted(acc.items()):
                    rows.append({**base, "scope": scope, "name": name, "metric": "acc", "value": float(np.mean(oks)),
                                 "n": len(oks)})
                n = len(acc[("all", "all")])
                extra = {"answered_open": len(opened) / n, "acc_open": float(np.mean(opened)) if opened else None,
                         **slot_scores(checks)}
                rows += [{**base, "scope": "all", "name": "all", "metric": k, "value": v, "n": n}
                         for k, v in extra.items() if v is not None]
                rows += [{**base, "scope": "calibration", "name": c["band"], "metric": "truly_absent",
                          "value": c["truly_absent"], "confidence": c["confidence"], "n": c["n"]}
                         for c in calibration(certs)]
    return rows, records
