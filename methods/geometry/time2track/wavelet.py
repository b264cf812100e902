"""Time2Track's learnable wavelet decomposition of the ECG, and the electromechanical delay (EMD) it gives.

:class:`LearnableWavelet` is a lifting-scheme wavelet transform whose predict and update filters are trainable
(initialised to the LeGall 5/3 wavelet): each level splits the signal into even and odd samples,
``detail = odd - P(even)``, ``approx = even + U(detail)``. Any filters invert exactly (undo the steps in
reverse), so the decomposition always reconstructs its input, and :meth:`LearnableWavelet.bands` (the
multiresolution analysis: each level's detail and the last approximation, brought back to full resolution)
sums to the input.

The EMD comes from the decomposition in two steps:

* the **electrical activations**: the peaks of the QRS bands' energy (detail levels 1-2, 12.5-50 Hz at 100 Hz),
  refined to a fraction of a sample (:func:`activations`);
* the **delay**: on training subjects, the lag ``d`` that best aligns the ECG's activations with the motion
  (:func:`recover_delay`: the contraction template started at ``activation + d`` that correlates best with the
  motion's first principal component, over a grid of delays and systole lengths); an :class:`EMDHead` on the
  wavelet bands then learns to predict ``d`` from the ECG alone, for unseen subjects, training the wavelet's
  filters with it (:func:`fit_delay`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from scipy.signal import find_peaks
from torch import nn
from torch.nn import functional as F

from .data import FS, frame_times, profile

LEVELS = 4
QRS_LEVELS = (0, 1)  # detail levels 1-2 carry the QRS (12.5-50 Hz at FS = 100 Hz)


class LearnableWavelet(nn.Module):
    """A ``levels``-level lifting wavelet with trainable predict/update filters (4 taps each, LeGall 5/3 at init)."""

    def __init__(self, levels: int = LEVELS) -> None:
        super().__init__()
        self.levels = levels
        self.predict = nn.Parameter(torch.tensor([[0.0, 0.5, 0.5, 0.0]]).repeat(levels, 1))  # even[n-1..n+2]
        self.update = nn.Parameter(torch.tensor([[0.0, 0.25, 0.25, 0.0]]).repeat(levels, 1))  # detail[n-2..n+1]

    @staticmethod
    def _filter(x: torch.Tensor, taps: torch.Tensor, left: int) -> torch.Tensor:
        padded = F.pad(x.unsqueeze(1), (left, 3 - left), mode="replicate")
        return F.conv1d(padded, taps.view(1, 1, -1)).squeeze(1)

    def forward(self, x: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
        """(details, finest first; last approximation) of ``x`` ``(batch, length)``, length divisible by
        ``2 ** levels``."""
        if x.shape[-1] % (2 ** self.levels):
            raise ValueError(f"length {x.shape[-1]} is not divisible by 2**{self.levels}")
        details, approx = [], x
        for level in range(self.levels):
            even, odd = approx[..., ::2], approx[..., 1::2]
            detail = odd - self._filter(even, self.predict[level], 1)
            approx = even + self._filter(detail, self.update[level], 2)
            details.append(detail)
        return details, approx

    def inverse(self, details: list[torch.Tensor], approx: torch.Tensor) -> torch.Tensor:
        """The signal whose decomposition is ``(details, approx)``: the lifting steps undone in reverse."""
        for level in reversed(range(self.levels)):
            detail = details[level]
            even = approx - self._filter(detail, self.update[level], 2)
            odd = detail + self._filter(even, self.predict[level], 1)
            approx = torch.stack([even, odd], dim=-1).flatten(-2)
        return approx

    def bands(self, x: torch.Tensor) -> torch.Tensor:
        """Multiresolution analysis ``(batch, levels + 1, length)``: each detail level (finest first) and the
        last approximation brought back to full resolution alone; the bands sum to ``x``."""
        details, approx = self(x)
        zeros = [torch.zeros_like(d) for d in details]
        out = [self.inverse([d if i == j else z for i, (d, z) in enumerate(zip(details, zeros, strict=True))],
                            torch.zeros_like(approx)) for j in range(self.levels)]
        out.append(self.inverse(zeros, approx))
        return torch.stack(out, dim=1)


def qrs_energy(wavelet: LearnableWavelet, ecg: torch.Tensor) -> np.ndarray:
    """Energy of the QRS bands of ECG contexts ``(batch, length)``, cycle-spun (averaged over the
    ``2 ** levels`` circular shifts, so it does not depend on where a beat falls on the decimation grid),
    smoothed over 50 ms and scaled to peak 1 per subject."""
    shifts = 2 ** wavelet.levels
    with torch.no_grad():
        e = sum(torch.roll(wavelet.bands(torch.roll(ecg, k, -1))[:, list(QRS_LEVELS)].sum(dim=1), -k, -1).pow(2)
                for k in range(shifts)) / shifts
    e = e.cpu().numpy()
    kernel = np.hanning(7)
    e = np.apply_along_axis(lambda r: np.convolve(r, kernel / kernel.sum(), mode="same"), 1, e)
    return e / np.maximum(e.max(axis=1, keepdims=True), 1e-12)


def activations(energy: np.ndarray, threshold: float = 0.3) -> list[np.ndarray]:
    """Electrical activation times (s from the context's centre) of each subject: the QRS energy's peaks, at least
    300 ms apart and above ``threshold``, refined by a parabola through each peak and its neighbours."""
    out = []
    centre = energy.shape[1] // 2
    for row in energy:
        peaks, _ = find_peaks(row, height=threshold, distance=int(0.3 * FS))
        peaks = peaks[(peaks > 0) & (peaks < len(row) - 1)]
        a, b, c = row[peaks - 1], row[peaks], row[peaks + 1]
        shift = np.where(np.abs(a - 2 * b + c) > 1e-12, 0.5 * (a - c) / (a - 2 * b + c + 1e-30), 0.0)
        out.append((peaks + np.clip(shift, -0.5, 0.5) - centre) / FS)
    return out


def motion_trace(motion: np.ndarray) -> np.ndarray:
    """The motion's first principal component over frames ``(frames,)`` (the sign makes it rise with motion)."""
    flat = motion.reshape(motion.shape[0], -1)
    centred = flat - flat.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    trace = centred @ vt[0]
    magnitude = np.linalg.norm(flat, axis=1)
    return trace if np.corrcoef(trace, magnitude)[0, 1] >= 0 else -trace


def _best(acts: np.ndarray, trace: np.ndarray, delays: np.ndarray, systoles: np.ndarray) -> tuple[float, float]:
    """(delay, systole) of the contraction template correlating best with the standardised ``trace``."""
    # phase (systoles, delays, frames, beats); each frame follows its latest started beat
    phase = (frame_times()[None, None, :, None] - acts[None, None, None, :] - delays[None, :, None, None])
    phase = phase / systoles[:, None, None, None]
    templates = profile(np.where(phase >= 0, phase, 3.0)).max(axis=-1)
    templates = templates - templates.mean(axis=-1, keepdims=True)
    r = templates @ trace / np.maximum(np.linalg.norm(templates, axis=-1), 1e-12)
    i, k = np.unravel_index(int(np.argmax(r)), r.shape)
    return float(delays[k]), float(systoles[i])


def recover_delay(acts: np.ndarray, motion: np.ndarray) -> float:
    """The EMD (s) aligning the ECG's activations ``acts`` (s from the window start) with ``motion``
    ``(frames, ...)``: the delay whose contraction template correlates best with the motion's trace, searched
    over 0-250 ms (5 ms apart) and systoles of 200-450 ms (10 ms apart), then to 1 ms (2 ms) around the best."""
    acts = np.asarray(acts, float)
    if acts.size == 0:
        return float("nan")
    trace = motion_trace(motion)
    trace = (trace - trace.mean()) / max(float(trace.std()), 1e-12)
    delay, systole = _best(acts, trace, np.arange(0.0, 0.2505, 0.005), np.arange(0.20, 0.4505, 0.01))
    return _best(acts, trace, np.arange(max(delay - 0.006, 0.0), delay + 0.0065, 0.001),
                 np.arange(systole - 0.01, systole + 0.0105, 0.002))[0]


class EMDHead(nn.Module):
    """The delay read from the ECG: a small convolutional net over the wavelet bands -> EMD (s)."""

    def __init__(self, bands: int = LEVELS + 1, width: int = 16) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(bands, width, 9, stride=2, padding=4), nn.GELU(),
                                 nn.Conv1d(width, width, 9, stride=2, padding=4), nn.GELU())
        self.out = nn.Linear(2 * width, 1)
        nn.init.zeros_(self.out.weight)
        nn.init.constant_(self.out.bias, 0.08)

    def forward(self, bands: torch.Tensor) -> torch.Tensor:
        """EMD (s) per subject from bands ``(batch, levels + 1, length)``."""
        bands = bands / bands.flatten(1).std(dim=1).clamp_min(1e-6)[:, None, None]
        h = self.net(bands)
        return self.out(torch.cat([h.mean(dim=-1), h.amax(dim=-1)], dim=-1)).squeeze(-1)


class DelayModel(nn.Module):
    """The learnable wavelet and the EMD head trained together: ECG context -> (bands, EMD)."""

    def __init__(self) -> None:
        super().__init__()
        self.wavelet = LearnableWavelet()
        self.head = EMDHead()

    @staticmethod
    def activations(ecg: torch.Tensor) -> list[np.ndarray]:
        """Electrical activations (s from the window start) of ECG contexts, located on the decomposition as
        initialised (LeGall 5/3), so that delay targets and tokens share one electrical clock while it learns."""
        return activations(qrs_energy(LearnableWavelet().to(ecg.device), ecg))

    def forward(self, ecg: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(bands, EMD in s) of ECG contexts ``(batch, length)``."""
        bands = self.wavelet.bands(ecg - ecg.median(dim=-1, keepdim=True).values)
        return bands, self.head(bands)


def fit_delay(model: DelayModel, ecg: torch.Tensor, targets: torch.Tensor, steps: int, *, lr: float = 3e-3,
              batch: int = 64, seed: int = 0, step_done: Callable[[], None] | None = None) -> list[float]:
    """Train the wavelet and the EMD head to predict ``targets`` (s) from ``ecg`` for ``steps`` Adam steps;
    the losses (ms^2)."""
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        idx = torch.randint(0, len(ecg), (min(batch, len(ecg)),), generator=generator)
        _, emd = model(ecg[idx])
        loss = F.mse_loss(emd * 1000, targets[idx] * 1000)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
        if step_done is not None:
            step_done()
    return losses
