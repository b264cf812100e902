"""Time2Track's delay-aware token embeddings: each motion frame's token says where the frame falls in its own
beat's mechanical cycle and what the ECG did one electromechanical delay earlier.

For a frame at time ``t`` (s from the window start), with electrical activations ``a_j`` (from the wavelet's QRS
bands) and the subject's EMD ``d`` (from the EMD head):

* the **mechanical phase** ``psi = t - (a_j + d)`` of the latest beat whose contraction has started
  (``a_j + d <= t``), as sinusoids at :data:`PERIODS` and as a share of that beat's length (the next activation's
  distance, or the median beat length when the window holds no next one);
* the **delayed electrical context**: the wavelet bands at ``t - d + k * 10 ms``, ``k = -4..4`` (what the ECG
  did when the electrical event that drives this frame happened);
* the frame's absolute time, as sinusoids (the only time signal the generic baseline's tokens carry).

:func:`delay_aware_features` computes these features (no gradient: the wavelet and the delay are fitted first);
the denoiser projects them into its tokens (:class:`~.diffusion.MotionDenoiser`).
"""

from __future__ import annotations

import numpy as np

from .data import FS, frame_times

PERIODS = (2.0, 1.0, 0.5, 0.25, 0.125)  # s
TAPS = np.arange(-4, 5)  # ECG samples around the delayed time


def sinusoids(t: np.ndarray) -> np.ndarray:
    """``(..., 2 * len(PERIODS))``: sin and cos of ``2 pi t / period`` for each period."""
    angle = 2 * np.pi * np.asarray(t, float)[..., None] / np.asarray(PERIODS)
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=-1)


def absolute_time_features(n: int) -> np.ndarray:
    """``(n, frames, 2 * len(PERIODS))``: every subject's frames' absolute times, as sinusoids."""
    return np.broadcast_to(sinusoids(frame_times()), (n, len(frame_times()), 2 * len(PERIODS))).astype(np.float32)


def mechanical_phase(acts: np.ndarray, emd: float) -> tuple[np.ndarray, np.ndarray]:
    """(phase in s, phase as a share of the beat) of each frame, relative to the latest started contraction."""
    times = frame_times()
    acts = np.sort(np.asarray(acts, float))
    beat = float(np.median(np.diff(acts))) if len(acts) > 1 else 0.8
    onsets = acts + emd
    phase, share = np.zeros(len(times)), np.zeros(len(times))
    for k, t in enumerate(times):
        started = np.flatnonzero(onsets <= t)
        if started.size == 0:  # no contraction yet in view: count from one median beat before the first
            j, start = 0, (onsets[0] - beat if len(onsets) else -beat)
        else:
            j = int(started[-1])
            start = onsets[j]
        length = acts[j + 1] - acts[j] if j + 1 < len(acts) and started.size else beat
        phase[k] = t - start
        share[k] = phase[k] / max(length, 0.3)
    return phase, share


def delayed_bands(bands: np.ndarray, emd: float) -> np.ndarray:
    """``(frames, bands * len(TAPS))``: the wavelet bands ``(bands, context)`` read around ``t - emd`` for each
    frame (linear interpolation; the context's centre is the window start)."""
    centre = bands.shape[-1] // 2
    where = (frame_times()[:, None] - emd) * FS + centre + TAPS[None, :]  # fractional sample index
    where = np.clip(where, 0, bands.shape[-1] - 1.001)
    lo = np.floor(where).astype(int)
    frac = where - lo
    out = bands[:, lo] * (1 - frac) + bands[:, lo + 1] * frac  # (bands, frames, taps)
    return out.transpose(1, 0, 2).reshape(len(frame_times()), -1)


def delay_aware_features(acts: list[np.ndarray], emd: np.ndarray, bands: np.ndarray) -> np.ndarray:
    """``(n, frames, features)``: the delay-aware token features of ``n`` subjects from their activations (s),
    EMDs (s) and wavelet bands ``(n, bands, context)`` (each subject's bands scaled to unit deviation)."""
    rows = []
    scaled = bands / np.maximum(bands.reshape(len(bands), -1).std(axis=1), 1e-6)[:, None, None]
    for a, d, b in zip(acts, emd, scaled, strict=True):
        phase, share = mechanical_phase(a, float(d))
        rows.append(np.concatenate([sinusoids(phase), share[:, None], delayed_bands(b, float(d)),
                                    sinusoids(frame_times())], axis=1))
    return np.stack(rows).astype(np.float32)
