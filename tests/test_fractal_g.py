"""Fractal-G's named components (router, area-aware graph, implicit renderer), its data and its command."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch
from neurips26.methods.geometry.core import GeometryError
from neurips26.methods.geometry.fractal_g.data import folder, shape
from neurips26.methods.geometry.fractal_g.graph import AreaAwareMessagePassing, aggregate, neighbourhood
from neurips26.methods.geometry.fractal_g.renderer import TopologyAwareImplicitRenderer
from neurips26.methods.geometry.fractal_g.router import UncertaintyAwareFissionRouter, predictive_uncertainty
from neurips26.methods.geometry.fractal_g.train import evaluate_checkpoint, train
from neurips26.methods.geometry.segdata import make_shape, render
from PIL import Image
from typer.testing import CliRunner

from neurips26.cli import app

torch.set_num_threads(1)


def _ring_logits(size: int = 64, radius: float = 0.3) -> torch.Tensor:
    """Logits of a disc: large inside and outside, near zero (uncertain) along its circle."""
    c = (torch.arange(size) + 0.5) / size - 0.5
    y, x = torch.meshgrid(c, c, indexing="ij")
    return ((radius - torch.hypot(x, y)) * 60)[None, None]


def _routed(seed: int = 0, size: int = 64, channels: int = 6):
    torch.manual_seed(seed)
    features = torch.randn(2, channels, size, size)
    uncertainty = predictive_uncertainty(_ring_logits(size)).expand(2, 1, size, size)
    return features, UncertaintyAwareFissionRouter(root=8, levels=3)(features, uncertainty)


def test_router_puts_more_nodes_where_uncertainty_is_higher():
    size = 64
    ramp = ((torch.arange(size) + 0.5) / size).expand(size, size)[None, None]  # uncertainty grows left to right
    graph = UncertaintyAwareFissionRouter(root=8, levels=3)(torch.zeros(1, 1, size, size), ramp)
    right = graph.centre[:, 1] > 0.5
    assert right.sum() > 3 * (~right).sum()
    assert graph.area[right].mean() < graph.area[~right].mean()
    # along a disc's boundary, where the backbone is unsure, nodes are denser than anywhere else
    _, ring = _routed()
    r = torch.hypot(ring.centre[:, 0] - 0.5, ring.centre[:, 1] - 0.5)
    near = (r - 0.3).abs() < 0.06
    band_area = math.pi * ((0.36) ** 2 - (0.24) ** 2)
    assert near.sum() / band_area > 3 * (~near).sum() / (1 - band_area)
    assert ring.level[near].float().mean() > ring.level[~near].float().mean() + 1


def test_router_cells_partition_the_grid_and_carry_their_mean_features():
    features, graph = _routed()
    b, _, h, w = features.shape
    assert (graph.index >= 0).all()
    pixels = torch.bincount(graph.index.reshape(-1), minlength=graph.n_nodes).double()
    assert torch.allclose(pixels, graph.area.double() * h * w)  # each node holds exactly its cell's pixels
    assert math.isclose(float(graph.area.sum()), b, rel_tol=1e-6)  # the cells tile each image once
    for node in (0, graph.n_nodes // 2, graph.n_nodes - 1):
        inside = graph.index[graph.batch[node]] == node
        expected = features[graph.batch[node]][:, inside].mean(1)
        assert torch.allclose(graph.features[node], expected, atol=1e-5)
    # the same shape at twice the resolution gives the same layout in field-of-view units
    _, fine = _routed(size=128)
    assert fine.n_nodes > graph.n_nodes
    assert abs(float(fine.area[fine.level > 0].sum()) - float(graph.area[graph.level > 0].sum())) < 0.35


def test_neighbourhood_links_touching_cells_and_each_node_to_itself():
    features = torch.zeros(1, 1, 32, 32)
    flat = UncertaintyAwareFissionRouter(root=8, levels=3, min_uncertainty=0.5)(features, torch.zeros(1, 1, 32, 32))
    assert flat.n_nodes == 16 and (flat.level == 0).all()  # nothing uncertain: the root cells only
    edges = neighbourhood(flat)
    degree = torch.bincount(edges[1], minlength=16)
    assert degree.tolist() == [4, 6, 6, 4, 6, 9, 9, 6, 6, 9, 9, 6, 4, 6, 6, 4]  # 8-neighbours + itself
    assert ((edges[0] == edges[1]).sum()) == 16


def test_message_passing_with_equal_areas_reduces_to_the_plain_graph():
    features, graph = _routed()
    edges = neighbourhood(graph)
    torch.manual_seed(1)
    layer = AreaAwareMessagePassing(dim=6)
    plain = AreaAwareMessagePassing(dim=6, area_aware=False)
    plain.load_state_dict(layer.state_dict())
    h = torch.randn(graph.n_nodes, 6)
    equal = dataclasses.replace(graph, side=torch.full_like(graph.side, 0.05))
    assert torch.allclose(layer(h, equal, edges), plain(h, graph, edges), atol=1e-6)
    assert not torch.allclose(layer(h, graph, edges), plain(h, graph, edges), atol=1e-3)  # areas differ here
    # the weighted mean of a node's neighbours, by hand
    values = torch.randn(edges.shape[1], 3)
    weights = graph.area[edges[0]]
    node = int(edges[1][len(edges[1]) // 2])
    mine = edges[1] == node
    expected = (values[mine] * weights[mine, None]).sum(0) / weights[mine].sum()
    assert torch.allclose(aggregate(values, edges, weights, graph.n_nodes)[node], expected, atol=1e-6)


@pytest.mark.parametrize("gated", [True, False])
def test_implicit_renderer_returns_the_input_field_on_the_nodes(gated):
    _, graph = _routed()
    edges = neighbourhood(graph)
    torch.manual_seed(2)
    renderer = TopologyAwareImplicitRenderer(dim=5, gated=gated)
    h = torch.randn(graph.n_nodes, 5)
    at_nodes = renderer.query(h, graph, edges, graph.batch, graph.centre)
    assert torch.allclose(at_nodes, h, atol=1e-4)
    constant = renderer(torch.ones(graph.n_nodes, 5) * 3.0, graph, edges, size=(40, 24))
    assert constant.shape == (2, 5, 40, 24) and torch.allclose(constant, torch.full_like(constant, 3.0))
    field = renderer(h, graph, edges)
    low, high = h.min(0).values, h.max(0).values  # a convex blend: never outside the nodes' range
    assert (field >= low[None, :, None, None] - 1e-5).all() and (field <= high[None, :, None, None] + 1e-5).all()


def test_generated_shapes_render_exactly_as_the_project_generator_renders_them():
    for seed in (0, 5, 1_000_004):
        fast = shape(seed)
        reference = make_shape(seed, fast.hurst, fast.noise)
        for size in (24, 64):
            for ours, theirs in zip(render(fast, size), render(reference, size), strict=True):
                assert np.array_equal(ours, theirs)


def _png_folder(root, n: int = 10):
    root.mkdir(exist_ok=True)
    (root / "images").mkdir()
    (root / "masks").mkdir()
    for i in range(n):
        image, truth, _ = render(shape(i), 50)
        Image.fromarray((np.clip(image, 0, 1) * 255).astype(np.uint8)).save(root / "images" / f"p{i}.png")
        Image.fromarray(truth.astype(np.uint8) * 255).save(root / "masks" / f"p{i}.png")
    return root


def test_a_folder_of_image_and_mask_pngs_is_read_and_split(tmp_path):
    _png_folder(tmp_path)
    Image.fromarray(np.zeros((5, 5), np.uint8)).save(tmp_path / "images" / "no-mask.png")
    sets = folder(tmp_path, 32, (0.5, 1.0, 2.0))
    trained, held_out = {s.name for s in sets.train}, {s.name for s in sets.test[1.0]}
    assert trained | held_out == {f"p{i}.png" for i in range(10)} and not trained & held_out
    assert sets.train and sets.test[1.0] and sets.describe()["kind"] == "real"
    assert all(s.image.shape == (32, 32) and s.truth.dtype == bool and s.truth.any() for s in sets.train)
    assert [s.image.shape for s in sets.test[2.0]] == [(64, 64)] * len(sets.test[1.0])
    assert sets.train[0].image.min() >= 0 and sets.train[0].image.max() <= 1


def test_geometry_train_fractal_g_tiny_writes_a_checkpoint_and_metrics(tmp_path):
    out = tmp_path / "fg"
    result = CliRunner().invoke(app, ["geometry", "train", "fractal-g", "--scale", "tiny", "--out", str(out),
                                      "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert (out / "checkpoint.pt").is_file()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["method"] == "fractal-g" and metrics["scale"] == "tiny" and metrics["device"] == "cpu"
    assert metrics["data"]["kind"] == "generated"
    rows = {r["arm"]: r for r in metrics["rows"]}
    assert set(rows) == {"fractal-g", "unet", "otsu", "active_contour"}
    assert rows["fractal-g"]["train_steps"] == rows["unet"]["train_steps"] > 0
    for row in rows.values():
        assert 0 <= row["nsd"] <= 1 and 0 <= row["boundary_iou"] <= 1 and row["hd95"] >= 0 and "nsd@2x" in row
    assert rows["fractal-g"]["nodes_per_image"] < rows["fractal-g"]["pixels_per_image"]
    again = CliRunner().invoke(app, ["geometry", "eval", "--trained", str(out), "--json"])
    assert again.exit_code == 0, again.output
    rescored = {r["arm"]: r for r in json.loads(again.output)["rows"]}
    assert rescored["fractal-g"]["nsd"] == pytest.approx(rows["fractal-g"]["nsd"])
    assert rescored["unet"]["hd95@0.5x"] == pytest.approx(rows["unet"]["hd95@0.5x"])


def test_training_on_a_users_png_folder_records_it_and_rescores_from_it(tmp_path):
    masks = _png_folder(tmp_path / "pngs")
    metrics = train("tiny", tmp_path / "out", device="cpu", data=masks)
    assert metrics["data"]["kind"] == "real" and metrics["data"]["source"] == str(masks)
    assert metrics["data"]["train"] + metrics["data"]["test"] == 10
    rescored = evaluate_checkpoint(tmp_path / "out", device="cpu")
    assert rescored["rows"][0]["boundary_iou"] == pytest.approx(metrics["rows"][0]["boundary_iou"])
    with pytest.raises(GeometryError, match="images/ and masks/"):
        train("tiny", tmp_path / "bad", device="cpu", data=tmp_path / "out")
