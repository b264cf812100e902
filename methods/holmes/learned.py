"""Learned perception: the road users in a frame, from classifiers trained on labelled frames of other videos.

The ``descriptor`` backend reads a frame with hand-set rules (the renderer's palette, which palette entries are
not road users, a vehicle type per blob length, the road and sidewalk bands). ``learned`` keeps only its generic
first step, *foreground blobs* (pixels that differ from the video's background, the per-pixel median of its
candidate thumbnails, as the camera is static; closed by one pixel and grouped into 8-connected blobs), and
learns the rest from a *training release*: generated CLoVR videos under a generator seed that no evaluated
release uses, labelled by their scene records.

- *Colour vocabulary*: k-means (:data:`CODES` centres) over the foreground pixels of the training frames;
- *blob features*: the histogram of the blob's pixels over those centres, its mean colour and its geometry
  (width, height, centre, area, whether it touches the frame's edge);
- *labels*: the road user whose box holds the blob's centre (the nearest centre when several do), or ``none``;
- *classifiers*: three small MLPs (scikit-learn, standardised features) for the colour (palette colours and
  ``none``, from every feature), the type (vehicle types and ``pedestrian``, from the geometry alone: a type is a
  shape, whatever its paint) and hazard lights (the road user's hazard interval covers the frame; every feature,
  vehicle blobs only).

A blob the colour model calls ``none`` is dropped, and of two blobs given one colour in a frame the larger is
kept; a type below :data:`KIND_MIN` probability is reported as unknown (binding verification then asks for two
sightings). The last video of each set of the training release is held out: the held-out colour and type accuracy
and ``recall`` (the share of road users in view reported under their colour, which the coverage certificates use)
are measured there.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from neurips26.corpora.video.scene import Entity as SceneEntity
from neurips26.methods.frameselect.core import Pool
from scipy import ndimage

from neurips26.errors import UserError

from .graph import Detection
from .slots import Entity

FOREGROUND = 40.0  # max channel difference to the background for a foreground pixel
MIN_PIXELS = 3  # smaller blobs are noise
CODES = 24  # k-means colour centres
KIND_MIN = 0.5  # type probability below which the type is reported as unknown
NONE = "none"
HEADS = ("colour", "kind", "hazard")
GEOMETRY = 6  # the last features: width, height, centre x, centre y, area, touches the edge
INPUTS = {"colour": slice(None), "kind": slice(-GEOMETRY, None), "hazard": slice(None)}  # what each head reads
VERSION = 1  # bump when features or training change, so cached models are retrained


@dataclass
class Blob:
    """One foreground blob of a frame: its features and centre (frame fractions)."""

    features: np.ndarray
    x: float
    y: float
    size: int


def background(pixels: np.ndarray) -> np.ndarray:
    """The per-pixel median of one video's candidate thumbnails."""
    return np.median(pixels, axis=0)


def foreground_blobs(img: np.ndarray, bg: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(rows, columns) of each foreground blob of ``img`` with at least :data:`MIN_PIXELS` pixels."""
    moving = np.abs(img.astype(np.float64) - bg).max(axis=2) > FOREGROUND
    closed = ndimage.binary_closing(moving, structure=np.ones((3, 3), bool)) | moving
    labels, n = ndimage.label(closed, structure=np.ones((3, 3), bool))
    out = []
    for k, where in enumerate(ndimage.find_objects(labels), start=1):
        if where is None:
            continue
        ys, xs = np.nonzero((labels[where] == k) & moving[where])
        if len(ys) >= MIN_PIXELS:
            out.append((ys + where[0].start, xs + where[1].start))
    return out


def describe(img: np.ndarray, ys: np.ndarray, xs: np.ndarray, codebook: np.ndarray) -> Blob:
    """A blob's features: histogram over the colour codebook, mean colour, geometry."""
    h, w = img.shape[:2]
    rgb = img[ys, xs].astype(np.float64)
    nearest = np.argmin(((rgb[:, None, :] - codebook[None]) ** 2).sum(-1), axis=1)
    hist = np.bincount(nearest, minlength=len(codebook)) / len(ys)
    x, y = float((xs.mean() + 0.5) / w), float((ys.mean() + 0.5) / h)
    geometry = [(xs.max() - xs.min() + 1) / w, (ys.max() - ys.min() + 1) / h, x, y, 100 * len(ys) / (h * w),
                float(xs.min() <= 0 or xs.max() >= w - 1)]
    return Blob(np.concatenate([hist, rgb.mean(0) / 255.0, geometry]).astype(np.float32), x, y, len(ys))


def label(blob: Blob, t: float, scene: list[SceneEntity], width: int) -> tuple[str, str, bool]:
    """(colour, kind, hazard) of the road user whose box holds the blob's centre, or ``none``."""
    margin = 1.0 / width
    best, best_d = None, np.inf
    for e in scene:
        box = e.box(t)
        if box is None or not (box[0] - margin <= blob.x <= box[2] + margin and
                               box[1] - margin <= blob.y <= box[3] + margin):
            continue
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        d = (cx - blob.x) ** 2 + (cy - blob.y) ** 2
        if d < best_d:
            best, best_d = e, d
    if best is None:
        return NONE, NONE, False
    return best.colour, best.kind, any(a <= t < b for a, b in best.hazard)


@dataclass
class Head:
    """A trained MLP as arrays: standardisation, layers, classes (a constant when training saw one class)."""

    mean: np.ndarray
    scale: np.ndarray
    weights: list[np.ndarray]
    biases: list[np.ndarray]
    classes: np.ndarray
    inputs: slice = field(default_factory=lambda: slice(None))  # the features it reads

    def proba(self, x: np.ndarray) -> np.ndarray:
        """Class probabilities, shape [n, len(classes)]."""
        if len(self.classes) == 1:
            return np.ones((len(x), 1))
        a = (x[:, self.inputs] - self.mean) / self.scale
        for k, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            a = a @ w + b
            if k < len(self.weights) - 1:
                a = np.maximum(a, 0.0)
        if a.shape[1] == 1:  # binary: one logistic unit for the second class
            p = 1.0 / (1.0 + np.exp(-np.clip(a[:, 0], -50.0, 50.0)))
            return np.stack([1 - p, p], axis=1)
        a = np.exp(a - a.max(axis=1, keepdims=True))
        return a / a.sum(axis=1, keepdims=True)

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(class, its probability) per row."""
        p = self.proba(x)
        return self.classes[p.argmax(1)], p.max(1)


def fit_head(name: str, x: np.ndarray, y: list, seed: int) -> Head:
    """Head ``name``: a standardised MLP (one hidden layer of 64) fit on its inputs of ``x`` -> ``y``."""
    from sklearn.exceptions import ConvergenceWarning  # lazy: only when training
    from sklearn.neural_network import MLPClassifier

    classes = np.array(sorted(set(y)))
    x = x[:, INPUTS[name]]
    mean, scale = x.mean(0), x.std(0) + 1e-6
    if len(classes) == 1:
        return Head(mean, scale, [], [], classes, INPUTS[name])
    net = MLPClassifier(hidden_layer_sizes=(64,), alpha=1e-3, max_iter=400, random_state=seed)
    with warnings.catch_warnings():  # 400 epochs is the budget, converged or not
        warnings.simplefilter("ignore", ConvergenceWarning)
        net.fit((x - mean) / scale, np.array(y))
    return Head(mean, scale, [np.asarray(w) for w in net.coefs_], [np.asarray(b) for b in net.intercepts_],
                np.asarray(net.classes_), INPUTS[name])


@dataclass
class Learned:
    """The trained perception backend (see the module docstring)."""

    codebook: np.ndarray
    heads: dict[str, Head]
    recall: float
    card: dict[str, Any] = field(default_factory=dict)  # training release, sizes, held-out accuracy
    videos: set[str] = field(default_factory=set)  # sha256 of every training video
    name: str = "learned"
    _background: dict[tuple, np.ndarray] = field(default_factory=dict)

    def background(self, pool: Pool, v: int) -> np.ndarray:
        rows = np.flatnonzero(pool.video_index == v)
        sample = pool.pixels[rows[:: max(1, len(rows) // 4)]]
        key = (pool.video_ids[v], len(rows), hashlib.sha1(np.ascontiguousarray(sample).tobytes()).hexdigest())
        if key not in self._background:
            self._background[key] = background(pool.pixels[rows])
        return self._background[key]

    def detect(self, img: np.ndarray, bg: np.ndarray) -> list[tuple[Blob, str, str | None, bool]]:
        """(blob, colour, kind or None, hazard) of every blob of ``img`` the colour model does not call ``none``."""
        return self.classify([describe(img, ys, xs, self.codebook) for ys, xs in foreground_blobs(img, bg)])

    def classify(self, blobs: list[Blob]) -> list[tuple[Blob, str, str | None, bool]]:
        """(blob, colour, kind or None, hazard) of each of ``blobs`` the colour model does not call ``none`` (the
        largest per colour and road-or-sidewalk)."""
        if not blobs:
            return []
        x = np.stack([b.features for b in blobs])
        colours, _ = self.heads["colour"].predict(x)
        kinds, sure = self.heads["kind"].predict(x)
        hazard = self.heads["hazard"].proba(x)[:, -1] >= 0.5 if self.heads["hazard"].classes[-1] else \
            np.zeros(len(x), bool)
        best: dict[tuple[str, bool], tuple[Blob, str, str | None, bool]] = {}
        for b, c, k, s, hz in zip(blobs, colours, kinds, sure, hazard, strict=True):
            if c == NONE:
                continue
            walker = k == "pedestrian"
            kind = str(k) if s >= KIND_MIN else None
            if (c, walker) not in best or b.size > best[(c, walker)][0].size:
                best[(str(c), walker)] = (b, str(c), kind, bool(hz) and not walker)
        return list(best.values())

    def observe(self, pool: Pool, i: int, entities: list[Entity]) -> list[Detection]:
        v, t = int(pool.video_index[i]), float(pool.times[i])
        return [Detection(v, t, colour, kind, b.x, b.y, hazard)
                for b, colour, kind, hazard in self.detect(pool.pixels[i], self.background(pool, v))]

    def save(self, folder: Path) -> Path:
        """``folder/perception.npz`` (arrays only, no pickle) and ``folder/card.json``."""
        folder.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {"codebook": self.codebook}
        for name, head in self.heads.items():
            arrays |= {f"{name}.mean": head.mean, f"{name}.scale": head.scale, f"{name}.classes": head.classes}
            arrays |= {f"{name}.w{k}": w for k, w in enumerate(head.weights)}
            arrays |= {f"{name}.b{k}": b for k, b in enumerate(head.biases)}
        np.savez(folder / "perception.npz", **arrays)
        card = {**self.card, "recall": self.recall, "videos": sorted(self.videos), "version": VERSION}
        (folder / "card.json").write_text(json.dumps(card, indent=1) + "\n")
        return folder

    @classmethod
    def load(cls, folder: Path) -> Learned:
        """A model :meth:`save` wrote."""
        try:
            card = json.loads((folder / "card.json").read_text())
            data = np.load(folder / "perception.npz", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise UserError(f"{folder}: not a learned HOLMES perception model ({exc})") from None
        if card.pop("version", None) != VERSION:
            raise UserError(f"{folder}: a learned perception model of another version (this code reads version "
                            f"{VERSION}); train it again")
        heads = {}
        for name in HEADS:
            n = sum(1 for k in data.files if k.startswith(f"{name}.w"))
            heads[name] = Head(data[f"{name}.mean"], data[f"{name}.scale"], [data[f"{name}.w{k}"] for k in range(n)],
                               [data[f"{name}.b{k}"] for k in range(n)], data[f"{name}.classes"], INPUTS[name])
        videos = set(card.pop("videos", []))
        return cls(data["codebook"], heads, float(card.pop("recall")), card, videos)
