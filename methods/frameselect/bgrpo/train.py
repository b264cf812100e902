"""Training the Bayesian GRPO selector: saliency pre-training, GRPO with a frozen answerer's NLL, an ensemble.

The posterior over the policy weights is an anchored bootstrap ensemble of ``members`` policies
(anchored ensembling, Pearce et al., 2020, "Uncertainty in neural networks: approximately Bayesian
ensembling", on bootstrap resamples as in deep ensembles, Lakshminarayanan et al., 2017): member ``m``
draws an anchor ``a_m ~ N(0, C I)`` from the Gaussian prior, resamples the train questions with
replacement, and is pre-trained on their evidence spans (balanced logistic regression of "frame inside
an evidence span" on the policy features, with the penalty ``|w - a_m|^2 / 2C``: the MAP under a prior
centred on its anchor); it is then updated by GRPO (:mod:`.grpo`) against the frozen reward model
with KL to its own pre-trained weights. With little data the members stay near their scattered
anchors (the prior's spread); with more, the likelihood pulls them together. Why an ensemble rather
than a Laplace approximation: GRPO's objective is not a log-likelihood, so there is no posterior mode
with a Hessian to centre a Gaussian on.
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
from .reward import EvidenceAnswerer

FORMAT = "neurips26-bgrpo/1"


@dataclass
class Config:
    """Training settings (stored in ``config.json``)."""

    members: int = 5
    group: int = 8  # picks per question per GRPO step (G)
    epochs: int = 3  # GRPO passes over the (resampled) train questions
    budget: int = 8  # frames per pick while training
    lr: float = 0.05
    beta: float = 0.04  # weight of the KL to the pre-trained policy
    l2: float = 1.0  # inverse strength C of the pre-training's L2 prior
    seed: int = 0


@dataclass
class Example:
    """A train question: its pool's policy features, video of each candidate, evidence labels, option count."""

    phi: np.ndarray
    video_index: np.ndarray
    labels: np.ndarray
    n_options: int = 4


@dataclass
class Posterior:
    """The ensemble: one weight vector per member, and each member's pre-trained reference."""

    weights: np.ndarray  # (M, d)
    reference: np.ndarray  # (M, d)
    config: Config = field(default_factory=Config)
    history: list[dict] = field(default_factory=list)

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
                                                        "training": asdict(self.config), "history": self.history},
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
                     Config(**config["training"]), config.get("history", []))


def example(pool: Pool, evidence: Sequence[tuple[int, float, float]], n_options: int = 4) -> Example:
    """A train example: a candidate is positive when it lies inside one of its video's evidence spans."""
    labels = np.zeros(pool.n, bool)
    for v, start, end in evidence:
        labels |= (pool.video_index == v) & (pool.times >= start) & (pool.times < end)
    return Example(frame_features(pool), np.asarray(pool.video_index), labels, n_options)


def pretrain(examples: Sequence[Example], l2: float = 1.0, anchor: np.ndarray | None = None) -> np.ndarray:
    """Saliency pre-training: balanced logistic regression of evidence labels on the features (the bias is a
    feature), L2 penalty ``|w - anchor|^2 / 2 l2`` (anchor 0: the usual ridge)."""
    phi = np.concatenate([e.phi for e in examples])
    y = np.concatenate([e.labels for e in examples]).astype(np.float64)
    if y.min() == y.max():
        raise UserError("saliency pre-training needs frames both inside and outside evidence spans")
    weight = np.where(y > 0, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum())))  # balanced classes
    anchor = np.zeros(phi.shape[1]) if anchor is None else anchor

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = phi @ w
        nll = weight * (np.logaddexp(0.0, z) - y * z)
        grad = phi.T @ (weight * (expit(z) - y)) + (w - anchor) / l2
        return float(nll.sum() + ((w - anchor) ** 2).sum() / (2 * l2)), grad

    return minimize(loss, anchor.copy(), jac=True, method="L-BFGS-B").x


def train(examples: Sequence[Example], reward: EvidenceAnswerer | None = None, config: Config | None = None,
          progress: Callable[[int, int], None] | None = None) -> Posterior:
    """The bootstrap ensemble, each member pre-trained then GRPO-updated (see the module docstring)."""
    config = config or Config()
    if not examples:
        raise UserError("bgrpo training needs at least one train question with evidence")
    rng = np.random.default_rng(config.seed)
    if reward is None:
        reward = EvidenceAnswerer().fit(np.concatenate([e.phi for e in examples]),
                                        np.concatenate([e.labels for e in examples]), config.seed)
    evidence = [reward.evidence(e.phi) for e in examples]
    weights, refs, history = [], [], []
    steps, done = config.members * max(1, config.epochs) * len(examples), 0
    for m in range(config.members):
        idx = rng.integers(0, len(examples), len(examples)) if config.members > 1 else np.arange(len(examples))
        anchor = rng.normal(0.0, np.sqrt(config.l2), examples[0].phi.shape[1]) if config.members > 1 else None
        ref = pretrain([examples[i] for i in idx], config.l2, anchor)
        w = ref.copy()
        for epoch in range(config.epochs):
            stats = []
            for i in rng.permutation(idx):
                e = examples[i]
                k = min(config.budget, len(e.labels) - 1)
                picks = [sample(e.phi @ w, k, rng) for _ in range(config.group)] if k >= 1 else []
                if picks:
                    rewards = [-reward.nll(e.phi, e.video_index, s, e.n_options, evidence[i]) for s in picks]
                    w, s = grpo_step(w, ref, e.phi, picks, rewards, config.lr, config.beta)
                    stats.append(s)
                done += 1
                if progress:
                    progress(done, steps)
            if stats:
                history.append({"member": m, "epoch": epoch, "reward": float(np.mean([s["reward"] for s in stats])),
                                "kl": float(np.mean([s["kl"] for s in stats]))})
        weights.append(w)
        refs.append(ref)
    return Posterior(np.stack(weights), np.stack(refs), config, history)
