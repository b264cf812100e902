"""Fourier Contour Learning's components: closed-form areas and volumes, cross-slice attention, anatomy queries,
the phantom stacks, and ``neurips26 geometry train fourier-contours`` end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from neurips26.methods.geometry import contours, phantom
from neurips26.methods.geometry.fourier_contours import data, measures
from neurips26.methods.geometry.fourier_contours.anatomy_decoder import AnatomyQueryDecoder
from neurips26.methods.geometry.fourier_contours.cross_slice import CrossSliceAttention
from neurips26.methods.geometry.fourier_contours.experiment import SETTINGS
from neurips26.methods.geometry.fourier_contours.model import FCLConfig, FourierContourNet
from typer.testing import CliRunner

from neurips26.cli import app

torch.set_num_threads(1)


@pytest.mark.parametrize("subject_id", [0, 1, 2])
def test_fourier_area_of_a_contour_equals_its_polygon_area_within_one_percent(subject_id: int) -> None:
    subject = phantom.make_subject(subject_id)
    for z in phantom.slice_depths(subject, 0)[:-1]:  # the apex slice is a few mm across: left to the mask test
        polygon = subject.endo(z, 0, np.linspace(0, 2 * np.pi, 200, endpoint=False))
        coefficients = torch.as_tensor(contours.fit(data.canonical(polygon), 10))
        fourier = float(measures.area(coefficients))
        assert fourier > 0  # the canonical orientation is counter-clockwise: a positive area
        assert fourier == pytest.approx(contours.polygon_area(polygon), rel=0.01)
        assert fourier == pytest.approx(contours.area(coefficients.numpy()), rel=1e-12)


def test_the_area_of_a_mask_traced_contour_matches_the_mask_and_its_gradient_is_the_closed_form() -> None:
    grid = data.Grid(48, 2.0)
    stacks = data.make_stacks([3], [0], grid, 12, seed=0, mask_subjects={3}, volume_frames=(0,))
    ok = stacks.target_ok[0]
    areas = measures.area(stacks.coefficients[0, ok].double()) * grid.half ** 2
    pixels = stacks.masks[0, ok].flatten(1).sum(1) * grid.pixel ** 2
    assert torch.allclose(areas, pixels.double(), rtol=0.06)  # a traced boundary vs its pixel count
    assert torch.allclose(areas, stacks.areas[0, ok].double(), rtol=0.08)  # ... vs the exact area
    c = stacks.coefficients[0, 0].double().requires_grad_()
    measures.area(c).backward()
    a, b, cc, d = c.detach().unbind(-1)  # dA/da = π d, dA/db = -π c, dA/dc = -π b, dA/dd = π a
    assert torch.allclose(c.grad, torch.pi * torch.stack([d, -cc, -b, a], -1))


def test_volume_is_the_disc_sum_over_valid_slices_and_points_follow_the_reference_reconstruction() -> None:
    areas = torch.tensor([[100.0, 200.0, 50.0, 999.0]])
    valid = torch.tensor([[True, True, True, False]])
    assert float(measures.volume(areas, valid, 8.0)) == 350.0 * 8
    coefficients = np.random.default_rng(0).normal(size=(5, 4))
    ours = measures.points(torch.tensor([1.5, -2.0]), torch.as_tensor(coefficients), 64).numpy()
    assert np.allclose(ours, contours.reconstruct(coefficients, (1.5, -2.0), 64))


def test_stacks_hold_exact_volumes_and_masks_only_where_the_label_split_allows() -> None:
    grid = data.Grid(32, 3.0)
    stacks = data.make_stacks([0, 1, 2], [0, 4, 8], grid, 4, seed=1, mask_subjects={0}, volume_frames=(0, 8))
    subject = phantom.make_subject(1, seed=1)
    i = int(np.nonzero((stacks.subject.numpy() == 1) & (stacks.frame.numpy() == 8))[0][0])
    exact = subject.endo_area(phantom.slice_depths(subject, 8), 8)
    assert float(stacks.volumes[i]) == pytest.approx(exact.sum() * phantom.SLICE / 1000, rel=1e-6)
    assert int(stacks.valid[i].sum()) == len(exact)
    assert stacks.has_mask.tolist() == [s == 0 and f in (0, 8) for s, f in zip(stacks.subject.tolist(),
                                                                                  stacks.frame.tolist(), strict=True)]
    assert stacks.has_volume.tolist() == [f in (0, 8) for f in stacks.frame.tolist()]
    assert not stacks.target_ok[~stacks.has_mask].any()  # no contour target leaks from an unlabelled stack


def test_canonical_contours_run_counter_clockwise_from_the_ray_at_angle_zero() -> None:
    theta = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    circle = np.column_stack([np.cos(theta), np.sin(theta)]) * 5 + [3, 1]
    clockwise_from_elsewhere = np.roll(circle[::-1], 13, axis=0)
    fixed = data.canonical(clockwise_from_elsewhere)
    assert np.allclose(fixed[0], [8, 1]) and fixed[1, 1] > fixed[0, 1]  # starts at angle 0, then turns upwards


def _cross_slice_inputs(seed: int = 0) -> tuple[CrossSliceAttention, torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(seed)
    block = CrossSliceAttention(dim=16, layers=2, heads=2).eval()
    x = torch.randn(2, 6, 2, 16)
    depth = torch.arange(6.0).expand(2, 6) * 8 + 4
    valid = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    return block, x, depth, valid


def test_cross_slice_attention_is_permutation_equivariant_over_slices_with_their_positions() -> None:
    block, x, depth, valid = _cross_slice_inputs()
    out = block(x, depth, valid)
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    permuted = block(x[:, perm], depth[:, perm], valid[:, perm])
    keep = valid[:, perm]
    assert torch.allclose(permuted[keep], out[:, perm][keep], atol=1e-5)
    # slices do talk to each other: changing one slice changes the others' outputs ...
    changed = x.clone()
    changed[0, 0] += torch.randn(2, 16)  # (not a constant shift: the pre-norm would remove it)
    assert not torch.allclose(block(changed, depth, valid)[0, 1:], out[0, 1:], atol=1e-4)
    # ... but a padded slice never does, and a slice at another depth is another slice (positions matter)
    padded = x.clone()
    padded[1, 4:] = 100.0
    assert torch.allclose(block(padded, depth, valid)[valid], out[valid], atol=1e-5)
    assert not torch.allclose(block(x, depth.flip(1), valid)[0], out[0], atol=1e-4)


def test_anatomy_queries_read_tokens_as_a_set_and_give_one_embedding_per_structure() -> None:
    torch.manual_seed(0)
    decoder = AnatomyQueryDecoder(dim=16, anatomies=3, layers=2, heads=2).eval()
    tokens = torch.randn(4, 25, 16)
    out = decoder(tokens)
    assert out.shape == (4, 3, 16)
    assert torch.allclose(decoder(tokens[:, torch.randperm(25)]), out, atol=1e-5)  # positions live in the tokens
    assert not torch.allclose(out[:, 0], out[:, 1], atol=1e-3)  # each structure's query reads its own


def test_the_network_outputs_a_few_coefficients_per_slice_and_starts_from_a_circle() -> None:
    cfg = FCLConfig(width=8, dim=32, levels=3, harmonics=5, anatomies=2, decoder_layers=1)
    model = FourierContourNet(cfg).eval()
    images, depth = torch.randn(2, 5, 32, 32), torch.arange(5.0).expand(2, 5) * 8
    valid = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    with torch.no_grad():
        centres, coefficients = model(images, depth, valid)
    assert centres.shape == (2, 5, 2, 2) and coefficients.shape == (2, 5, 2, 5, 4)
    assert model.outputs_per_slice == 2 * (2 + 4 * 5) < 32 * 32
    area = measures.area(coefficients[valid])
    assert torch.allclose(area, torch.full_like(area, torch.pi * 0.09), rtol=0.05)  # radius 0.3, positive


def test_cli_trains_fourier_contours_at_tiny_scale_and_rescores_the_folder(tmp_path) -> None:
    runner = CliRunner()
    out = tmp_path / "fcl"
    result = runner.invoke(app, ["geometry", "train", "fourier-contours", "--scale", "tiny", "--out", str(out),
                                 "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert (out / "checkpoint.pt").is_file()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["method"] == "fourier-contours" and metrics["scale"] == "tiny" and metrics["seed"] == 0
    assert metrics["device"] == "cpu" and metrics["data"].startswith("generated")
    rows = {row["arm"]: row for row in metrics["rows"]}
    assert set(rows) == {"fcl", "unet", "unet_volume"}
    assert {row["train_steps"] for row in rows.values()} == {SETTINGS["tiny"].steps}
    assert rows["fcl"]["outputs_per_slice"] < rows["unet"]["outputs_per_slice"]
    for row in rows.values():
        assert 0 <= row["dice"] <= 1 and row["volume_abs_error_ml"] >= 0
    again = runner.invoke(app, ["geometry", "eval", "--trained", str(out), "--json"])
    assert again.exit_code == 0, again.output
    rescored = {row["arm"]: row for row in json.loads(again.output)["rows"]}
    for arm, row in rows.items():
        assert rescored[arm]["volume_abs_error_ml"] == pytest.approx(row["volume_abs_error_ml"], rel=1e-4)
        assert rescored[arm]["dice"] == pytest.approx(row["dice"], rel=1e-4)
