"""Layer-wise linear probing: at which layer are the tokens of interest most linearly separable?

:func:`collect` runs a Hugging Face model (a causal LM, or a VLM's language model over its image tokens) with
``output_hidden_states`` and keeps, for every labelled token, its hidden state at every layer (index 0: the
embeddings; index i: the output of block i). :func:`probe` fits one logistic-regression probe per layer with
cross-validation grouped by document (no document's tokens are both trained and tested on), scores the
out-of-fold predictions by ROC AUC, and gives each AUC a 95% interval by bootstrapping documents.

:func:`shape` reads the curve: it is **flat** when the lowest layer's AUC lies inside the best layer's 95% interval
(max - min AUC within the noise), which is what an untrained model shows, and then no peak is named; otherwise the
peak is the layer of highest AUC, and it is a **mid-layer** peak when it is neither the first nor the last layer and
the last layer's AUC lies below the peak's interval (the signal fades before the output).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scipy.stats import rankdata
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from neurips26.output import save_figure


@dataclass(frozen=True)
class Item:
    """One document: its model inputs and a label per input token (1, 0, or -1 for tokens not probed)."""

    inputs: dict[str, torch.Tensor]  # batch of one: input_ids (and pixel_values... for a VLM)
    labels: np.ndarray  # (sequence length,)


@dataclass(frozen=True)
class Tokens:
    """Hidden states of the labelled tokens: ``states[layer]`` is (tokens, dim)."""

    states: np.ndarray  # (layers + 1, tokens, dim)
    labels: np.ndarray  # (tokens,)
    groups: np.ndarray  # (tokens,) the document of each token


@dataclass(frozen=True)
class LayerScore:
    layer: int
    auc: float
    low: float
    high: float


@torch.no_grad()
def collect(model: Any, items: Iterable[Item], device: str = "cpu") -> Tokens:
    """Per-layer hidden states of every token labelled 0 or 1 (the model in eval mode, on ``device``)."""
    model.eval()
    states, labels, groups = [], [], []
    for doc, item in enumerate(items):
        keep = np.flatnonzero(item.labels >= 0)
        if not len(keep):
            continue
        out = model(**{k: v.to(device) for k, v in item.inputs.items()}, output_hidden_states=True)
        hidden = torch.stack([h[0, keep] for h in out.hidden_states]).float().cpu().numpy()
        states.append(hidden)
        labels.append(item.labels[keep])
        groups.append(np.full(len(keep), doc))
    if not states:
        raise ValueError("no labelled tokens to probe")
    return Tokens(np.concatenate(states, axis=1), np.concatenate(labels), np.concatenate(groups))


def rank_auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """ROC AUC from ranks (Mann-Whitney U, ties averaged): the same value as sklearn's, without its per-call checks
    (the bootstrap calls it thousands of times)."""
    ranks = rankdata(scores)
    positive = labels == 1
    n1, n0 = int(positive.sum()), int((~positive).sum())
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _bootstrap_auc(labels: np.ndarray, scores: np.ndarray, groups: np.ndarray, n_boot: int, seed: int
                   ) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    docs = np.unique(groups)
    index = {d: np.flatnonzero(groups == d) for d in docs}
    aucs = []
    for _ in range(n_boot):
        take = np.concatenate([index[d] for d in rng.choice(docs, len(docs))])
        if len(np.unique(labels[take])) == 2:
            aucs.append(rank_auc(labels[take], scores[take]))
    if not aucs:
        return float("nan"), float("nan")
    return float(np.percentile(aucs, 2.5)), float(np.percentile(aucs, 97.5))


def probe(tokens: Tokens, folds: int = 5, n_boot: int = 200, seed: int = 0,
          layers: Sequence[int] | None = None) -> list[LayerScore]:
    """Cross-validated probe AUC per layer (folds grouped by document) with bootstrap 95% intervals."""
    if len(np.unique(tokens.labels)) != 2:
        raise ValueError("probing needs tokens of both labels")
    folds = min(folds, len(np.unique(tokens.groups)))
    if folds < 2:
        raise ValueError("probing needs tokens from at least two documents")
    scores = []
    for layer in layers if layers is not None else range(tokens.states.shape[0]):
        x = tokens.states[layer]
        out_of_fold = np.zeros(len(tokens.labels))
        for train, test in GroupKFold(n_splits=folds).split(x, tokens.labels, tokens.groups):
            if len(np.unique(tokens.labels[train])) < 2:
                out_of_fold[test] = tokens.labels[train].mean()
                continue
            model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000))
            model.fit(x[train], tokens.labels[train])
            out_of_fold[test] = model.predict_proba(x[test])[:, 1]
        auc = float(roc_auc_score(tokens.labels, out_of_fold))
        low, high = _bootstrap_auc(tokens.labels, out_of_fold, tokens.groups, n_boot, seed)
        scores.append(LayerScore(layer, auc, low, high))
    return scores


def peak(scores: Sequence[LayerScore]) -> LayerScore:
    """The layer with the highest AUC."""
    return max(scores, key=lambda s: s.auc)


@dataclass(frozen=True)
class Shape:
    """What a probe curve shows (see the module docstring)."""

    flat: bool
    peak: int | None  # the peak layer; None when the curve is flat
    mid: bool  # a peak inside the network that fades by the last layer
    spread: float  # max - min AUC over layers
    noise: float  # the best layer's AUC minus its interval's lower bound

    def describe(self) -> str:
        """One line for people."""
        if self.flat:
            return (f"flat: max - min AUC {self.spread:.3f} is within the noise ({self.noise:.3f}); no layer stands "
                    "out (an untrained model shows this)")
        where = "a mid-layer peak that fades by the last layer" if self.mid else "no mid-layer peak"
        return f"peak at layer {self.peak} (max - min AUC {self.spread:.3f}, noise {self.noise:.3f}): {where}"


def shape(scores: Sequence[LayerScore]) -> Shape:
    """Flat, peaked, mid-layer peaked: the reading of a probe curve (see the module docstring)."""
    if not scores:
        raise ValueError("no layer scores")
    top, low = peak(scores), min(scores, key=lambda s: s.auc)
    spread, noise = top.auc - low.auc, top.auc - top.low
    if not (spread > noise):  # also flat when the interval is undefined (nan)
        return Shape(True, None, False, spread, noise)
    last = max(scores, key=lambda s: s.layer)
    first = min(scores, key=lambda s: s.layer)
    mid = top.layer not in (first.layer, last.layer) and last.auc < top.low
    return Shape(False, top.layer, mid, spread, noise)


def plot(curves: dict[str, Sequence[LayerScore]], path: Path, title: str = "") -> Path:
    """AUC per layer with its interval, one line per curve, each peak marked."""
    import matplotlib  # lazy: plotting only

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, scores in curves.items():
        x = [s.layer for s in scores]
        line, = ax.plot(x, [s.auc for s in scores], marker="o", label=name)
        ax.fill_between(x, [s.low for s in scores], [s.high for s in scores], alpha=0.2, color=line.get_color())
        top, reading = peak(scores), shape(scores)
        ax.annotate("flat" if reading.flat else f"peak {top.layer}", (top.layer, top.auc), textcoords="offset points",
                    xytext=(0, 8), ha="center", color=line.get_color())
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("layer (0: embeddings)")
    ax.set_ylabel("probe ROC AUC (95% interval)")
    ax.set_ylim(0.3, 1.02)
    ax.set_title(title or "layer-wise linear probes")
    ax.legend()
    return save_figure(fig, path)
