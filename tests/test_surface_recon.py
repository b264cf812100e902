"""Unposed surface reconstruction's components: the renderer, the pointmap prior's interface, surfel voting, the
cross-attention ray regressor, raylet refinement, and ``neurips26 geometry train surface``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import trimesh
from neurips26.methods.geometry.core import GeometryError
from neurips26.methods.geometry.surface_recon.experiment import ARMS, MESHES, load_meshes
from neurips26.methods.geometry.surface_recon.pipeline import BASELINE, METHOD, Scene, arrays, context_views, contexts
from neurips26.methods.geometry.surface_recon.prior import (
    PointmapPrior,
    Pointmaps,
    RenderedDepthPrior,
    pointmaps_from_depth,
)
from neurips26.methods.geometry.surface_recon.ray_regressor import RayRegressor, RegressorConfig, predict
from neurips26.methods.geometry.surface_recon.raylet import refine
from neurips26.methods.geometry.surface_recon.rays import gather
from neurips26.methods.geometry.surface_recon.render import canonical, look_at, render
from neurips26.methods.geometry.surface_recon.surfels import recover_cameras, surfels
from neurips26.methods.geometry.surface_recon.voting import vote
from typer.testing import CliRunner

from neurips26.cli import app

torch.set_num_threads(1)


class ExactPrior:
    """A user's pointmap model plugged in: here, one that is never wrong."""

    def __call__(self, views):
        return pointmaps_from_depth(views.depth, views.intrinsics, views.poses)


def test_the_rasterised_depth_lies_on_the_mesh_and_both_priors_fit_the_interface():
    box = canonical(trimesh.creation.box([1.0, 0.6, 0.3]))
    views = render(box, 3, 32, seed=1)
    maps = ExactPrior()(views)
    half = box.extents / 2
    canonical_points = maps.world[maps.valid] @ views.poses[0, :3, :3].T + views.poses[0, :3, 3]
    on_surface = np.abs(np.abs(canonical_points) - half)
    assert maps.valid.mean() > 0.1 and np.all(on_surface.min(axis=1) < 1e-9)  # every point on a face of the box
    assert isinstance(ExactPrior(), PointmapPrior) and isinstance(RenderedDepthPrior(), PointmapPrior)
    noisy = RenderedDepthPrior(seed=3)(views)
    assert isinstance(noisy, Pointmaps) and np.array_equal(noisy.valid, maps.valid)


def test_cameras_recovered_from_exact_pointmaps_are_the_renderers():
    views = render(canonical(trimesh.creation.icosphere(3)), 4, 32, seed=2)
    cams = recover_cameras(ExactPrior()(views))
    relative = np.linalg.inv(views.poses[0]) @ views.poses
    assert np.allclose(cams.focal, views.intrinsics[0, 0], rtol=1e-9)
    assert np.allclose(cams.rotation, relative[:, :3, :3], atol=1e-9)
    assert np.allclose(cams.centre, relative[:, :3, 3], atol=1e-9)


def test_surfel_voting_is_invariant_to_the_order_of_views():
    views = render(canonical(trimesh.creation.capsule(0.6, 0.3)), 5, 32, seed=4)
    maps = RenderedDepthPrior(seed=5)(views)
    order = np.array([3, 0, 4, 2, 1])  # view order[i] comes i-th
    moved = Pointmaps(maps.local[order], maps.world[order], maps.confidence[order])
    sf, cams = surfels(maps, recover_cameras(maps)), recover_cameras(maps)
    sf2, cams2 = surfels(moved, recover_cameras(moved)), recover_cameras(moved)
    for query in range(5):
        first = vote(sf, cams, query)
        second = vote(sf2, cams2, int(np.flatnonzero(order == query)[0]))
        assert np.allclose(second.scores, first.scores[order])
        assert [int(order[v]) for v in second.references] == list(first.references)
        assert np.array_equal(second.agree, first.agree[order]) and np.array_equal(second.lookup, first.lookup[order])
        assert np.allclose(second.support, first.support)
    assert len(vote(sf, cams, 0).references) > 0


def test_the_ray_regressors_surface_passes_through_the_priors_points_where_they_agree():
    poses = np.stack([look_at(d, r) for d, r in (([0.1, 0.2, 1], 0.3), ([0.5, -0.2, 1], 1.0), ([-0.4, 0.4, 1], 2.0))])
    square = canonical(trimesh.Trimesh([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], [[0, 1, 2], [0, 2, 3]]))
    views = render(square, 3, 24, poses=poses)  # a plane seen by three cameras, none near grazing
    maps = ExactPrior()(views)
    cams = recover_cameras(maps)
    sf = surfels(maps, cams)
    votes = [vote(sf, cams, q) for q in range(3)]
    for seed in (0, 1):
        torch.manual_seed(seed)
        model = RayRegressor(RegressorConfig(dim=16, heads=2))
        for q in range(3):
            ctx = gather(sf, cams, votes[q], (q, *(v for v in range(3) if v != q)))
            depth = predict(model, arrays([ctx]), torch.device("cpu")).double().numpy()
            points = depth[:, None] * ctx.directions * ctx.scale
            own = cams.to_camera(sf.xyz[q].reshape(-1, 3)[ctx.pixels], q)
            assert len(points) > 50 and np.allclose(points, own, atol=1e-5)
    noisy = Pointmaps(maps.local, maps.world + 0.01 * np.random.default_rng(0).normal(size=maps.world.shape),
                      maps.confidence)
    sf_noisy = surfels(noisy, cams)
    ctx = gather(sf_noisy, cams, vote(sf_noisy, cams, 0), (0, 1, 2))
    depth = predict(model, arrays([ctx]), torch.device("cpu")).numpy()
    low, high = np.where(ctx.mask, ctx.depths, np.inf).min(1), np.where(ctx.mask, ctx.depths, -np.inf).max(1)
    assert np.all((depth >= low - 2 * (high - low) - 1e-6) & (depth <= high + 2 * (high - low) + 1e-6))


def test_raylet_normals_are_the_analytic_normals_of_a_sphere():
    rng = np.random.default_rng(0)
    centre, radius = np.array([0.1, -0.2, 3.0]), 0.8
    directions = centre / np.linalg.norm(centre) + 0.12 * rng.uniform(-1, 1, (200, 3)) * [1, 1, 0]
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)  # rays from the origin that meet the sphere
    b = directions @ centre
    t_true = b - np.sqrt(b ** 2 - (centre @ centre - radius ** 2))  # the near hit
    hit = t_true[:, None] * directions
    around = hit[:, None] + 0.05 * rng.normal(size=(200, 30, 3))
    positions = centre + radius * (around - centre) / np.linalg.norm(around - centre, axis=-1, keepdims=True)
    normals = (positions - centre) / radius
    t0 = t_true * (1 + rng.uniform(-0.03, 0.03, 200))
    depth, normal, found = refine(directions, t0, positions, normals, np.ones((200, 30)), footprint=0.02)
    assert found.all() and np.allclose(depth, t_true, atol=1e-9)
    assert np.allclose(normal, (depth[:, None] * directions - centre) / radius, atol=1e-9)


@pytest.mark.skipif(not MESHES.is_dir(), reason="needs the real meshes in ../shared/data/meshes")
def test_geometry_train_surface_tiny_writes_a_checkpoint_and_metrics_that_eval_reproduces(tmp_path):
    out = tmp_path / "surface"
    result = CliRunner().invoke(app, ["geometry", "train", "surface", "--scale", "tiny", "--out", str(out),
                                      "--device", "cpu"])
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert {"method", "scale", "seed", "device", "data", "rows"} <= set(metrics)
    assert metrics["method"] == "surface" and metrics["scale"] == "tiny" and metrics["device"] == "cpu"
    assert set(metrics["data"]) == {"real", "generated"} and metrics["data"]["real"]["test"]
    assert not set(metrics["data"]["real"]["train"]) & set(metrics["data"]["real"]["test"])
    rows = {r["arm"]: r for r in metrics["rows"]}
    assert set(rows) == set(ARMS) and rows[METHOD]["train_steps"] == rows[BASELINE]["train_steps"] > 0
    assert all(0 < r["chamfer_l1"] < 1 and 0 <= r["fscore"] <= 1 for r in rows.values())
    checkpoint = torch.load(out / "checkpoint.pt", weights_only=True)
    assert set(checkpoint["arms"]) == {METHOD, BASELINE} and checkpoint["test"] == metrics["data"]["real"]["test"]
    again = CliRunner().invoke(app, ["geometry", "eval", "--trained", str(out), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["rows"][0]["chamfer_l1"] == pytest.approx(rows[METHOD]["chamfer_l1"])


def test_the_method_reads_only_its_reference_views_and_the_ablation_reads_them_all():
    views = render(canonical(trimesh.creation.icosphere(2)), 4, 20, seed=6)
    maps = RenderedDepthPrior(seed=1)(views)
    cams = recover_cameras(maps)
    sf = surfels(maps, cams)
    scene = Scene("ball", views, maps, cams, sf, [vote(sf, cams, q) for q in range(4)], None, 1.0)
    for q in range(4):
        assert context_views(scene, q, METHOD) == (q, *scene.votes[q].references)
        assert sorted(context_views(scene, q, BASELINE)) == [0, 1, 2, 3]
    method, ablation = contexts(scene, METHOD), contexts(scene, BASELINE)
    assert all(c.features[..., 5].any() for c in method) and not any(c.features[..., 5:7].any() for c in ablation)
    assert [len(c.pixels) for c in method] == [len(c.pixels) for c in ablation]


def test_a_missing_mesh_folder_is_named(tmp_path):
    with pytest.raises(GeometryError, match="no mesh folder"):
        load_meshes(Path(tmp_path / "nowhere"))
