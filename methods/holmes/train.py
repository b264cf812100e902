"""Training the ``learned`` perception backend (:mod:`.learned`) on a generated CLoVR release.

    model = train(raw)            # raw: a generated release (videos/*.mp4, scenes/*.json)
    model = default_model()       # trained once on the default training release, then loaded from the cache

The training release is never an evaluated one: :data:`TRAIN_SEED` is a generator seed no claim, test or
default release uses (those use 0-2, 100-102). The last video of each set is held out for the reported accuracy
and the measured recall.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from neurips26.corpora.video.scene import Entity as SceneEntity

from neurips26.errors import UserError

from .learned import CODES, NONE, VERSION, Learned, background, describe, fit_head, foreground_blobs, label

TRAIN_SEED = 900  # the default training release's generator seed
TRAIN_RELEASE = {"n_sets": 4, "videos_per_set": 3, "duration": 24.0}  # its size
CODE_SAMPLE = 20000  # foreground pixels the colour codebook is fit on


def _scene(raw: Path, video_id: str) -> list[SceneEntity]:
    path = raw / "scenes" / f"{video_id}.json"
    if not path.is_file():
        raise UserError(f"{path}: no scene record (learned perception trains on a generated release's videos/ "
                        "and scenes/)")
    return [SceneEntity(**e) for e in json.loads(path.read_text())["entities"]]


def frames(raw: Path, candidate_fps: float = 2.0, thumb: int = 128,
           cache: Path | None = None) -> list[dict[str, Any]]:
    """Per training video: its id, sha256, thumbnails, times, background and scene entities."""
    from neurips26.methods.frameselect.pool import build_pool, video_digest  # lazy: video decoding

    paths = sorted((Path(raw) / "videos").glob("*.mp4"))
    if not paths:
        raise UserError(f"{raw}/videos: no .mp4 videos to train learned perception on")
    out = []
    for path in paths:
        pool = build_pool([path], encoder=None, candidate_fps=candidate_fps, thumb=thumb, cache=cache)
        out.append({"id": path.stem, "sha256": video_digest(path), "pixels": pool.pixels, "times": pool.times,
                    "background": background(pool.pixels), "scene": _scene(Path(raw), path.stem)})
    return out


def held_out(ids: list[str]) -> list[bool]:
    """Which videos are held out: the last of each set (``<set>_v<k>``, sets of 2 or 3 videos), the third of larger
    sets too; without set names, every third video."""
    sets: dict[str, list[int]] = {}
    for k, vid in enumerate(ids):
        sets.setdefault(vid.rsplit("_v", 1)[0] if "_v" in vid else str(k // 3), []).append(k)
    out = [False] * len(ids)
    for members in sets.values():
        for j, k in enumerate(members):
            out[k] = len(members) > 1 and (j == len(members) - 1 or j % 3 == 2)
    return out


def _blobs(videos: list[dict[str, Any]]) -> list[tuple[np.ndarray, list]]:
    return [[foreground_blobs(img, v["background"]) for img in v["pixels"]] for v in videos]


def _codebook(videos: list[dict[str, Any]], blobs: list, seed: int) -> np.ndarray:
    from sklearn.cluster import KMeans  # lazy: only when training

    pixels = np.concatenate([img[ys, xs] for v, per in zip(videos, blobs, strict=True)
                             for img, found in zip(v["pixels"], per, strict=True) for ys, xs in found])
    rng = np.random.default_rng(seed)
    sample = pixels[rng.choice(len(pixels), min(CODE_SAMPLE, len(pixels)), replace=False)].astype(np.float64)
    k = min(CODES, len(np.unique(sample, axis=0)))
    return KMeans(n_clusters=k, n_init=2, random_state=seed).fit(sample).cluster_centers_


def _examples(videos: list[dict[str, Any]], blobs: list, codebook: np.ndarray) -> tuple[np.ndarray, list[tuple]]:
    xs, ys = [], []
    for v, per in zip(videos, blobs, strict=True):
        width = v["pixels"].shape[2]
        for img, t, found in zip(v["pixels"], v["times"], per, strict=True):
            for rows, cols in found:
                b = describe(img, rows, cols, codebook)
                xs.append(b.features)
                ys.append(label(b, float(t), v["scene"], width))
    return (np.stack(xs) if xs else np.zeros((0, len(codebook) + 9), np.float32)), ys


def measure(model: Learned, videos: list[dict[str, Any]]) -> dict[str, float]:
    """Held-out figures: colour and type accuracy of blobs on a road user (and the majority-class rates), and
    recall (road users at least half in view reported under their colour and road-or-sidewalk)."""
    hits = seen = 0
    xs, truth = [], []
    for v in videos:
        width = v["pixels"].shape[2]
        for img, t in zip(v["pixels"], v["times"], strict=True):
            blobs = [describe(img, rows, cols, model.codebook) for rows, cols in foreground_blobs(img, v["background"])]
            for b in blobs:
                y = label(b, float(t), v["scene"], width)
                if y[0] != NONE:
                    xs.append(b.features)
                    truth.append(y)
            got = {(c, k == "pedestrian") for _, c, k, _ in model.classify(blobs)}
            for e in v["scene"]:
                box = e.box(float(t))
                if box is not None and 0 <= (box[0] + box[2]) / 2 <= 1:
                    seen += 1
                    hits += (e.colour, e.kind == "pedestrian") in got
    out: dict[str, float] = {"recall": hits / seen if seen else 0.0, "blobs": float(len(truth))}
    if truth:
        x = np.stack(xs)
        for k, name in enumerate(("colour", "kind")):
            gold = np.array([y[k] for y in truth])
            out[f"{name}_acc"] = float(np.mean(model.heads[name].predict(x)[0] == gold))
            out[f"{name}_majority"] = float(np.mean(gold == max(set(gold.tolist()), key=gold.tolist().count)))
    return out


def train(raw: Path, seed: int = 0, candidate_fps: float = 2.0, thumb: int = 128, cache: Path | None = None,
          source: str | None = None) -> Learned:
    """Fit the codebook and the three heads on the training videos of ``raw``; measure on its held-out videos."""
    videos = frames(Path(raw), candidate_fps, thumb, cache)
    out = held_out([v["id"] for v in videos])
    fit = [v for v, o in zip(videos, out, strict=True) if not o]
    test = [v for v, o in zip(videos, out, strict=True) if o]
    if not fit or not test:
        raise UserError(f"{raw}: learned perception needs at least 2 videos (one trains, one is held out)")
    blobs = _blobs(fit)
    codebook = _codebook(fit, blobs, seed)
    x, y = _examples(fit, blobs, codebook)
    if len({c for c, _, _ in y} - {NONE}) < 2:
        raise UserError(f"{raw}: the training videos show fewer than two road-user colours")
    on_user = np.array([c != NONE for c, _, _ in y])
    vehicle = np.array([k not in (NONE, "pedestrian") for _, k, _ in y])
    heads = {"colour": fit_head("colour", x, [c for c, _, _ in y], seed),
             "kind": fit_head("kind", x[on_user], [k for (_, k, _), u in zip(y, on_user, strict=True) if u], seed),
             "hazard": fit_head("hazard", x[vehicle], [h for (_, _, h), u in zip(y, vehicle, strict=True) if u],
                                seed)}
    model = Learned(codebook, heads, recall=1.0, videos={v["sha256"] for v in videos})
    figures = measure(model, test)
    model.recall = float(min(0.99, max(0.05, figures["recall"])))
    model.card = {"release": source or str(raw), "train_videos": len(fit), "held_out_videos": len(test),
                  "train_frames": int(sum(len(v["pixels"]) for v in fit)), "train_blobs": int(len(y)),
                  "seed": seed, "candidate_fps": candidate_fps, "thumb": thumb,
                  "held_out": {k: round(v, 4) for k, v in figures.items()}}
    return model


def default_model(seed: int = TRAIN_SEED, root: Path | None = None,
                  progress: Callable[[str], None] | None = None) -> Learned:
    """The model trained on the default training release (generator seed ``seed``), cached after the first run."""
    from neurips26.corpora.clovr.build import GENERATOR_VERSION  # lazy: the generator, only to train
    from neurips26.corpora.clovr.generate import generate  # lazy: the generator, only to train
    from neurips26.corpora.video import ingest  # lazy: the generator, only to train

    from neurips26 import settings  # lazy: with the generator

    folder = (root or settings.cache_dir()) / "holmes" / f"learned-perception-v{VERSION}-clovr-v{GENERATOR_VERSION}" \
        f"-seed{seed}"
    if (folder / "card.json").is_file():
        return Learned.load(folder)
    if progress:
        progress(f"training learned perception on a generated CLoVR release (seed {seed}); cached in {folder}")
    raw = ingest.generated_release(f"clovr-v{GENERATOR_VERSION}-holmes-train", functools.partial(
        generate, **TRAIN_RELEASE), seed, root / "generated" if root else None)
    model = train(raw, source=f"generated CLoVR release, generator seed {seed}")
    model.save(folder)
    return model
