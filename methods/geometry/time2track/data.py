"""Time2Track's subjects: real ECG leads, generated electromechanical delays and left-ventricular kinematics.

**Real** (PhysioNet, read with ``wfdb`` from ``../shared/data/ecg``): the ECG waveforms of every lead of both
records (MIT-BIH Arrhythmia record 100: MLII and V5, 360 Hz, 30 min; PTB Diagnostic record s0010: 12 standard
and 3 Frank leads, 1 kHz, 38 s), resampled to :data:`FS` Hz, and their beat times (record 100: the cardiologists'
``.atr`` annotations; s0010 has none: the peaks of the 15-lead 8-30 Hz energy, at least 400 ms apart). The
real rhythm (RR intervals), QRS width and R amplitude of each beat in each lead are measured on the original
sampling rate.

**Generated** (seeded), per subject = one beat of one lead of one record:

* the window start: ``t0 = R - jitter``, ``jitter ~ U(20, 200) ms`` (a free-running acquisition: frames are not
  triggered on the R peak); the model sees :data:`CONTEXT` ECG samples centred on ``t0`` and predicts
  :data:`FRAMES` motion frames, 40 ms apart, from ``t0``;
* the electromechanical delay ``EMD = 80 ms + 25 ms z(QRS width) - 10 ms z(RR) + N(0, 5 ms)``, clipped to
  [30, 170] ms (z: standardised over the cohort): partly readable from the ECG, partly the subject's own;
* kinematics: systole lasting ``0.33 sqrt(RR)`` s; radial shortening ``0.22 + 0.04 z(log R amplitude) +
  N(0, 0.015)``; base radius, torsion and longitudinal shortening the subject's own (no ECG predicts them);
* the motion: 24 mid-wall landmarks (3 levels x 8 sectors), displacement (mm) from end-diastole; every real
  beat ``R_j`` of the record contracts at ``R_j + EMD`` (raised-cosine shortening over the systole, relaxation over
  the same span), so the motion follows the real rhythm, plus tracking noise ``N(0, noise_mm)``.

No heart moved: the pairing of ECG and motion is synthetic; only the ECG (and its timing) is measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..core import GeometryError
from ..motiondata import FRAMES, split

FS = 100.0  # Hz: the common clock of ECG and delays (one sample = 10 ms)
CONTEXT = 256  # ECG samples the model sees, centred on the window start (2.56 s)
FRAME_S = 0.04
LANDMARKS = 24
RECORDS = ("100", "s0010_re")
DATA = {"real": "ECG waveforms of every lead of MIT-BIH record 100 and PTB record s0010 (PhysioNet), their beat "
                "times (record 100: annotations; s0010: detected) and the RR, QRS width and R amplitude measured "
                "on them",
        "generated": "per subject (one beat of one lead): the window start's jitter before the R peak, the "
                     "electromechanical delay (from the QRS width and RR plus the subject's own part), the "
                     "kinematics (systole from RR, shortening from the R amplitude, radius, torsion and long-axis "
                     "shortening the subject's own) and the landmark motion they drive, plus tracking noise",
        "pairing": "synthetic: no heart moved; the motion is parametric, driven by the real ECG's beat times"}


@dataclass(frozen=True)
class Lead:
    """One real ECG lead at :data:`FS` Hz, its record's beat times (s) and per-beat measures."""

    record: str
    name: str
    signal: np.ndarray  # (samples,) mV at FS
    beats: np.ndarray  # (beats,) s
    qrs_ms: np.ndarray  # (beats,) QRS width in this lead
    r_amp: np.ndarray  # (beats,) peak |deflection| of the QRS in this lead, mV


@dataclass(frozen=True)
class Cohort:
    """Subjects: ECG context ``(n, CONTEXT)``, motion ``(n, FRAMES, 24, 3)``, planted delays (s), and provenance."""

    ecg: np.ndarray
    motion: np.ndarray
    emd: np.ndarray  # planted electromechanical delay, s
    r_offset: np.ndarray  # s from the window start to the subject's R peak (the generated jitter)
    beats: list[np.ndarray]  # every real beat time (s) relative to the window start, per subject
    source: list[tuple[str, str, int]]  # (record, lead, beat index)


def _measure(raw: np.ndarray, fs: float, beats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-beat QRS width (ms: span above 30% of the 8-30 Hz envelope's peak) and R amplitude (mV) of one lead."""
    from scipy.signal import butter, filtfilt

    b, a = butter(2, [8 / (fs / 2), 30 / (fs / 2)], "band")
    envelope = np.abs(filtfilt(b, a, raw))
    half = int(0.08 * fs)
    width, amp = np.zeros(len(beats)), np.zeros(len(beats))
    for i, t in enumerate(beats):
        c = int(round(t * fs))
        seg = envelope[max(c - half, 0):c + half]
        above = np.flatnonzero(seg > 0.3 * seg.max())
        width[i] = 1000 * (above[-1] - above[0] + 1) / fs
        local = raw[max(c - half, 0):c + half]
        amp[i] = np.abs(local - np.median(raw[max(c - 2 * half, 0):c + 2 * half])).max()
    return width, amp


def _beats(path: Path, signals: np.ndarray, fs: float) -> np.ndarray:
    """Beat times (s): the record's annotations when it has them, else the peaks of the multi-lead QRS energy."""
    import wfdb  # lazy: only the motion data reads ECG records
    from scipy.signal import butter, filtfilt, find_peaks

    if path.with_suffix(".atr").is_file():
        notes = wfdb.rdann(str(path), "atr")
        keep = [s for s, sym in zip(notes.sample, notes.symbol, strict=True) if sym.isalpha() or sym == "/"]
        return np.asarray(keep, float) / fs
    b, a = butter(2, [8 / (fs / 2), 30 / (fs / 2)], "band")
    energy = (filtfilt(b, a, signals, axis=0) ** 2).sum(axis=1)
    peaks, _ = find_peaks(energy, distance=int(0.4 * fs), height=0.3 * np.quantile(energy, 0.99))
    return peaks / fs


@lru_cache(maxsize=4)
def leads(ecg_dir: Path) -> tuple[Lead, ...]:
    """Every lead of both records in ``ecg_dir``, resampled to :data:`FS` Hz, with beat times and measures."""
    import wfdb  # lazy: only the motion data reads ECG records
    from scipy.signal import resample_poly

    out = []
    for name in RECORDS:
        path = Path(ecg_dir) / name
        try:
            record = wfdb.rdrecord(str(path))
        except (FileNotFoundError, ValueError) as error:
            raise GeometryError(f"{path}: cannot read the wfdb record ({error})") from None
        fs, signals = float(record.fs), np.nan_to_num(record.p_signal)
        beats = _beats(path, signals, fs)
        beats = beats[(beats > 0.2) & (beats < len(signals) / fs - 0.2)]
        down = resample_poly(signals, int(FS), int(fs), axis=0)
        for j, lead_name in enumerate(record.sig_name):
            width, amp = _measure(signals[:, j], fs, beats)
            out.append(Lead(name, lead_name, down[:, j].astype(np.float32), beats, width, amp))
    return tuple(out)


def profile(phase: np.ndarray) -> np.ndarray:
    """Contraction state 0..1: raised-cosine shortening over phase 0..1, relaxation over 1..2, rest elsewhere."""
    p = np.clip(phase, 0, 2)
    return np.where(p <= 1, (1 - np.cos(np.pi * p)) / 2, (1 + np.cos(np.pi * (p - 1))) / 2)


def contraction(beats: np.ndarray, emd: float, systole: float, times: np.ndarray) -> np.ndarray:
    """Contraction state at ``times``: each beat ``R_j`` contracts at ``R_j + emd`` (the latest one wins)."""
    phase = (times[:, None] - beats[None, :] - emd) / systole
    return profile(np.where(phase >= 0, phase, 3.0)).max(axis=1) if len(beats) else np.zeros(len(times))


def landmark_motion(state: np.ndarray, radius: float, shortening: float, torsion: float,
                    longitudinal: float) -> np.ndarray:
    """Displacements ``(frames, 24, 3)`` mm of the mid-wall landmarks for a contraction state per frame."""
    sector = np.arange(8) * 2 * np.pi / 8
    angle, depth = (a.ravel() for a in np.meshgrid(sector, np.array([0.2, 0.5, 0.8])))
    s = state[:, None]
    r0 = radius * np.sqrt(1 - depth ** 2 * 0.8)
    r = r0 * (1 - shortening * s)
    twist = torsion * depth * s
    return np.stack([r * np.cos(angle + twist) - r0 * np.cos(angle), r * np.sin(angle + twist) - r0 * np.sin(angle),
                     -80 * (1 - depth) * longitudinal * s * np.ones_like(angle)], axis=-1)


def frame_times() -> np.ndarray:
    """The motion frames' times (s) from the window start."""
    return np.arange(FRAMES) * FRAME_S


def _z(x: np.ndarray) -> np.ndarray:
    return (x - x.mean()) / max(float(x.std()), 1e-9)


def cohort(ecg_dir: Path, n: int, seed: int = 0, noise_mm: float = 0.2) -> Cohort:
    """``n`` subjects, half from each record (beats, leads and jitters drawn with ``seed``)."""
    rng = np.random.default_rng(seed)
    all_leads = leads(Path(ecg_dir))
    half_ctx = CONTEXT // 2 / FS
    picks: list[tuple[Lead, int, float]] = []
    for r, record in enumerate(RECORDS):
        mine = [lead for lead in all_leads if lead.record == record]
        options = [(lead, i) for lead in mine for i in range(1, len(lead.beats) - 1)
                   if half_ctx + 0.25 < lead.beats[i] < len(lead.signal) / FS - half_ctx - 0.05]
        want = n // 2 + (n % 2 if r == 0 else 0)
        if len(options) < want:
            raise GeometryError(f"{ecg_dir}/{record}: {len(options)} usable beats, {want} subjects asked for")
        for k in rng.choice(len(options), want, replace=False):
            lead, i = options[k]
            picks.append((lead, i, float(rng.uniform(0.02, 0.20))))
    qrs = np.array([lead.qrs_ms[i] for lead, i, _ in picks])
    rr = np.array([lead.beats[i + 1] - lead.beats[i] for lead, i, _ in picks])
    amp = np.array([lead.r_amp[i] for lead, i, _ in picks])
    m = len(picks)
    emd = np.clip(0.080 + 0.025 * _z(qrs) - 0.010 * _z(rr) + rng.normal(0, 0.005, m), 0.03, 0.17)
    shortening = np.clip(0.22 + 0.04 * _z(np.log(amp + 1e-3)) + rng.normal(0, 0.015, m), 0.08, 0.4)
    radius, torsion = rng.normal(25, 2.0, m), np.radians(rng.normal(12, 3, m))
    longitudinal = rng.normal(0.12, 0.02, m)
    ecg, motion, relative = np.zeros((m, CONTEXT), np.float32), np.zeros((m, FRAMES, LANDMARKS, 3)), []
    times = frame_times()
    for s, (lead, i, jitter) in enumerate(picks):
        t0 = lead.beats[i] - jitter
        start = int(round((t0 - half_ctx) * FS))
        ecg[s] = lead.signal[start:start + CONTEXT]
        beats = lead.beats[(lead.beats > t0 - 2.0) & (lead.beats < t0 + 1.5)] - t0
        relative.append(beats)
        state = contraction(beats, emd[s], 0.33 * np.sqrt(rr[s]), times)
        motion[s] = landmark_motion(state, radius[s], shortening[s], torsion[s], longitudinal[s])
    motion += rng.normal(0, noise_mm, motion.shape)
    return Cohort(ecg, motion, emd, np.array([j for _, _, j in picks]), relative,
                  [(lead.record, lead.name, i) for lead, i, _ in picks])


def synthetic_ecg(beats: np.ndarray, width_s: float = 0.03, noise_mv: float = 0.0, seed: int = 0) -> np.ndarray:
    """A generated ECG context (``CONTEXT`` samples, window start at its centre) with a Gaussian R wave (1 mV,
    ``width_s`` standard deviation) at each beat time (s from the window start): a subject with known timing."""
    t = (np.arange(CONTEXT) - CONTEXT // 2) / FS
    x = np.exp(-0.5 * ((t[:, None] - np.asarray(beats)[None]) / width_s) ** 2).sum(axis=1)
    return (x + np.random.default_rng(seed).normal(0, noise_mv, CONTEXT)).astype(np.float32)


__all__ = ["FRAMES", "Cohort", "cohort", "leads", "split", "synthetic_ecg"]
