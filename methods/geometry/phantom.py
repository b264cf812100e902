"""A generated cardiac phantom with known volumes, and the Fourier-contour pipeline run on it.

Each subject's left ventricle is a truncated prolate shape: at height ``z`` below the base and time ``t`` its
endocardial cross-section has radius ``ρ(z, t) (1 + ε2 cos(2θ + φ2) + ε3 cos(3θ + φ3))`` with
``ρ(z, t)² = ρ0(t)² (1 - z²/L(t)²)``, so its area is ``π ρ² (1 + (ε2² + ε3²)/2)`` and its volume
``(2/3) π ρ0² (1 + (ε2² + ε3²)/2) L`` exactly. Through the cycle (``FRAMES`` frames, end-diastole at 0,
end-systole at ``ES_FRAME``) the long axis shortens and ``ρ0`` contracts so that the ejection fraction is the
subject's drawn value (uniform in [30, 70] %). The epicardium keeps each slice's myocardial area (incompressible
wall). Observations: per frame and short-axis slice (thickness ``SLICE`` mm), ``POINTS`` noisy points of each
contour, as a segmentation's boundary would give.

The pipeline (:func:`estimate`) fits each slice's points with K harmonics, takes the areas in closed form,
sums the discs and computes the EF; K = 0 is the no-smoothing reference (the points' polygon).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import contours

FRAMES = 20
ES_FRAME = 8
SLICE = 8.0  # mm
POINTS = 48
NOISE = 0.8  # mm, radial noise of the observed points
EF_RANGE = (30.0, 70.0)


@dataclass(frozen=True)
class Subject:
    """One phantom ventricle: shape parameters, its per-frame radius and length, and its true volumes (ml)."""

    subject_id: int
    rho0: np.ndarray  # (FRAMES,) mm
    length: np.ndarray  # (FRAMES,) mm
    eps: tuple[float, float]
    phases: tuple[float, float]
    myocardium: float  # mm², wall area per slice at the base
    ef: float

    def endo_area(self, z: float | np.ndarray, frame: int) -> np.ndarray:
        """The exact endocardial area (mm²) of the slice at depth ``z`` below the base."""
        rho2 = self.rho0[frame] ** 2 * np.clip(1 - (np.asarray(z) / self.length[frame]) ** 2, 0, None)
        return np.pi * rho2 * (1 + (self.eps[0] ** 2 + self.eps[1] ** 2) / 2)

    def volume(self, frame: int) -> float:
        """The exact cavity volume (ml) at ``frame``."""
        shape = 1 + (self.eps[0] ** 2 + self.eps[1] ** 2) / 2
        return float(2 / 3 * np.pi * self.rho0[frame] ** 2 * shape * self.length[frame] / 1000)

    def endo(self, z: float, frame: int, theta: np.ndarray) -> np.ndarray:
        """Endocardial points (mm) at angles ``theta`` of the slice at depth ``z``; empty below the apex."""
        scale = np.sqrt(self.endo_area(z, frame) / (np.pi * (1 + (self.eps[0] ** 2 + self.eps[1] ** 2) / 2)))
        r = scale * (1 + self.eps[0] * np.cos(2 * theta + self.phases[0]) + self.eps[1] * np.cos(3 * theta
                                                                                                 + self.phases[1]))
        return np.column_stack([r * np.cos(theta), r * np.sin(theta)])

    def epi(self, z: float, frame: int, theta: np.ndarray) -> np.ndarray:
        """Epicardial points: a circle whose area is the cavity's plus the slice's (constant) wall area."""
        r = np.sqrt((self.endo_area(z, frame) * (1 + 0.1 * (self.eps[0] ** 2 + self.eps[1] ** 2)) + self.myocardium)
                    / np.pi)
        return np.column_stack([r * np.cos(theta), r * np.sin(theta)])


def make_subject(subject_id: int, seed: int = 0) -> Subject:
    """A random subject: ED radius 22-30 mm, length 75-95 mm, long-axis shortening 8-15 %, EF in EF_RANGE."""
    rng = np.random.default_rng([seed, subject_id])
    ef = rng.uniform(*EF_RANGE)
    rho_ed, l_ed = rng.uniform(22, 30), rng.uniform(75, 95)
    l_es = l_ed * (1 - rng.uniform(0.08, 0.15))
    rho_es = rho_ed * np.sqrt((1 - ef / 100) * l_ed / l_es)
    t = np.arange(FRAMES)
    # contraction to ES, then relaxation back: a raised cosine in each phase
    phase = np.where(t <= ES_FRAME, t / ES_FRAME, 1 - (t - ES_FRAME) / (FRAMES - ES_FRAME))
    s = (1 - np.cos(np.pi * phase)) / 2
    rho2 = rho_ed ** 2 + s * (rho_es ** 2 - rho_ed ** 2)
    length = l_ed + s * (l_es - l_ed)
    return Subject(subject_id, np.sqrt(rho2), length, tuple(rng.uniform(0.03, 0.12, 2)),
                   tuple(rng.uniform(0, 2 * np.pi, 2)), float(rng.uniform(0.9, 1.2) * np.pi * (2 * rho_ed * 9 + 81)),
                   float(ef))


def slice_depths(subject: Subject, frame: int) -> np.ndarray:
    """Centres of the short-axis slices that cut the cavity at ``frame``: h/2, 3h/2, ... above the apex."""
    return np.arange(SLICE / 2, subject.length[frame], SLICE)


def observe(subject: Subject, frame: int, noise: float = NOISE, points: int = POINTS,
            seed: int = 0) -> list[np.ndarray]:
    """Noisy endocardial points of each slice at ``frame`` (angles jittered, radial Gaussian noise)."""
    rng = np.random.default_rng([seed, subject.subject_id, frame])
    out = []
    for z in slice_depths(subject, frame):
        theta = np.sort((np.arange(points) + rng.uniform(-0.4, 0.4, points)) * 2 * np.pi / points)
        exact = subject.endo(z, frame, theta)
        radial = exact / np.maximum(np.linalg.norm(exact, axis=1, keepdims=True), 1e-9)
        out.append(exact + radial * rng.normal(scale=noise, size=(points, 1)))
    return out


def slice_area(points: np.ndarray, harmonics: int) -> float:
    """A slice's area: closed-form from a K-harmonic fit, or the points' polygon when K is 0."""
    if len(points) < 3:
        return 0.0
    return contours.polygon_area(points) if harmonics == 0 else contours.area(contours.fit(points, harmonics))


def estimate(subject: Subject, harmonics: int, noise: float = NOISE, seed: int = 0) -> dict[str, float]:
    """EDV, ESV (ml) and EF (%) of ``subject`` from its noisy slices, each slice fitted with ``harmonics``."""
    vols = [contours.volume([slice_area(p, harmonics) for p in observe(subject, f, noise, seed=seed)], SLICE) / 1000
            for f in (0, ES_FRAME)]
    return {"edv": vols[0], "esv": vols[1], "ef": contours.ejection_fraction(*vols)}


def contour_errors(subject: Subject, harmonics: int, noise: float = NOISE, seed: int = 0) -> dict[str, float]:
    """Hausdorff and mean perpendicular distance (mm) of the fitted ED contours to the true ones, mean over slices."""
    theta = np.linspace(0, 2 * np.pi, 128, endpoint=False)
    hd, md = [], []
    for z, points in zip(slice_depths(subject, 0), observe(subject, 0, noise, seed=seed), strict=True):
        fitted = points if harmonics == 0 else contours.reconstruct(contours.fit(points, harmonics),
                                                                    contours.offset(points), 128)
        a, b = contours.distances(contours.resample(fitted, 128), subject.endo(z, 0, theta))
        hd.append(max(a.max(), b.max()))
        md.append(np.concatenate([a, b]).mean())
    return {"hausdorff": float(np.mean(hd)), "mean_distance": float(np.mean(md))}
