"""Smoothness of an action trajectory (steps x dims, sampled at ``rate_hz``).

* mean squared jerk: the third finite difference divided by ``dt**3`` (pixels / s^3), squared, summed over
  dimensions, averaged over steps;
* high-frequency energy: the share of the first difference's spectral power above ``cutoff_hz`` (0 for a
  trajectory that changes slowly, near 1 for chatter);
* first-difference energy: mean squared step-to-step change (pixels^2 per step), scaled to a 10 Hz step so
  that rates compare.
"""

from __future__ import annotations

import numpy as np

CUTOFF_HZ = 2.0


def mean_squared_jerk(actions: np.ndarray, rate_hz: float) -> float:
    """Mean squared jerk in (pixels / s^3)^2; 0 for fewer than 4 steps."""
    actions = np.asarray(actions, dtype=np.float64)
    if len(actions) < 4:
        return 0.0
    jerk = np.diff(actions, n=3, axis=0) * rate_hz**3
    return float(np.mean(np.sum(jerk**2, axis=1)))


def high_frequency_energy(actions: np.ndarray, rate_hz: float, cutoff_hz: float = CUTOFF_HZ) -> float:
    """Share of the first difference's power above ``cutoff_hz`` (0 when it has no power)."""
    actions = np.asarray(actions, dtype=np.float64)
    if len(actions) < 3:
        return 0.0
    velocity = np.diff(actions, axis=0)
    velocity = velocity - velocity.mean(axis=0)
    power = np.sum(np.abs(np.fft.rfft(velocity, axis=0)) ** 2, axis=1)
    freqs = np.fft.rfftfreq(len(velocity), d=1.0 / rate_hz)
    total = power.sum()
    return float(power[freqs > cutoff_hz].sum() / total) if total > 0 else 0.0


def first_difference_energy(actions: np.ndarray, rate_hz: float) -> float:
    """Mean squared change per step, in pixels^2 per 10 Hz step (velocity squared x 0.01 s^2)."""
    actions = np.asarray(actions, dtype=np.float64)
    if len(actions) < 2:
        return 0.0
    velocity = np.diff(actions, axis=0) * rate_hz
    return float(np.mean(np.sum(velocity**2, axis=1)) * 0.01)


def smoothness(actions: np.ndarray, rate_hz: float) -> dict[str, float]:
    """All three metrics of one trajectory."""
    return {"mean_sq_jerk": mean_squared_jerk(actions, rate_hz),
            "high_freq_energy": high_frequency_energy(actions, rate_hz),
            "diff_energy": first_difference_energy(actions, rate_hz)}
