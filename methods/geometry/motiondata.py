"""Synthetic subjects for the motion-diversity evaluator: real ECG timing, parametric left-ventricular motion.

Each subject is a 10-second window of a real ECG (MIT-BIH record 100, read with ``wfdb``, with its cardiologists'
beat annotations). Its features are the window's heart rhythm and beat shape: mean RR interval, SDNN, RMSSD, the
share of ectopic beats, QRS width and R amplitude of the window's mean beat. Its ground-truth motion is
parametric, with parameters drawn from those features plus a subject's own part that no ECG predicts, so the
pairing of ECG and motion is synthetic (the card says so):

* electromechanical delay ``EMD = 60 ms + 15 ms z(QRS width)`` (+ noise; z: standardised over the cohort), then
  systole lasting ``0.33 sqrt(RR)`` s;
* radial shortening from the R amplitude, regional delays (dyssynchrony) growing with the QRS width;
* base radius, torsion and longitudinal shortening: the subject's own (unpredictable from the ECG).

Motion: 24 mid-wall landmarks (3 levels x 8 sectors), displacement from end-diastole in mm over the first second
after an R peak (``FRAMES`` frames), shape ``(FRAMES, 24, 3)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

from .core import GeometryError

FRAMES = 25  # 40 ms apart: the first second after the R peak
WINDOW = 10.0  # seconds of ECG per subject
FEATURES = ("rr_mean", "sdnn", "rmssd", "ectopic", "qrs_ms", "r_amp")
ECTOPIC = frozenset("VAaJSEFj")


@dataclass(frozen=True)
class Cohort:
    """Subjects' ECG features ``(n, 6)``, ground-truth motion ``(n, FRAMES, 24, 3)`` and where each came from."""

    features: np.ndarray
    motion: np.ndarray
    windows: list[tuple[str, float]]  # (record, start second)
    skipped: list[tuple[str, float, str]]  # (record, start second, reason): windows not made into subjects


def _qrs_width(beats: np.ndarray, fs: float) -> tuple[float, float]:
    """(width in ms, R amplitude) of the mean beat: the span where it stays above 30% of its peak deflection."""
    mean = beats.mean(axis=0)
    mean = mean - np.median(mean)
    centre = beats.shape[1] // 2
    peak = np.abs(mean).max()
    above = np.abs(mean) > 0.3 * peak
    left = centre
    while left > 0 and above[left - 1]:
        left -= 1
    right = centre
    while right < len(mean) - 1 and above[right + 1]:
        right += 1
    return 1000 * (right - left + 1) / fs, float(mean[centre])


def ecg_features(record_path: Path, window: float = WINDOW) -> tuple[np.ndarray, list[tuple[str, float]],
                                                                     list[tuple[str, float, str]]]:
    """Features of each whole ``window``-second stretch of an annotated wfdb record with at least 5 beats, where
    each came from, and the stretches skipped with the reason."""
    import wfdb  # lazy: only the motion data needs the ECG reader

    try:
        record = wfdb.rdrecord(str(record_path))
        notes = wfdb.rdann(str(record_path), "atr")
    except (FileNotFoundError, ValueError) as error:
        raise GeometryError(f"{record_path}: cannot read the wfdb record and its .atr annotations ({error})") from None
    fs, signal = float(record.fs), record.p_signal[:, 0]
    beats = np.array([s for s, sym in zip(notes.sample, notes.symbol, strict=True) if sym.isalpha() or sym == "/"])
    kinds = np.array([sym for sym in notes.symbol if sym.isalpha() or sym == "/"])
    half = int(0.1 * fs)
    rows, where, skipped = [], [], []
    for start in np.arange(0, len(signal) / fs - window, window):
        inside = (beats >= start * fs + half) & (beats < (start + window) * fs - half)
        if inside.sum() < 5:
            skipped.append((record_path.name, float(start), f"{int(inside.sum())} annotated beats (< 5)"))
            continue
        peaks = beats[inside]
        rr = np.diff(peaks) / fs
        width, amplitude = _qrs_width(np.stack([signal[p - half:p + half] for p in peaks]), fs)
        rows.append([rr.mean(), rr.std(), np.sqrt(np.mean(np.diff(rr) ** 2)),
                     np.mean([k in ECTOPIC for k in kinds[inside]]), width, amplitude])
        where.append((record_path.name, float(start)))
    return np.array(rows).reshape(-1, len(FEATURES)), where, skipped


def motion_of(features: np.ndarray, seed: int = 0) -> np.ndarray:
    """Ground-truth landmark displacements ``(n, FRAMES, 24, 3)`` (mm) of subjects with ECG ``features``."""
    rng = np.random.default_rng(seed)
    n = len(features)
    rr, qrs, amp = features[:, 0], features[:, 4], features[:, 5]
    z_qrs, z_amp = ((x - x.mean()) / max(x.std(), 1e-9) for x in (qrs, amp))
    emd = np.clip(0.060 + 0.015 * z_qrs + rng.normal(0, 0.006, n), 0.02, 0.15)  # s
    systole = 0.33 * np.sqrt(rr)
    shortening = np.clip(0.22 + 0.04 * z_amp + rng.normal(0, 0.015, n), 0.08, 0.4)
    dyssynchrony = 0.03 / (1 + np.exp(-z_qrs))  # s of regional delay amplitude
    radius = rng.normal(25, 2.0, n)
    torsion = np.radians(rng.normal(12, 3, n))
    longitudinal = rng.normal(0.12, 0.02, n)
    t = np.arange(FRAMES) * 0.04
    sector = np.arange(8) * 2 * np.pi / 8
    level = np.array([0.2, 0.5, 0.8])  # fraction of the long axis from the base
    angle, depth = np.meshgrid(sector, level)
    angle, depth = angle.ravel(), depth.ravel()
    out = np.zeros((n, FRAMES, angle.size, 3))
    for i in range(n):
        onset = emd[i] + dyssynchrony[i] * np.cos(angle - 0.8)  # regional onsets, (24,)
        phase = np.clip((t[:, None] - onset[None]) / systole[i], 0, 2)  # 0..1 contraction, 1..2 relaxation
        s = np.where(phase <= 1, (1 - np.cos(np.pi * phase)) / 2, (1 + np.cos(np.pi * (phase - 1))) / 2)
        r0 = radius[i] * np.sqrt(1 - depth ** 2 * 0.8)
        r = r0 * (1 - shortening[i] * s)
        twist = torsion[i] * depth * s
        x0, y0 = r0 * np.cos(angle), r0 * np.sin(angle)
        out[i, :, :, 0] = r * np.cos(angle + twist) - x0
        out[i, :, :, 1] = r * np.sin(angle + twist) - y0
        out[i, :, :, 2] = 80 * (1 - depth) * longitudinal[i] * s * -1
    return out


def cohort(ecg_dir: Path, seed: int = 0, records: tuple[str, ...] = ("100",)) -> Cohort:
    """The subjects of the annotated records in ``ecg_dir`` (default: MIT-BIH 100, 180 ten-second windows)."""
    parts = [ecg_features(ecg_dir / name) for name in records]
    features = np.vstack([f for f, _, _ in parts])
    if len(features) < 4:
        raise GeometryError(f"{ecg_dir}: {len(features)} ECG windows with 5 or more beats; need at least 4")
    return Cohort(features, motion_of(features, seed), [w for _, ws, _ in parts for w in ws],
                  [s for _, _, ss in parts for s in ss])


def split(n: int, test_share: float = 0.3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) subject indices, drawn at random with ``seed``."""
    order = np.random.default_rng(seed).permutation(n)
    cut = int(round(n * (1 - test_share)))
    return np.sort(order[:cut]), np.sort(order[cut:])


def population_mean(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray) -> np.ndarray:
    """The training subjects' mean motion for every test subject (the collapse this evaluator detects)."""
    return np.broadcast_to(train_y.mean(axis=0), (len(test_x), *train_y.shape[1:])).copy()


def nearest_neighbour(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray) -> np.ndarray:
    """The motion of the training subject whose standardised ECG features are nearest."""
    scaler = StandardScaler().fit(train_x)
    a, b = scaler.transform(train_x), scaler.transform(test_x)
    nearest = ((b[:, None, :] - a[None]) ** 2).sum(-1).argmin(axis=1)
    return train_y[nearest]


def ridge(train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray) -> np.ndarray:
    """A small conditional regressor: ridge regression (alpha 1) from standardised ECG features and their
    squares to the flattened motion."""
    scaler = StandardScaler().fit(train_x)

    def design(x: np.ndarray) -> np.ndarray:
        z = scaler.transform(x)
        return np.hstack([z, z ** 2])

    model = Ridge(alpha=1.0).fit(design(train_x), train_y.reshape(len(train_y), -1))
    return model.predict(design(test_x)).reshape(len(test_x), *train_y.shape[1:])


BASELINES = {"population_mean": population_mean, "nearest_neighbour": nearest_neighbour, "ridge": ridge}
