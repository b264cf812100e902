"""Time2Track's components: the learnable wavelet decomposition, the delay it gives, the delay-aware tokens, the
diffusion sampler, and `neurips26 geometry train time2track` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from neurips26.methods.geometry.time2track import data, diffusion, tokens, wavelet
from neurips26.methods.geometry.time2track.baseline import GenericMotionDiffusion
from typer.testing import CliRunner

from neurips26.cli import app


def test_the_wavelet_decomposition_reconstructs_its_input_whatever_its_filters() -> None:
    torch.manual_seed(0)
    model = wavelet.LearnableWavelet()
    x = torch.randn(4, data.CONTEXT)
    for tol in (1e-5, 1e-9):  # as initialised (LeGall 5/3); then, in float64, with filters moved far from it
        details, approx = model(x)
        assert [d.shape[-1] for d in details] == [128, 64, 32, 16] and approx.shape[-1] == 16
        assert torch.allclose(model.inverse(details, approx), x, atol=tol)
        assert torch.allclose(model.bands(x).sum(dim=1), x, atol=tol)
        model, x = model.double(), x.double()
        with torch.no_grad():
            model.predict.add_(torch.randn_like(model.predict))
            model.update.add_(torch.randn_like(model.update))
    fresh = wavelet.LearnableWavelet()
    t = torch.arange(data.CONTEXT) / data.FS
    slow, fast = torch.sin(2 * torch.pi * 1.0 * t)[None], torch.sin(2 * torch.pi * 40.0 * t)[None]
    assert fresh.bands(slow)[0, -1].pow(2).sum() > 0.9 * slow.pow(2).sum()  # 1 Hz: the approximation
    assert fresh.bands(fast)[0, 0].pow(2).sum() > 0.8 * fast.pow(2).sum()  # 40 Hz: the finest detail


@pytest.mark.parametrize(("r_peak", "planted"), [(0.113, 0.094), (0.050, 0.031), (0.178, 0.1237), (0.020, 0.165)])
def test_the_planted_delay_of_a_synthetic_subject_is_recovered_within_one_sample(r_peak: float,
                                                                                 planted: float) -> None:
    beats = np.array([r_peak - 0.83, r_peak, r_peak + 0.81])
    ecg = data.synthetic_ecg(beats, width_s=0.012, noise_mv=0.01, seed=1)
    state = data.contraction(beats, planted, 0.30, data.frame_times())
    motion = data.landmark_motion(state, radius=25.0, shortening=0.22, torsion=0.2, longitudinal=0.12)
    motion = motion + np.random.default_rng(2).normal(0, 0.02, motion.shape)
    acts = wavelet.DelayModel.activations(torch.tensor(ecg)[None])[0]
    assert np.abs(acts - beats).max() < 1 / data.FS
    assert abs(wavelet.recover_delay(acts, motion) - planted) <= 1 / data.FS


def test_the_delay_aware_tokens_restart_the_mechanical_phase_one_delay_after_each_activation() -> None:
    acts, emd = np.array([-0.7, 0.1, 0.9]), 0.12
    phase, share = tokens.mechanical_phase(acts, emd)
    times = data.frame_times()
    onset = int(np.ceil((0.1 + emd) / data.FRAME_S - 1e-9))  # first frame at or after the contraction's onset
    assert phase[onset] == pytest.approx(times[onset] - 0.22) and phase[onset - 1] == pytest.approx(
        times[onset - 1] - (-0.7 + emd))
    assert share[onset] == pytest.approx(phase[onset] / 0.8)
    bands = np.zeros((5, data.CONTEXT))
    bands[0, data.CONTEXT // 2 + 10] = 1.0  # an electrical event 100 ms after the window start
    delayed = tokens.delayed_bands(bands, emd)  # frame k reads the ECG at t_k - emd
    frame = 6  # t = 0.24 s reads the ECG at 0.12 s: 2 samples after the event
    assert delayed[frame].reshape(5, -1)[0, list(tokens.TAPS).index(-2)] == pytest.approx(1.0)
    features = tokens.delay_aware_features([acts], np.array([emd]), bands[None])
    assert features.shape == (1, data.FRAMES, 2 * len(tokens.PERIODS) * 2 + 1 + 5 * len(tokens.TAPS))


def test_the_diffusion_sampler_is_deterministic_under_a_seed() -> None:
    torch.manual_seed(0)
    model = GenericMotionDiffusion(frame_dim=6, width=16, layers=1).eval()
    feats = torch.tensor(GenericMotionDiffusion.features(3))
    ecg = torch.randn(3, data.CONTEXT)
    a = model.sample(feats, ecg, 6, seed=5)
    b = model.sample(feats, ecg, 6, seed=5)
    c = model.sample(feats, ecg, 6, seed=6)
    assert a.shape == (3, data.FRAMES, 6) and torch.equal(a, b) and not torch.allclose(a, c)
    x0 = torch.randn(8, data.FRAMES, 6)
    losses = diffusion.fit(model, x0, feats[:1].expand(8, -1, -1), torch.randn(8, data.CONTEXT), 3, seed=0)
    assert len(losses) == 3 and all(np.isfinite(losses))


def test_the_cohort_pairs_real_ecg_from_both_records_with_planted_delays(shared_data: Path) -> None:
    cohort = data.cohort(shared_data / "ecg", 20, seed=3)
    assert {record for record, _, _ in cohort.source} == set(data.RECORDS)
    assert cohort.ecg.shape == (20, data.CONTEXT) and cohort.motion.shape == (20, data.FRAMES, 24, 3)
    assert np.all((cohort.emd >= 0.03) & (cohort.emd <= 0.17)) and cohort.emd.std() > 0.005
    assert all(np.any(np.abs(b - j) < 1e-9) for b, j in zip(cohort.beats, cohort.r_offset, strict=True))


def test_geometry_train_time2track_tiny_writes_a_checkpoint_and_metrics_that_eval_reproduces(
        shared_data: Path, tmp_path: Path, one_torch_thread: None) -> None:
    out = tmp_path / "t2t"
    result = CliRunner().invoke(app, ["geometry", "train", "time2track", "--scale", "tiny", "--out", str(out),
                                      "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert (out / "checkpoint.pt").is_file()
    metrics = json.loads((out / "metrics.json").read_text())
    assert {"method", "scale", "seed", "device", "data", "rows"} <= set(metrics)
    assert metrics["method"] == "time2track" and metrics["scale"] == "tiny" and metrics["device"] == "cpu"
    assert {"real", "generated"} <= set(metrics["data"])
    arms = {row["arm"]: row for row in metrics["rows"]}
    assert set(arms) == {"time2track", "generic_diffusion", "population_mean"}
    assert arms["population_mean"]["skill"] == pytest.approx(0, abs=1e-9)
    assert arms["population_mean"]["collapse_ratio"] == pytest.approx(0, abs=1e-9)
    again = CliRunner().invoke(app, ["geometry", "eval", "--trained", str(out), "--json"])
    assert again.exit_code == 0, again.output
    rescored = {row["arm"]: row for row in json.loads(again.output)["rows"]}
    for arm in ("time2track", "generic_diffusion"):
        assert rescored[arm]["skill"] == pytest.approx(arms[arm]["skill"], abs=1e-5)
