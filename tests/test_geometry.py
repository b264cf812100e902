"""Geometry metrics against reference implementations (medpy, pyefd) and closed forms."""

from __future__ import annotations

import numpy as np
import pyefd
import pytest
from neurips26.methods.geometry import contours, motion, phantom, segmentation, surfaces
from neurips26.methods.geometry.core import GeometryError
from scipy import ndimage
from scipy.spatial.transform import Rotation


def disc(shape: tuple[int, int], radius: float, spacing: float) -> np.ndarray:
    y, x = (np.indices(shape) - (np.asarray(shape)[:, None, None] - 1) / 2) * spacing
    return np.hypot(x, y) <= radius


def blobs(seed: int, shape=(30, 40, 24)) -> np.ndarray:
    return ndimage.gaussian_filter(np.random.default_rng(seed).random(shape), 2.5) > 0.5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_surface_distances_and_dice_match_medpy_with_anisotropic_spacing(seed: int) -> None:
    from medpy.metric import binary as medpy

    pred, truth, spacing = blobs(seed), blobs(seed + 10), (0.7, 1.3, 2.1)
    assert segmentation.hd95(pred, truth, spacing) == pytest.approx(medpy.hd95(pred, truth, voxelspacing=spacing))
    assert segmentation.assd(pred, truth, spacing) == pytest.approx(medpy.assd(pred, truth, voxelspacing=spacing))
    assert segmentation.dice(pred, truth) == pytest.approx(medpy.dc(pred, truth))
    assert segmentation.iou(pred, truth) == pytest.approx(medpy.jc(pred, truth))
    together = segmentation.scores(pred, truth, spacing)  # one pass over the surfaces gives the same numbers
    assert together["hd95"] == segmentation.hd95(pred, truth, spacing)
    assert together["assd"] == segmentation.assd(pred, truth, spacing)
    assert together["nsd"] == segmentation.nsd(pred, truth, spacing=spacing)
    assert together["boundary_f"] == segmentation.boundary_f(pred, truth, spacing=spacing)[0]


def test_hd95_and_nsd_of_concentric_discs_follow_the_radius_gap() -> None:
    spacing = 0.25
    inner, outer = disc((161, 161), 10.0, spacing), disc((161, 161), 13.0, spacing)
    assert segmentation.hd95(inner, outer, spacing) == pytest.approx(3.0, abs=2 * spacing)
    assert segmentation.assd(inner, outer, spacing) == pytest.approx(3.0, abs=2 * spacing)
    assert segmentation.nsd(inner, outer, tau=3.0 + 2 * spacing, spacing=spacing) == 1.0
    assert segmentation.nsd(inner, outer, tau=3.0 - 2 * spacing, spacing=spacing) == 0.0
    # the same discs on a grid twice as coarse: physical distances do not change with the voxel size
    coarse = segmentation.hd95(inner[::2, ::2], outer[::2, ::2], 2 * spacing)
    assert coarse == pytest.approx(3.0, abs=2 * 2 * spacing)


def test_boundary_iou_is_iou_when_the_band_covers_the_masks_and_one_when_equal() -> None:
    a, b = disc((64, 64), 12, 1.0), np.roll(disc((64, 64), 12, 1.0), 5, axis=1)
    assert segmentation.boundary_iou(a, a) == 1.0
    assert segmentation.boundary_iou(a, b, band=0.5) == pytest.approx(segmentation.iou(a, b))
    assert segmentation.boundary_iou(a, b) < segmentation.iou(a, b)  # a thin band punishes the shift more
    f, precision, recall = segmentation.boundary_f(a, b, tolerance=6 / np.hypot(64, 64))
    assert f == precision == recall == 1.0


def test_empty_masks_get_finite_worst_cases_and_bad_shapes_are_named() -> None:
    empty, full = np.zeros((20, 20), bool), disc((20, 20), 5, 1.0)
    assert segmentation.hd95(empty, full, (1.0, 2.0)) == pytest.approx(np.hypot(20, 40))
    assert segmentation.hd95(empty, empty) == 0.0 and segmentation.dice(empty, empty) == 1.0
    assert segmentation.nsd(empty, full) == 0.0
    with pytest.raises(GeometryError, match=r"shape \(20, 20\) differs"):
        segmentation.dice(full, np.zeros((20, 21)))
    with pytest.raises(GeometryError, match="spacing"):
        segmentation.hd95(full, full, (1.0, -1.0))


def test_resampling_keeps_the_field_of_view_and_a_perfect_prediction_stays_perfect() -> None:
    mask = disc((40, 30), 8, 1.0)
    fine, spacing = segmentation.resample(mask, (1.0, 2.0), 2.0)
    assert fine.shape == (80, 60) and spacing.tolist() == [0.5, 1.0]
    grids = segmentation.cross_resolution(mask, mask, (1.0, 2.0))
    assert set(grids) == {0.5, 1.0, 2.0}
    assert all(row["dice"] == 1.0 and row["hd95"] == 0.0 and row["boundary_iou"] == 1.0 for row in grids.values())


def test_elliptic_fourier_coefficients_match_pyefd() -> None:
    rng = np.random.default_rng(0)
    theta = np.sort(rng.uniform(0, 2 * np.pi, 60))
    r = 5 + np.cos(3 * theta) + rng.normal(0, 0.2, 60)
    points = np.column_stack([r * np.cos(theta) + 7, r * np.sin(theta) - 2])
    ours = contours.fit(points, 15)
    theirs = pyefd.elliptic_fourier_descriptors(np.vstack([points, points[:1]]), order=15, normalize=False)
    np.testing.assert_allclose(ours, theirs, atol=1e-10)
    np.testing.assert_allclose(contours.offset(points), np.asarray(
        pyefd.calculate_dc_coefficients(np.vstack([points, points[:1]]))), atol=1e-9)
    # with many harmonics the closed-form area approaches the polygon's
    assert contours.area(contours.fit(points, 200)) == pytest.approx(contours.polygon_area(points), rel=1e-3)


def test_a_circles_fourier_area_is_pi_r_squared_and_ef_and_volume_are_closed_forms() -> None:
    theta = np.linspace(0, 2 * np.pi, 2000, endpoint=False)
    circle = np.column_stack([4 * np.cos(theta), 4 * np.sin(theta)])
    coefficients = contours.fit(circle, 10)
    assert contours.area(coefficients) == pytest.approx(np.pi * 16, rel=1e-5)
    assert np.abs(coefficients[1:]).max() < 1e-4  # a circle is its first harmonic
    assert contours.volume([10.0, 20.0, 30.0], 8.0) == 480.0
    assert contours.ejection_fraction(120.0, 48.0) == pytest.approx(60.0)
    bigger = np.column_stack([5 * np.cos(theta), 5 * np.sin(theta)])
    assert contours.hausdorff(circle, bigger) == pytest.approx(1.0, abs=1e-4)
    assert contours.mean_distance(circle, bigger) == pytest.approx(1.0, abs=1e-4)


def test_the_phantoms_areas_volumes_and_ef_are_exact() -> None:
    subject = phantom.make_subject(3)
    theta = np.linspace(0, 2 * np.pi, 4000, endpoint=False)
    z = 20.0
    assert contours.polygon_area(subject.endo(z, 0, theta)) == pytest.approx(float(subject.endo_area(z, 0)), rel=1e-5)
    depths = np.linspace(0, subject.length[0], 20001)
    integral = np.trapezoid(subject.endo_area(depths, 0), depths) / 1000
    assert subject.volume(0) == pytest.approx(integral, rel=1e-6)
    assert 100 * (1 - subject.volume(phantom.ES_FRAME) / subject.volume(0)) == pytest.approx(subject.ef)
    noiseless = phantom.estimate(subject, 8, noise=0.0)
    assert noiseless["ef"] == pytest.approx(subject.ef, abs=1.0)  # disc summation and sampling only


def test_the_population_mean_collapses_and_the_truth_does_not() -> None:
    rng = np.random.default_rng(0)
    truth = rng.normal(size=(12, 5, 4, 3))
    mean = np.broadcast_to(truth.mean(axis=0), truth.shape)
    collapsed = motion.scores(mean, truth)
    assert collapsed["collapse_ratio"] == pytest.approx(0.0, abs=1e-12)
    assert collapsed["specificity"] == 0.0 and collapsed["skill"] == pytest.approx(0.0, abs=1e-12)
    assert collapsed["pairwise_ratio"] == pytest.approx(0.0, abs=1e-12)
    perfect = motion.scores(truth, truth)
    assert perfect["collapse_ratio"] == pytest.approx(1.0) and perfect["specificity"] == pytest.approx(1.0)
    assert perfect["skill"] == 1.0 and perfect["identification"] == 1.0 and perfect["pairwise_r"] == pytest.approx(1)
    halfway = motion.scores((truth + mean) / 2, truth)
    assert halfway["collapse_ratio"] == pytest.approx(0.5) and halfway["specificity"] == pytest.approx(1.0)
    shuffled = motion.scores(truth[::-1], truth)  # diverse but not individual: full spread, no specificity
    assert shuffled["collapse_ratio"] == pytest.approx(1.0) and shuffled["specificity"] < 0.5


def grid_points(spacing: float = 1.0) -> surfaces.Points:
    axis = np.arange(6) * spacing
    return surfaces.Points(np.stack(np.meshgrid(axis, axis, axis[:3], indexing="ij"), -1).reshape(-1, 3))


def test_chamfer_of_a_shifted_copy_is_the_shift_unaligned_and_zero_aligned() -> None:
    truth = grid_points()
    shift = np.array([0.06, -0.08, 0.0])  # |shift| = 0.1, far below the 1.0 point spacing
    moved = surfaces.Points(truth.xyz + shift)
    unit = np.linalg.norm(np.ptp(truth.xyz, axis=0))
    raw = surfaces.scores(moved, truth, aligned=False)
    assert raw["chamfer_l1"] * unit == pytest.approx(0.1)
    assert raw["accuracy"] == pytest.approx(raw["completeness"])
    aligned = surfaces.scores(moved, truth, aligned=True)
    assert aligned["chamfer_l1"] == pytest.approx(0.0, abs=1e-9) and aligned["fscore"] == 1.0


def test_umeyama_recovers_a_similarity_and_alignment_undoes_an_unknown_pose() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 3)) * [3, 2, 1]
    rotation = Rotation.random(random_state=2).as_matrix()
    s, r, t = surfaces.umeyama(x, 1.7 * x @ rotation.T + [1, 2, 3])
    assert s == pytest.approx(1.7) and np.allclose(r, rotation) and np.allclose(t, [1, 2, 3])
    truth = surfaces.Points(x, None)
    posed = truth.moved(0.6, Rotation.random(random_state=5).as_matrix(), np.array([10.0, -4.0, 2.0]))
    assert surfaces.scores(posed, truth, aligned=False)["fscore"] == 0.0
    assert surfaces.scores(posed, truth)["chamfer_l1"] == pytest.approx(0.0, abs=1e-6)


def test_the_evaluate_modules_give_the_families_numbers() -> None:
    from neurips26.methods.geometry.evaluators import load

    pred, truth, spacing = blobs(3, (20, 24)), blobs(4, (20, 24)), [1.0, 0.5]
    got = load("geometry_segmentation").compute(predictions=[pred.astype(int).tolist()],
                                                 references=[truth.astype(int).tolist()], spacing=spacing)
    assert got == pytest.approx(segmentation.scores(pred, truth, spacing))
    rng = np.random.default_rng(0)
    subjects = rng.normal(size=(6, 30))
    collapsed = load("geometry_motion").compute(predictions=list(np.broadcast_to(subjects.mean(0), subjects.shape)),
                                                references=list(subjects))
    assert collapsed["collapse_ratio"] == pytest.approx(0.0, abs=1e-12)
    x = rng.normal(size=(200, 3))
    shifted = load("geometry_surfaces").compute(predictions=[(x + 0.5).tolist()], references=[x.tolist()])
    assert shifted["chamfer_l1"] == pytest.approx(0.0, abs=1e-9)
