"""Geometry bench: the cost of each metric against its named reference implementation, and of alignment.

Prints one table: operation, input size, our median time (ms), the reference's, the ratio, and the peak traced
memory of ours (tracemalloc, numpy buffers included). References: ``medpy`` for HD95/ASSD (the same definition),
``pyefd`` for the elliptic Fourier fit, a brute-force ``scipy.spatial.distance.cdist`` Chamfer for the KD-tree
one. The baselines' scores (the tables with 95% intervals) come from ``neurips26 geometry bench <family>``.

    python bench/geometry.py                 # 3D masks 96x96x64, contours of 512 points, 20k surface points
    python bench/geometry.py --repeats 5 --mask 128 --points 50000
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import pyefd
from neurips26.methods.geometry import contours, segmentation, surfaces
from scipy import ndimage
from scipy.spatial.distance import cdist
from scipy.spatial.transform import Rotation


def timed(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``fn`` in ms over ``repeats`` runs after one warm-up."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * float(np.median(times))


def peak_mb(fn: Callable[[], object]) -> float:
    """Peak traced memory (MB) of one call."""
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mask", type=int, default=96, help="Side of the 3D masks (depth: 2/3 of it).")
    parser.add_argument("--contour", type=int, default=512, help="Points per contour.")
    parser.add_argument("--points", type=int, default=20_000, help="Surface points per cloud.")
    args = parser.parse_args()
    from medpy.metric import binary as medpy

    rng = np.random.default_rng(0)
    shape = (args.mask, args.mask, args.mask * 2 // 3)
    a = ndimage.gaussian_filter(rng.random(shape), 3) > 0.5
    b = ndimage.gaussian_filter(rng.random(shape), 3) > 0.5
    spacing = (0.8, 0.8, 1.5)
    theta = np.sort(rng.uniform(0, 2 * np.pi, args.contour))
    r = 10 + np.cos(3 * theta) + rng.normal(0, 0.1, args.contour)
    contour = np.column_stack([r * np.cos(theta), r * np.sin(theta)])
    closed = np.vstack([contour, contour[:1]])
    x = rng.normal(size=(args.points, 3))
    y = x @ Rotation.random(random_state=1).as_matrix().T * 1.3 + 0.5
    small = min(args.points, 5000)

    def brute_chamfer() -> float:
        d = cdist(x[:small], y[:small])
        return (d.min(axis=0).mean() + d.min(axis=1).mean()) / 2

    rows = [
        ("HD95 (3D, spacing)", f"{'x'.join(map(str, shape))}", lambda: segmentation.hd95(a, b, spacing),
         lambda: medpy.hd95(a, b, voxelspacing=spacing), "medpy.hd95"),
        ("ASSD (3D, spacing)", f"{'x'.join(map(str, shape))}", lambda: segmentation.assd(a, b, spacing),
         lambda: medpy.assd(a, b, voxelspacing=spacing), "medpy.assd"),
        ("all 9 mask metrics", f"{'x'.join(map(str, shape))}", lambda: segmentation.scores(a, b, spacing),
         lambda: (medpy.hd95(a, b, voxelspacing=spacing), medpy.assd(a, b, voxelspacing=spacing), medpy.dc(a, b)),
         "medpy hd95+assd+dc"),
        ("EFD fit, K=20", f"{args.contour} pts", lambda: contours.fit(contour, 20),
         lambda: pyefd.elliptic_fourier_descriptors(closed, order=20), "pyefd"),
        ("Chamfer (KD-tree)", f"{small} pts", lambda: surfaces.scores(surfaces.Points(x[:small]),
                                                                      surfaces.Points(y[:small]), aligned=False),
         brute_chamfer, "cdist brute force"),
        ("Sim(3) align + metrics", f"{args.points} pts", lambda: surfaces.scores(surfaces.Points(y),
                                                                                 surfaces.Points(x)), None, "-"),
    ]
    head = f"{'operation':24} {'size':>12} {'ours ms':>9} {'ref ms':>9} {'ratio':>6} {'peak MB':>8}  reference"
    print(head)
    print("-" * len(head))
    for name, size, ours, reference, label in rows:
        mine = timed(ours, args.repeats)
        theirs = timed(reference, args.repeats) if reference else float("nan")
        print(f"{name:24} {size:>12} {mine:9.1f} {theirs:9.1f} {theirs / mine:6.2f} {peak_mb(ours):8.1f}  {label}")


if __name__ == "__main__":
    main()
