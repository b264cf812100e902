"""Training the Bayesian GRPO selector: a supervised prior over frame relevance, updated by GRPO's reward.

*Prior.* Each of ``members`` policies is pre-trained on the evidence labels of a bootstrap resample of
the train questions (balanced logistic regression of "frame inside an evidence span" on the policy
features, with the penalty ``|w - a_m|^2 / 2C`` around an anchor ``a_m ~ N(0, C I)``: anchored
ensembling, Pearce et al., 2020, on bootstrap resamples as in deep ensembles, Lakshminarayanan et al.,
2017). The members' pre-trained policies ``pi_ref`` are the prior over frame relevance that the labels
give; their spread is its uncertainty.

*Posterior.* GRPO (:mod:`.grpo`) then updates each member with the reward of :mod:`.reward` (a frozen
answerer's log-likelihood of the gold answer given the picked frames: task evidence, not the labels),
with the KL weight ``beta`` to the member's own prior policy. KL-regularised reward maximisation has the
fixed point ``pi(S) ~ pi_ref(S) exp(r(S) / beta)``: Bayes' rule with the prior ``pi_ref`` and the
likelihood ``exp(r / beta)``, which GRPO's steps move towards. Why an ensemble rather than a Laplace
approximation: GRPO's objective is not a log-likelihood, so there is no mode with a Hessian to centre a
Gaussian on.

*SFT-only* (``mode="sft"``), the control at equal compute: the same prior, then as many further
supervised steps (gradient steps of the pre-training objective on one question's labels) as GRPO takes.
:attr:`Posterior.steps` counts every optimiser step (pre-training iterations included).

Selection uses the posterior predictive: each member's first-pick distribution ``softmax(s_m)``,
averaged over members; the ``budget`` most probable frames are taken.

A trained posterior is a Hub-ready model folder: ``model.safetensors`` (``weights`` and ``reference``,
members x features), ``config.json`` and a model card ``README.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file
from scipy.optimize import minimize
from scipy.special import expit

from neurips26.errors import UserError

from ..core import Pool
from .grpo import step as grpo_step
from .policy import frame_features, sample, softmax
from .reward import AnswerReward

FORMAT = "neurips26-bgrpo/1"


@dataclass
class Config:
    """Training settings (stored in ``config.json``)."""

    members: int = 5
    group: int = 8  # picks per question per GRPO step (G)
    epochs: int = 3  # GRPO passes over the (resampled) train questions
    budget: int = 8  # frames per pick while training
    lr: float = 0.05  # GRPO's step size
    sft_lr: float = 0.5  # the supervised steps' size (mode "sft")
    beta: float = 0.04  # weight of the KL to the pre-trained policy
    l2: float = 1.0  # inverse strength C of the pre-training's L2 prior
    seed: int = 0


@dataclass
class Example:
    """A train question: its pool's policy features, video of each candidate, evidence labels, option count, and
    the frozen answerer's verdict on picks (``judge``: 1 right, 0 wrong, None no option) or log-likelihood."""

    phi: np.ndarray
    video_index: np.ndarray
    labels: np.ndarray
    n_options: int = 4
    judge: Callable[[np.ndarray], float | None] = field(default=lambda picks: None, repr=False)
    loglik: Callable[[np.ndarray], float] | None = field(default=None, repr=False)


@dataclass
class Posterior:
    """The ensemble: one weight vector per member, and each member's pre-trained reference."""

    weights: np.ndarray  # (M, d)
    reference: np.ndarray  # (M, d)
    config: Config = field(default_factory=Config)
    history: list[dict] = field(default_factory=list)
    steps: int = 0  # optimiser steps over all members, pre-training iterations included

    def probabilities(self, pool: Pool) -> np.ndarray:
        """(M, N): each member's first-pick distribution over the pool's candidates."""
        phi = frame_features(pool)
        if phi.shape[1] != self.weights.shape[1]:
            raise UserError(f"bgrpo model has {self.weights.shape[1]} features, the pool gives {phi.shape[1]}: "
                            "train it on pools of the same encoder")
        return np.stack([softmax(phi @ w) for w in self.weights])

    def predictive(self, pool: Pool) -> tuple[np.ndarray, np.ndarray]:
        """The posterior predictive first-pick distribution and its spread (std over members) per candidate."""
        p = self.probabilities(pool)
        return p.mean(axis=0), p.std(axis=0)

    def disagreement(self, pool: Pool, budget: int) -> float:
        """Epistemic uncertainty of the selection: mean over member pairs of 1 - Jaccard(top-budget sets)."""
        tops = [set(np.argsort(-p, kind="stable")[:budget].tolist()) for p in self.probabilities(pool)]
        pairs = [(a, b) for i, a in enumerate(tops) for b in tops[i + 1:]]
        return float(np.mean([1 - len(a & b) / len(a | b) for a, b in pairs])) if pairs else 0.0

    def save(self, folder: Path, card: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        save_file({"weights": self.weights.astype(np.float32), "reference": self.reference.astype(np.float32)},
                  str(folder / "model.safetensors"), metadata={"format": FORMAT})
        (folder / "config.json").write_text(json.dumps({"format": FORMAT, "selector": "bgrpo",
                                                        "features": int(self.weights.shape[1]),
                                                        "training": asdict(self.config), "history": self.history,
                                                        "steps": self.steps},
                                                       indent=1) + "\n")
        (folder / "README.md").write_text(card)
        return folder


def load(folder: Path | str) -> Posterior:
    """A posterior saved by :meth:`Posterior.save`."""
    folder = Path(folder)
    path = folder / "model.safetensors"
    if not path.is_file():
        raise UserError(f"{folder}: not a bgrpo model folder (no model.safetensors); train one with "
                        "`neurips26 frameselect train-bgrpo`")
    tensors = load_file(str(path))
    config = json.loads((folder / "config.json").read_text())
    return Posterior(tensors["weights"].astype(np.float64), tensors["reference"].astype(np.float64),
                     Config(**config["training"]), config.get("history", []), int(config.get("steps", 0)))


def example(pool: Pool, evidence: Sequence[tuple[int, float, float]], n_options: int = 4,
            judge: Callable[[np.ndarray], float | None] | None = None) -> Example:
    """A train example: a candidate is positive when it lies inside one of its video's evidence spans."""
    labels = np.zeros(pool.n, bool)
    for v, start, end in evidence:
        labels |= (pool.video_index == v) & (pool.times >= start) & (pool.times < end)
    return Example(frame_features(pool), np.asarray(pool.video_index), labels, n_options,
                   **({"judge": judge} if judge is not None else {}))


def _balanced(y: np.ndarray) -> np.ndarray:
    return np.where(y > 0, len(y) / (2 * max(y.sum(), 1)), len(y) / (2 * max(len(y) - y.sum(), 1)))


def sft_gradient(w: np.ndarray, e: Example, anchor: np.ndarray, l2: float, n_questions: int,
                 balance: tuple[float, float]) -> np.ndarray:
    """One question's stochastic gradient of the pre-training objective, per frame: its frames' balanced logistic
    loss plus its share ``1 / n_questions`` of the prior (``balance``: the resample's negative, positive weights)."""
    y = e.labels.astype(np.float64)
    weight = np.where(y > 0, balance[1], balance[0])
    return (e.phi.T @ (weight * (expit(e.phi @ w) - y)) + (w - anchor) / (l2 * n_questions)) / len(y)


def pretrain(examples: Sequence[Example], l2: float = 1.0, anchor: np.ndarray | None = None
             ) -> tuple[np.ndarray, int]:
    """Saliency pre-training: balanced logistic regression of evidence labels on the features (the bias is a
    feature), L2 penalty ``|w - anchor|^2 / 2 l2`` (anchor 0: the usual ridge); the weights and L-BFGS's steps."""
    phi = np.concatenate([e.phi for e in examples])
    y = np.concatenate([e.labels for e in examples]).astype(np.float64)
    if y.min() == y.max():
        raise UserError("saliency pre-training needs frames both inside and outside evidence spans")
    weight = _balanced(y)
    anchor = np.zeros(phi.shape[1]) if anchor is None else anchor

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = phi @ w
        nll = weight * (np.logaddexp(0.0, z) - y * z)
        grad = phi.T @ (weight * (expit(z) - y)) + (w - anchor) / l2
        return float(nll.sum() + ((w - anchor) ** 2).sum() / (2 * l2)), grad

    fit = minimize(loss, anchor.copy(), jac=True, method="L-BFGS-B")
    return fit.x, int(fit.nit)


def train(examples: Sequence[Example], reward: AnswerReward | None = None, config: Config | None = None,
          progress: Callable[[int, int], None] | None = None, mode: str = "grpo") -> Posterior:
    """The ensemble: each member pre-trained, then updated by GRPO (``mode="grpo"``, with ``reward``) or by as
    many further supervised steps (``mode="sft"``); see the module docstring."""
    config = config or Config()
    if mode not in ("grpo", "sft"):
        raise ValueError(f"mode must be 'grpo' or 'sft', not {mode!r}")
    if not examples:
        raise UserError("bgrpo training needs at least one train question with evidence")
    if mode == "grpo" and config.epochs > 0 and reward is None:
        raise UserError("GRPO needs a reward: a frozen answerer's AnswerReward (see bgrpo.reward)")
    weights, refs, history, total = [], [], [], 0
    steps, done = config.members * max(1, config.epochs) * len(examples), 0
    for m in range(config.members):
        rng = np.random.default_rng([config.seed, m])  # per member: both modes see the same resample and anchor
        sampler = np.random.default_rng([config.seed, m, 1])
        idx = rng.integers(0, len(examples), len(examples)) if config.members > 1 else np.arange(len(examples))
        anchor = rng.normal(0.0, np.sqrt(config.l2), examples[0].phi.shape[1]) if config.members > 1 else None
        ref, nit = pretrain([examples[i] for i in idx], config.l2, anchor)
        total += nit
        y = np.concatenate([examples[i].labels for i in idx])
        balance = (len(y) / (2 * max(len(y) - y.sum(), 1)), len(y) / (2 * max(y.sum(), 1)))
        anchor = np.zeros_like(ref) if anchor is None else anchor
        w = ref.copy()
        for epoch in range(config.epochs):
            stats = []
            for i in rng.permutation(idx):
                e = examples[i]
                k = min(config.budget, len(e.labels) - 1)
                if k < 1:
                    continue
                if mode == "grpo":
                    picks = [sample(e.phi @ w, k, sampler) for _ in range(config.group)]
                    rewards = [reward.loglik(e, s) for s in picks]
                    w, s = grpo_step(w, ref, e.phi, picks, rewards, config.lr, config.beta)
                    stats.append(s)
                else:
                    w = w - config.sft_lr * sft_gradient(w, e, anchor, config.l2, len(idx), balance)
                total += 1
                done += 1
                if progress:
                    progress(done, steps)
            if stats:
                history.append({"member": m, "epoch": epoch, "reward": float(np.mean([s["reward"] for s in stats])),
                                "kl": float(np.mean([s["kl"] for s in stats]))})
        weights.append(w)
        refs.append(ref)
    return Posterior(np.stack(weights), np.stack(refs), config, history, total)
