"""Perception backends: what HOLMES sees in one candidate frame of a FrameSelect pool.

A backend has ``observe(pool, i, entities) -> list[Detection]`` and a per-frame ``recall`` (the
chance it reports a road user that is in view), which the coverage certificates use.

- ``oracle``: the generator's ground-truth scene records (``scenes/<video_id>.json`` of a
  generated CLoVR release): every road user in view, with its kind, colour, position and hazard
  lights. The upper bound of what perception can give; recall 1.
- ``descriptor``: colour blobs on the pool's thumbnails, with the descriptor encoder's colour
  lexicon (the renderer's palette): pixels that differ from the video's background (the per-pixel
  median of its candidates: the camera is static) are given the nearest palette colour; on the
  road they are vehicles (type from the blob's length), on the sidewalks pedestrians; amber
  pixels are hazard lights. Renderer parts that are not road users (windshields, outlines, brake
  lights) are palette entries of their own and ignored. No training.
- ``learned``: foreground blobs (the descriptor's first step) whose colour, type and hazard lights small
  MLPs predict, trained on the labelled frames of a generated release no evaluated one shares a video with
  (:mod:`.learned`, :mod:`.train`); its recall is measured on held-out training videos.
- ``vlm``: any FrameSelect answering backend (``tiny-idefics3`` in tests, ``hf:<VLM>`` on a
  GPU) asked, per named entity and frame, "Is there <entity> in this image?"; a yes is a
  detection without position (so it fills presence and time slots, not direction or speed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from neurips26.corpora.video.scene import COLOURS, SIZES, VEHICLES
from neurips26.corpora.video.scene import Entity as SceneEntity
from neurips26.methods.frameselect.core import Pool
from PIL import Image
from scipy import ndimage

from neurips26.errors import UserError

from .core import PERCEPTION
from .graph import Detection
from .learned import Learned
from .slots import Entity

ROAD_ROWS, SIDEWALK_ROWS = (0.40, 0.72), ((0.30, 0.38), (0.745, 0.82))
IGNORED = {"glass": (40, 50, 70), "outline": (22, 22, 22), "brake": (255, 30, 30), "zebra": (225, 225, 225),
           "line": (230, 200, 60), "road": (80, 80, 85), "sidewalk": (175, 170, 160),
           "edge_on_road": (51, 51, 54), "edge_on_sidewalk": (98, 96, 91), "glass_on_road": (60, 65, 78)}
AMBER = (255, 170, 0)
PALETTE = {**COLOURS, **IGNORED, "hazard": AMBER}


@dataclass
class Oracle:
    """Ground truth from the generator's scene records."""

    scenes: Path
    recall: float = 1.0
    name: str = "oracle"
    _cache: dict[str, list[SceneEntity]] = field(default_factory=dict)

    def entities_of(self, video_id: str) -> list[SceneEntity]:
        if video_id not in self._cache:
            path = self.scenes / f"{video_id}.json"
            if not path.is_file():
                raise UserError(f"{path}: no scene record for video {video_id!r} (the oracle needs a generated "
                                "release's scenes/ folder)")
            data = json.loads(path.read_text())
            self._cache[video_id] = [SceneEntity(**e) for e in data["entities"]]
        return self._cache[video_id]

    def observe(self, pool: Pool, i: int, entities: list[Entity]) -> list[Detection]:
        v, t = int(pool.video_index[i]), float(pool.times[i])
        out = []
        for e in self.entities_of(pool.video_ids[v]):
            if e.visible(t):
                x, y = e.position(t)
                out.append(Detection(v, t, e.colour, e.kind, x, y, any(a <= t < b for a, b in e.hazard)))
        return out


@dataclass
class Descriptor:
    """Colour blobs on the thumbnails against each video's median background."""

    recall: float = 0.9
    name: str = "descriptor"
    foreground: float = 40.0  # max channel difference to the background
    distance: float = 70.0  # RGB distance to the nearest palette colour
    _background: dict[tuple, np.ndarray] = field(default_factory=dict)

    def background(self, pool: Pool, v: int) -> np.ndarray:
        """The per-pixel median of the video's candidate thumbnails (the camera is static)."""
        rows = pool.video_index == v
        key = (pool.video_ids[v], int(rows.sum()), pool.pixels.shape[1:])
        if key not in self._background:
            self._background[key] = np.median(pool.pixels[rows], axis=0)
        return self._background[key]

    def observe(self, pool: Pool, i: int, entities: list[Entity]) -> list[Detection]:
        v, t = int(pool.video_index[i]), float(pool.times[i])
        img = pool.pixels[i].astype(np.float64)
        h, w = img.shape[:2]
        moving = np.abs(img - self.background(pool, v)).max(axis=2) > self.foreground
        names = list(PALETTE)
        rgb = np.array([PALETTE[n] for n in names], np.float64)
        dist = np.linalg.norm(img[..., None, :] - rgb, axis=-1)
        nearest = np.argmin(dist, axis=-1)
        body = np.isin(nearest, [names.index(c) for c in COLOURS]) & (dist.min(axis=-1) < self.distance)
        hazard = moving & (nearest == names.index("hazard"))
        rows = np.arange(h)[:, None] / h * np.ones((1, w))
        out = []
        for region, bands in (("road", (ROAD_ROWS,)), ("sidewalk", SIDEWALK_ROWS)):
            inside = np.zeros((h, w), bool)
            for lo, hi in bands:
                inside |= (rows >= lo) & (rows <= hi)
            blobs, n = ndimage.label(moving & inside)
            for k in range(1, n + 1):
                ys, xs = np.nonzero(blobs == k)
                coloured = body[ys, xs]
                if coloured.sum() < (12 if region == "road" else 1):  # a motorcycle covers ~35 thumbnail pixels
                    continue
                votes = np.bincount(nearest[ys, xs][coloured], minlength=len(names))
                colour = names[int(np.argmax(votes))]
                kind = "pedestrian" if region == "sidewalk" else _vehicle_kind(xs, w)
                near = hazard[max(0, ys.min() - 2): ys.max() + 3, max(0, xs.min() - 2): xs.max() + 3]
                out.append(Detection(v, t, colour, kind, float((xs.mean() + 0.5) / w), float((ys.mean() + 0.5) / h),
                                     bool(region == "road" and near.any())))
        return out


def _vehicle_kind(xs: np.ndarray, width: int) -> str | None:
    """The vehicle type whose length is nearest the blob's, or None for a blob cut by the frame's edge."""
    if xs.min() <= 0 or xs.max() >= width - 1:
        return None
    length = (xs.max() - xs.min() + 1) / width
    return min(VEHICLES, key=lambda k: abs(SIZES[k][0] - length))


@dataclass
class VLM:
    """A FrameSelect answering backend asked a yes/no question per named entity and frame."""

    answerer: Any
    recall: float = 0.5
    name: str = "vlm"

    def observe(self, pool: Pool, i: int, entities: list[Entity]) -> list[Detection]:
        v, t = int(pool.video_index[i]), float(pool.times[i])
        image = Image.fromarray(np.asarray(pool.pixels[i], np.uint8))
        out = []
        for e in entities:
            reply = self.answerer.generate(f"<image>Is there {e.name} in this image? Answer yes or no.", [image])
            if reply.strip().lower().startswith("yes"):
                out.append(Detection(v, t, e.colour, e.kind))
        return out


@PERCEPTION.register("oracle")
def oracle(scenes: Path | str) -> Oracle:
    """Ground-truth scene records of a generated CLoVR release (``<raw>/scenes``): the upper bound."""
    scenes = Path(scenes)
    if not scenes.is_dir():
        raise UserError(f"{scenes}: no scenes folder (the oracle reads a generated release's scenes/<video_id>.json)")
    return Oracle(scenes)


@PERCEPTION.register("descriptor")
def descriptor(**_: Any) -> Descriptor:
    """Colour blobs on FrameSelect thumbnails against the video's median background (no model)."""
    return Descriptor()


@PERCEPTION.register("learned")
def learned(release: Path | str | None = None, **_: Any) -> Learned:
    """MLPs on foreground blobs trained on a generated release (``release``: its raw folder with videos/ and
    scenes/; default: one generated with generator seed 900, trained once and cached)."""
    from .train import default_model, train  # lazy: video decoding and scikit-learn

    if release is None:
        return default_model()
    return train(Path(release), source=str(release))


@PERCEPTION.register("vlm")
def vlm(model: str = "tiny-idefics3", **_: Any) -> VLM:
    """A FrameSelect answering backend (``tiny-idefics3[-seed<k>]``, ``hf:<VLM>``) answering yes/no per entity."""
    from neurips26.methods.frameselect.answerers import answerer  # lazy: imports transformers

    return VLM(answerer(model, max_new_tokens=2))
