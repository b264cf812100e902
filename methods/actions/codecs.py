"""Action codecs: how a chunk of actions (steps x dims) becomes what a policy predicts, and back.

* ``raw``: the chunk itself.
* ``binning``: each dimension cut into ``bins`` uniform bins over the range seen in training; decode to centres.
* ``dct``: the first ``K`` coefficients of the chunk's cosine series (DCT-II), normalised so that they describe
  the continuous curve over the chunk's duration: ``x(u) = a_0 + sum_k a_k cos(pi k u)`` for ``u`` in [0, 1]
  (sample ``n`` of ``N`` at ``u = (n + 0.5) / N``). The same motion sampled at 5, 10 or 20 Hz has (nearly) the
  same coefficients, and decoding evaluates the curve at any time: FAFM's representation.
* ``fast``: FAST-style tokens: orthonormal DCT of the chunk scaled to [-1, 1], multiplied by ``scale`` and
  rounded to integers (FAST's byte-pair merge of the token stream is left out: it is lossless and does not change
  the round-trip error).

Every codec has ``fit(chunks)``, ``encode(chunk)`` and ``decode(code, steps)``; :func:`round_trip_error` measures
the reconstruction error of any of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.fft

from neurips26.registry import Registry

CODECS: Registry[type] = Registry("action codec", group="neurips26.action_codecs")


def cosine_basis(u: np.ndarray, k: int) -> np.ndarray:
    """``cos(pi j u)`` for each time ``u`` (rows) and frequency ``j < k`` (columns)."""
    return np.cos(np.pi * np.outer(np.asarray(u, dtype=np.float64), np.arange(k)))


def sample_times(steps: int) -> np.ndarray:
    """Where the ``steps`` samples of a chunk sit on [0, 1] (the DCT-II grid)."""
    return (np.arange(steps) + 0.5) / steps


def dct_encode(chunk: np.ndarray, k: int | None = None) -> np.ndarray:
    """The first ``k`` cosine-series coefficients of ``chunk`` (steps x dims), as in the module docstring.

    Equal to ``scipy.fft.dct(chunk, type=2, axis=0) / steps`` with the first row halved.
    """
    chunk = np.asarray(chunk, dtype=np.float64)
    steps = len(chunk)
    k = steps if k is None else k
    coefficients = (2.0 / steps) * cosine_basis(sample_times(steps), min(k, steps)).T @ chunk
    coefficients[0] /= 2.0
    if k > steps:  # frequencies a chunk this short cannot hold are zero
        coefficients = np.concatenate([coefficients, np.zeros((k - steps, *chunk.shape[1:]))])
    return coefficients


def dct_decode(coefficients: np.ndarray, u: np.ndarray | int) -> np.ndarray:
    """The curve at times ``u`` (fractions of the chunk's duration), or at the ``u`` samples of the DCT-II grid
    when ``u`` is an integer."""
    times = sample_times(u) if isinstance(u, int | np.integer) else np.asarray(u, dtype=np.float64)
    return cosine_basis(times, len(coefficients)) @ np.asarray(coefficients, dtype=np.float64)


def dct_derivative(coefficients: np.ndarray, u: np.ndarray | int) -> np.ndarray:
    """d/du of the curve at times ``u`` (per unit of the chunk's duration)."""
    times = sample_times(u) if isinstance(u, int | np.integer) else np.asarray(u, dtype=np.float64)
    j = np.arange(len(coefficients))
    return (-np.pi * j * np.sin(np.pi * np.outer(times, j))) @ np.asarray(coefficients, dtype=np.float64)


@CODECS.register("raw")
@dataclass
class RawCodec:
    """The chunk as it is (the identity)."""

    def fit(self, chunks: Sequence[np.ndarray]) -> RawCodec:
        return self

    def encode(self, chunk: np.ndarray) -> np.ndarray:
        return np.asarray(chunk, dtype=np.float64)

    def decode(self, code: np.ndarray, steps: int) -> np.ndarray:
        return np.asarray(code, dtype=np.float64)[:steps]


@CODECS.register("binning")
@dataclass
class BinningCodec:
    """Uniform bins per dimension over the training range (RT-2 / OpenVLA style, 256 bins by default)."""

    bins: int = 256
    low: np.ndarray | None = None
    high: np.ndarray | None = None

    def fit(self, chunks: Sequence[np.ndarray]) -> BinningCodec:
        stacked = np.concatenate([np.asarray(c, dtype=np.float64) for c in chunks])
        self.low, self.high = stacked.min(axis=0), stacked.max(axis=0)
        return self

    def encode(self, chunk: np.ndarray) -> np.ndarray:
        width = np.maximum(self.high - self.low, 1e-12) / self.bins
        return np.clip(np.floor((np.asarray(chunk) - self.low) / width), 0, self.bins - 1).astype(np.int64)

    def decode(self, code: np.ndarray, steps: int) -> np.ndarray:
        width = np.maximum(self.high - self.low, 1e-12) / self.bins
        return (self.low + (np.asarray(code)[:steps] + 0.5) * width).astype(np.float64)


@CODECS.register("dct")
@dataclass
class DCTCodec:
    """The first ``k`` cosine-series coefficients (continuous reconstruction at any time; FAFM's codes)."""

    k: int = 8

    def fit(self, chunks: Sequence[np.ndarray]) -> DCTCodec:
        return self

    def encode(self, chunk: np.ndarray) -> np.ndarray:
        return dct_encode(chunk, self.k)

    def decode(self, code: np.ndarray, steps: int) -> np.ndarray:
        return dct_decode(code, steps)


@CODECS.register("fast")
@dataclass
class FASTCodec:
    """FAST-style integer tokens: orthonormal DCT of the chunk scaled to [-1, 1], times ``scale``, rounded."""

    scale: float = 10.0
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    _fitted: bool = field(default=False, repr=False)

    def fit(self, chunks: Sequence[np.ndarray]) -> FASTCodec:
        stacked = np.concatenate([np.asarray(c, dtype=np.float64) for c in chunks])
        self.low, self.high = stacked.min(axis=0), stacked.max(axis=0)
        self._fitted = True
        return self

    def _unit(self, chunk: np.ndarray) -> np.ndarray:
        return 2.0 * (np.asarray(chunk, dtype=np.float64) - self.low) / np.maximum(self.high - self.low, 1e-12) - 1

    def encode(self, chunk: np.ndarray) -> np.ndarray:
        return np.rint(self.scale * scipy.fft.dct(self._unit(chunk), type=2, axis=0, norm="ortho")).astype(np.int64)

    def decode(self, code: np.ndarray, steps: int) -> np.ndarray:
        unit = scipy.fft.idct(np.asarray(code, dtype=np.float64) / self.scale, type=2, axis=0, norm="ortho")
        return (unit[:steps] + 1.0) / 2.0 * (self.high - self.low) + self.low

    def tokens(self, chunk: np.ndarray) -> int:
        """Non-zero tokens of a chunk (what FAST's compression keeps)."""
        return int(np.count_nonzero(self.encode(chunk)))


def round_trip_error(codec, chunks: Sequence[np.ndarray]) -> float:
    """Root mean squared error (in the actions' units) of decode(encode(chunk)) over ``chunks``."""
    squared = [np.square(codec.decode(codec.encode(c), len(c)) - np.asarray(c, dtype=np.float64)) for c in chunks]
    return float(np.sqrt(np.mean(np.concatenate(squared))))


def chunks_of(trajectories: Sequence[np.ndarray], steps: int = 16) -> list[np.ndarray]:
    """Non-overlapping chunks of ``steps`` samples of every trajectory (a shorter tail is left out)."""
    return [np.asarray(t)[i:i + steps] for t in trajectories for i in range(0, len(t) - steps + 1, steps)]


def codec_table(chunks: Sequence[np.ndarray], ks: Sequence[int] = (2, 4, 6, 8, 12, 16),
                bins: Sequence[int] = (16, 64, 256), scales: Sequence[float] = (1.0, 4.0, 10.0, 50.0)) -> list[dict]:
    """Round-trip RMSE of every codec setting on ``chunks``, with what each code costs (numbers per chunk)."""
    steps, dims = np.asarray(chunks[0]).shape
    rows = [{"codec": "raw", "setting": "-", "numbers": steps * dims,
             "rmse": round_trip_error(RawCodec(), chunks)}]
    rows += [{"codec": "binning", "setting": f"{b} bins", "numbers": steps * dims,
              "rmse": round_trip_error(BinningCodec(b).fit(chunks), chunks)} for b in bins]
    rows += [{"codec": "dct", "setting": f"K={k}", "numbers": k * dims,
              "rmse": round_trip_error(DCTCodec(k), chunks)} for k in ks if k <= steps]
    for scale in scales:
        fast = FASTCodec(scale).fit(chunks)
        rows.append({"codec": "fast", "setting": f"scale {scale:g}",
                     "numbers": float(np.mean([fast.tokens(c) for c in chunks])),
                     "rmse": round_trip_error(fast, chunks)})
    return rows
