"""Frozen reward models: the negative log-likelihood of the gold answer given the picked frames.

A reward model has ``nll(phi, video_index, picks, n_options) -> float``. On the CPU it is
:class:`EvidenceAnswerer`, a small answerer trained on the train split's frame features: a logistic
model gives each frame the probability ``e_i`` that it shows the question's evidence; video ``v``'s
evidence is seen with probability ``1 - prod_{i in S_v} (1 - e_i)`` and needed with probability
``n_v = max_i e_i`` over its candidates; the answer is right with probability
``1/K + (1 - 1/K) prod_v (1 - n_v + n_v * seen_v)`` (guessing among ``K`` options otherwise). Its NLL
falls as the picks cover every video that holds evidence, which per-frame saliency alone does not
reward. On a GPU a VLM answerer's NLL plugs in through the same method.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression


@dataclass
class EvidenceAnswerer:
    """P(evidence | frame features) by logistic regression; the answer's NLL from the picked frames."""

    model: LogisticRegression | None = None

    def fit(self, phi: np.ndarray, labels: np.ndarray, seed: int = 0) -> EvidenceAnswerer:
        self.model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=500, random_state=seed)
        self.model.fit(phi, labels.astype(int))
        return self

    def evidence(self, phi: np.ndarray) -> np.ndarray:
        return self.model.predict_proba(phi)[:, 1]

    def nll(self, phi: np.ndarray, video_index: np.ndarray, picks: np.ndarray, n_options: int = 4,
            evidence: np.ndarray | None = None) -> float:
        e = self.evidence(phi) if evidence is None else evidence
        chosen = np.zeros(len(e), bool)
        chosen[picks] = True
        found = 1.0
        for v in np.unique(video_index):
            rows = video_index == v
            need = float(e[rows].max())
            seen = 1.0 - float(np.prod(1.0 - e[rows & chosen]))
            found *= 1.0 - need + need * seen
        p = 1.0 / n_options + (1.0 - 1.0 / n_options) * found
        return float(-np.log(max(p, 1e-12)))
