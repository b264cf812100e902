"""Failure signatures: observable ways a model fails, each with its detector and the intervention class it calls for.

Every signature is one function registered in :data:`SIGNATURES` with its ``family`` (output form, decision bias,
evidence use) and ``intervention`` (one of :data:`INTERVENTIONS`): the function reads a :class:`~.views.TaskView`
and returns a :class:`Finding` (documents considered, documents showing the signature, whether it fires for the
task, and a one-line detail), or None when it does not apply to the task (a position bias needs options).

* Output form, per document: ``empty``, ``truncated`` (the generation used the whole ``max_gen_toks`` without
  reaching a stop sequence), ``refusal``, ``unextractable`` (the task's answers form a small label set and the
  response names none of them), ``wrong_language`` (the response is not in the language of the gold answer).
  Each fires when at least one document shows it.
* Decision biases, per task: ``position_bias`` (one option position chosen far above its gold share),
  ``label_bias`` (one answer label predicted far above its gold share), ``length_bias`` (raw and per-character
  loglikelihood choose differently on many documents, and the raw choice is systematically the shorter or the
  longer option), ``fewshot_copy`` (the generation repeats an in-context example's answer instead of the gold).
  "Far above" is a test, not a threshold on a point estimate: the Wilson 95% lower bound of the chosen share
  exceeds the gold share by :data:`MARGIN`.
* Evidence use is measured by counterfactual re-runs (:mod:`.counterfactual`), not from the samples file alone.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from neurips26.registry import Registry
from neurips26.stats import wilson

from .views import DocView, TaskView, normalise

INTERVENTIONS = ("prompt/format", "decoding", "data", "perception", "reasoning")
FAMILIES = ("output form", "decision bias", "evidence use")
MARGIN = 0.2  # a bias fires when the Wilson lower bound of the chosen share exceeds the gold share by this much
MAX_LABELS = 12  # a generation task whose gold answers take at most this many values has a label set
LETTER = re.compile(r"\(?[A-Z]\)?")  # an option that is only a letter: A, (B)


def _check(name: str, info: dict) -> None:
    if info.get("family") not in FAMILIES or info.get("intervention") not in INTERVENTIONS:
        raise ValueError(f"signature {name}: family must be one of {FAMILIES} and intervention one of "
                         f"{INTERVENTIONS}, got {info}")


@dataclass(frozen=True)
class Finding:
    """What one detector found in one task."""

    n: int  # documents considered
    doc_ids: tuple[int, ...]  # documents showing the signature
    fires: bool
    detail: str = ""

    @property
    def count(self) -> int:
        return len(self.doc_ids)

    @property
    def rate(self) -> float:
        return self.count / self.n if self.n else 0.0

    def interval(self) -> tuple[float, float]:
        """Wilson 95% interval of :attr:`rate`."""
        low, high = wilson(self.rate, self.n)
        return max(0.0, round(float(low), 12)), min(1.0, round(float(high), 12))


SIGNATURES: Registry[Callable[[TaskView], Finding | None]] = Registry(
    "failure signature", group="neurips26.signatures", check=_check)


def _per_document(view: TaskView, docs: list[DocView], hit: Callable[[DocView], bool], detail: str = "") -> Finding:
    ids = tuple(d.doc_id for d in docs if hit(d))
    return Finding(len(docs), ids, bool(ids), detail)


def _generated(view: TaskView) -> list[DocView] | None:
    return [d for d in view.docs if d.text is not None] if view.output_type == "generate_until" else None


# -- output form ---------------------------------------------------------------------------------------------------


@SIGNATURES.register("empty", family="output form", intervention="prompt/format")
def empty(view: TaskView) -> Finding | None:
    """The generation is empty or whitespace only."""
    docs = _generated(view)
    return None if docs is None else _per_document(view, docs, lambda d: not (d.text or "").strip())


@SIGNATURES.register("truncated", family="output form", intervention="decoding")
def truncated(view: TaskView) -> Finding | None:
    """The generation used all ``max_gen_toks`` tokens (lm-eval cuts at stop sequences, so a response that long
    never reached one). Counted with the run's tokenizer when it is available, else at 4 characters a token."""
    docs = _generated(view)
    if docs is None or not view.max_gen_toks:
        return None
    count = view.count_tokens or (lambda text: len(text) // 4)
    how = "" if view.count_tokens else "tokens estimated at 4 characters each"
    return _per_document(view, docs, lambda d: count(d.text or "") >= view.max_gen_toks, how)


REFUSAL = re.compile(r"\b(i\s*(?:can ?not|can't|cannot|won't|am unable to|'m unable to|am not able to)\s+"
                     r"(?:help|assist|answer|provide|comply|do that)|as an ai\b|i'm sorry,? but|i apologi[sz]e,? but"
                     r"|i (?:must|have to) decline)", re.I)


@SIGNATURES.register("refusal", family="output form", intervention="prompt/format")
def refusal(view: TaskView) -> Finding | None:
    """The generation declines to answer ("I can't help with that", "As an AI ...")."""
    docs = _generated(view)
    return None if docs is None else _per_document(view, docs, lambda d: bool(REFUSAL.search(d.text or "")))


def label_set(view: TaskView) -> set[str] | None:
    """The normalised gold answers of a generation task when they form a small label set (else None)."""
    golds = {normalise(d.target) for d in view.docs if d.target is not None}
    if not golds or len(golds) > MAX_LABELS or len(golds) >= max(2, len(view.docs) // 2 + 1) or "" in golds:
        return None
    return golds


def predicted_label(text: str | None, labels: set[str]) -> str | None:
    """The label a generation names: the one its normalised text starts with, else the only one it contains."""
    said = normalise(text)
    starts = [label for label in labels if said == label or said.startswith(label + " ")]
    if starts:
        return max(starts, key=len)
    inside = [label for label in labels if re.search(rf"\b{re.escape(label)}\b", said)]
    return inside[0] if len(inside) == 1 else None


@SIGNATURES.register("unextractable", family="output form", intervention="prompt/format")
def unextractable(view: TaskView) -> Finding | None:
    """The task's gold answers form a small label set and the generation names none of them (or several)."""
    docs, labels = _generated(view), label_set(view)
    if docs is None or labels is None:
        return None
    return _per_document(view, docs, lambda d: bool((d.text or "").strip())
                         and predicted_label(d.text, labels) is None, f"labels: {', '.join(sorted(labels))}")


_STOPWORDS = {
    "en": "the of and to in is that for it with as was on be by this are or not from at which an have",
    "de": "der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als auch es an",
    "fr": "le la de et les des en un une du est que pour qui dans pas au sur par plus ne se ce",
    "es": "el la de que y en los del se las por un para con no una su al lo como más pero",
}
STOPWORDS = {code: frozenset(words.split()) for code, words in _STOPWORDS.items()}
SCRIPTS = {"zh": r"[\u4e00-\u9fff]", "ru": r"[\u0400-\u04ff]", "ar": r"[\u0600-\u06ff]", "ja": r"[\u3040-\u30ff]"}


def language(text: str | None) -> str | None:
    """A rough language guess: by script (zh, ja, ru, ar), else by stopwords (en, de, fr, es); None when unsure."""
    text = text or ""
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 8:
        return None
    for code, pattern in SCRIPTS.items():
        if len(re.findall(pattern, text)) > 0.3 * len(letters):
            return code
    words = re.findall(r"[^\W\d_]+", text.lower())
    hits = {code: sum(w in stop for w in words) for code, stop in STOPWORDS.items()}
    best = max(hits, key=lambda c: hits[c])
    return best if hits[best] >= 2 and list(hits.values()).count(hits[best]) == 1 else None


@SIGNATURES.register("wrong_language", family="output form", intervention="prompt/format")
def wrong_language(view: TaskView) -> Finding | None:
    """The generation is in another language than its gold answer (both recognised by :func:`language`)."""
    docs = _generated(view)
    if docs is None:
        return None
    pairs = [(d, language(d.target), language(d.text)) for d in docs]
    judged = [d for d, want, got in pairs if want is not None and got is not None]
    return _per_document(view, judged, lambda d: language(d.text) != language(d.target)) if judged else None


# -- decision biases -----------------------------------------------------------------------------------------------


def _share_bias(keys: list[tuple[int, object, object]], what: str) -> Finding | None:
    """(doc_id, chosen, gold) per document -> the most over-chosen key, firing when its chosen share's Wilson
    lower bound exceeds its gold share by :data:`MARGIN`; the documents are those where it was chosen wrongly."""
    keys = [(i, c, g) for i, c, g in keys if c is not None and g is not None]
    if len({g for _, _, g in keys} | {c for _, c, _ in keys}) < 2:
        return None
    n = len(keys)
    chosen, gold = Counter(c for _, c, _ in keys), Counter(g for _, _, g in keys)
    top = max(chosen, key=lambda k: chosen[k] - gold.get(k, 0))
    low, _ = wilson(chosen[top] / n, n)
    fires = float(low) - gold.get(top, 0) / n >= MARGIN
    ids = tuple(i for i, c, g in keys if c == top and g != top)
    return Finding(n, ids, fires, f"{what} {top!r} chosen {chosen[top] / n:.0%} of the time, gold "
                   f"{gold.get(top, 0) / n:.0%}")


@SIGNATURES.register("position_bias", family="decision bias", intervention="prompt/format")
def position_bias(view: TaskView) -> Finding | None:
    """One option position (A, B, ...) is chosen far above its share of gold answers (multiple choice)."""
    if view.output_type != "multiple_choice":
        return None
    return _share_bias([(d.doc_id, d.chosen, d.gold) for d in view.docs], "position")


@SIGNATURES.register("label_bias", family="decision bias", intervention="data")
def label_bias(view: TaskView) -> Finding | None:
    """One answer label (e.g. "yes") is predicted far above its share of gold answers: the option text of a
    multiple-choice task, the label named by a generation when the gold answers form a label set."""
    if view.output_type == "multiple_choice":
        if all(d.choices and all(LETTER.fullmatch(c.strip()) for c in d.choices) for d in view.docs):
            return None  # lettered options: the label is the position (position_bias says it)
        keys = [(d.doc_id, normalise(d.choices[d.chosen]), normalise(d.target)) for d in view.docs
                if d.chosen is not None and d.choices and d.target is not None]
    else:
        labels = label_set(view)
        if labels is None:
            return None
        keys = [(d.doc_id, predicted_label(d.text, labels) or "(none)", normalise(d.target)) for d in view.docs
                if d.text is not None]
    return _share_bias(keys, "label")


@SIGNATURES.register("length_bias", family="decision bias", intervention="decoding")
def length_bias(view: TaskView) -> Finding | None:
    """acc and acc_norm disagree systematically: on a significant share of documents the raw loglikelihood picks
    another option than the per-character one, and in at least 3 of 4 such documents the raw pick is the shorter
    (or, in as many, the longer) option."""
    if view.output_type != "multiple_choice":
        return None
    docs = [d for d in view.docs if d.chosen is not None and d.chosen_norm is not None and d.choices]
    if len(docs) < 2:
        return None
    split = [d for d in docs if d.chosen != d.chosen_norm]
    shorter = sum(len(d.choices[d.chosen]) < len(d.choices[d.chosen_norm]) for d in split)
    longer = len(split) - shorter
    low, _ = wilson(len(split) / len(docs), len(docs))
    side = "shorter" if shorter >= longer else "longer"
    fires = float(low) >= 0.05 and len(split) >= 2 and max(shorter, longer) >= 0.75 * len(split)
    return Finding(len(docs), tuple(d.doc_id for d in split), fires,
                   f"raw and per-character choices differ on {len(split)} of {len(docs)}; the raw pick is the "
                   f"{side} option in {max(shorter, longer)} of them")


def example_answers(view: TaskView, doc: DocView) -> set[str]:
    """The answers of the in-context examples in a few-shot prompt: what follows the answer cue (the prompt's
    last line, e.g. ``Answer:``) in each earlier example, up to the few-shot delimiter."""
    prompt = doc.prompt
    cue = prompt.rstrip().rsplit("\n", 1)[-1].strip()
    if not cue or view.num_fewshot < 1:
        return set()
    answers, start = set(), 0
    while (at := prompt.find(cue, start)) != -1 and at + len(cue) < len(prompt.rstrip()):
        rest = prompt[at + len(cue):]
        answers.add(normalise(rest.split(view.fewshot_delimiter, 1)[0]))
        start = at + len(cue)
    return answers - {""}


@SIGNATURES.register("fewshot_copy", family="decision bias", intervention="prompt/format")
def fewshot_copy(view: TaskView) -> Finding | None:
    """A few-shot generation repeats an in-context example's answer, which is not the gold answer."""
    docs = _generated(view)
    if docs is None or view.num_fewshot < 1:
        return None
    return _per_document(view, docs, lambda d: normalise(d.text) != normalise(d.target)
                         and normalise(d.text) in example_answers(view, d))
