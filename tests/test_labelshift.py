"""Label-shift weights: LP region vs interval Gaussian elimination, coverage on real data, PAC sets, errors, CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from neurips26.methods.labelshift import (
    Boxes,
    EmptyClassError,
    EmptyRegionError,
    LabelSetError,
    LabelShiftError,
    SingularConfusionError,
    bbse,
    clopper_pearson,
    confidence_boxes,
    conformal_thresholds,
    evaluate,
    gaussian_elimination,
    lp_region,
    rlls,
)
from neurips26.methods.labelshift.experiment import Config, population, run, summarize, synthetic
from scipy.stats import binom

REPS = 50  # per shift in the tests; the bench runs 200


def test_lp_intervals_inside_gaussian_elimination() -> None:
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(80):
        K = int(rng.integers(2, 13))
        counts, C, w = synthetic(K, int(rng.integers(300, 20000)), int(rng.integers(300, 20000)),
                                 float(rng.uniform(0.4, 0.95)), rng)
        if (counts.joint.sum(axis=0) == 0).any():
            continue
        boxes = confidence_boxes(counts, delta=float(rng.uniform(0.01, 0.3)))
        ge = gaussian_elimination(boxes)
        try:
            lp = lp_region(boxes)
        except EmptyRegionError:
            assert not boxes.contains(C, C @ w)  # only possible when a box missed the truth
            continue
        tol = 1e-6 * (1 + np.where(np.isfinite(ge.hi), ge.hi, 0))
        assert (lp.lo >= ge.lo - tol).all() and (lp.hi <= ge.hi + tol).all()
        if boxes.contains(C, C @ w):  # the linearisation is exact: truth in the boxes => w in the region
            assert ((lp.lo - 1e-6 <= w) & (w <= lp.hi + 1e-6)).all()
        checked += 1
    assert checked >= 60


def test_compact_and_joint_formulations_agree() -> None:
    rng = np.random.default_rng(1)
    for _ in range(10):
        counts, _, _ = synthetic(int(rng.integers(3, 7)), 3000, 3000, 0.8, rng)
        if (counts.joint.sum(axis=0) == 0).any():
            continue
        boxes = confidence_boxes(counts, 0.1)
        compact, joint = lp_region(boxes, "compact"), lp_region(boxes, "joint")
        # the joint form also has the (tightened) source-marginal rows, so it can only be narrower
        assert (joint.lo >= compact.lo - 1e-7).all() and (joint.hi <= compact.hi + 1e-7).all()
        assert joint.width.sum() >= 0.97 * compact.width.sum()  # ... but hardly: the column rows rarely bind
    with_marginals = confidence_boxes(counts, 0.1, source_marginals=True)
    assert with_marginals.p_lo is not None and lp_region(with_marginals).method == "lp"


def test_defaults_are_compact_with_a_k2_plus_k_union_bound() -> None:
    """The default region is the compact LP on boxes at level delta / (K^2 + K), as the README states."""
    counts, _, _ = synthetic(5, 2000, 2000, 0.8, np.random.default_rng(3))
    boxes = confidence_boxes(counts, 0.1)
    K = counts.K
    assert boxes.p_lo is None
    lo, hi = clopper_pearson(counts.joint, counts.n, 0.1 / (K * K + K))
    assert np.allclose(boxes.C_lo, lo) and np.allclose(boxes.C_hi, hi)
    marginal = confidence_boxes(counts, 0.1, source_marginals=True)
    assert np.allclose(marginal.C_lo, clopper_pearson(counts.joint, counts.n, 0.1 / (K * K + 2 * K))[0])
    default, compact = lp_region(marginal), lp_region(marginal, "compact")  # boxes with marginals: still compact
    assert np.array_equal(default.lo, compact.lo) and np.array_equal(default.hi, compact.hi)
    with pytest.raises(ValueError, match="compact or joint"):
        lp_region(boxes, "auto")


def test_clopper_pearson_textbook_values() -> None:
    lo, hi = clopper_pearson(np.array([0, 5, 10]), 10, 0.05)
    assert lo[0] == 0 and hi[2] == 1
    assert lo[1] == pytest.approx(0.1871, abs=1e-4) and hi[1] == pytest.approx(0.8129, abs=1e-4)


def test_bbse_and_rlls_recover_w_on_large_samples() -> None:
    rng = np.random.default_rng(2)
    counts, _, w = synthetic(5, 2_000_000, 2_000_000, 0.8, rng)
    assert np.abs(bbse(counts.confusion, counts.mu) - w).max() < 0.02
    assert np.abs(rlls(counts.confusion, counts.mu, counts.n) - w).max() < 0.02
    # strong regularisation shrinks towards w = 1
    shrunk = rlls(counts.confusion, counts.mu, counts.n, rho=10.0)
    assert np.allclose(shrunk, 1.0)


def test_gaussian_elimination_breaks_down_to_unbounded() -> None:
    boxes = Boxes(np.array([[0.0, 0.1], [0.1, 0.4]]), np.array([[0.2, 0.2], [0.2, 0.5]]),
                  np.array([0.2, 0.5]), np.array([0.4, 0.7]), None, None, 0.1)
    ge = gaussian_elimination(boxes)  # pivot [0, 0.2] contains 0
    assert (ge.lo == 0).all() and np.isinf(ge.hi).all()
    assert (lp_region(boxes).hi <= ge.hi).all()


@pytest.fixture(scope="module")
def digits_records() -> tuple[list[dict], Config]:
    cfg = Config()
    pop = population("digits")
    assert pop.K == 10 and pop.accuracy > 0.9
    return run(pop, "dirichlet", REPS, cfg) + run(pop, "tweak_one", REPS, cfg), cfg


def allowed_failures(reps: int, rate: float) -> int:
    """Failures a method with failure probability <= rate exceeds only with probability 1e-3."""
    return int(binom.ppf(1 - 1e-3, reps, rate))


def test_coverage_on_digits(digits_records: tuple[list[dict], Config]) -> None:
    records, cfg = digits_records
    rows = {(r["shift"], r["method"]): r for r in summarize(records, cfg)}
    for shift in ("dirichlet", "tweak_one"):
        for method in ("lp", "ge"):
            row = rows[shift, method]
            misses = round((1 - row["coverage_all"]) * row["reps"])
            assert misses <= allowed_failures(row["reps"], cfg.delta), (shift, method, row)
            assert row["coverage_class"] >= row["coverage_all"]
        assert rows[shift, "lp"]["width"] <= rows[shift, "ge"]["width"] + 1e-9
        assert rows[shift, "lp"]["width_ratio"] < 0.9  # the LP region is clearly tighter at K = 10


def test_pac_set_error_on_digits(digits_records: tuple[list[dict], Config]) -> None:
    records, cfg = digits_records
    for method, rate in (("lp", cfg.delta + cfg.delta_sets), ("ge", cfg.delta + cfg.delta_sets),
                         ("oracle", cfg.delta_sets)):
        errors = np.array([r["ps_error"] for r in records if r["method"] == method])
        assert len(errors) == 2 * REPS and not np.isnan(errors).any()
        assert (errors > cfg.epsilon).sum() <= allowed_failures(len(errors), rate), method


def test_conformal_with_unit_weights_is_split_conformal() -> None:
    rng = np.random.default_rng(3)
    scores, labels, alpha = rng.uniform(size=99), rng.integers(0, 3, 99), 0.1
    q = conformal_thresholds(scores, labels, np.ones(3), alpha)
    k = int(np.ceil((len(scores) + 1) * (1 - alpha)))
    assert np.allclose(q, np.sort(1 - scores)[k - 1])
    assert np.isinf(conformal_thresholds(scores[:5], labels[:5], np.ones(3), alpha)).all()


def test_evaluate_returns_estimates_intervals_and_sets() -> None:
    pop = population("wine")
    rng = np.random.default_rng(4)
    src, tgt, test = (pop.sample(n, p, rng) for n, p in ((3000, np.full(3, 1 / 3)), (3000, [0.6, 0.3, 0.1]),
                                                           (40, [0.6, 0.3, 0.1])))
    result = evaluate(pop.labels[src], pop.probs[src], pop.probs[tgt].argmax(1), test_probs=pop.probs[test],
                      delta=0.1, epsilon=0.1)
    w = np.array([0.6, 0.3, 0.1]) * 3
    assert result.n_source == 1500 and result.n_calibration == 1500
    assert result.intervals["lp"].contains(w).all()
    assert {"pac-lp", "pac-ge", "conformal"} <= set(result.sets)
    assert result.sets["pac-lp"].sets.shape == (40, 3)
    json.dumps(result.to_dict())


def test_errors_are_specific_and_clear() -> None:
    y = np.repeat([0, 1, 2], 50)
    with pytest.raises(SingularConfusionError, match=r"condition number .* never predicted on the source: \[2\]"):
        evaluate(y, np.where(y == 2, 1, y), y)  # class 2 never predicted: zero row
    C = np.array([[0.25, 0.249, 0.0], [0.25, 0.251, 0.0], [0.0, 0.0, 0.25]])
    with pytest.raises(SingularConfusionError, match="condition number"):
        bbse(C, C.sum(axis=1), max_cond=100)
    with pytest.raises(EmptyClassError, match="class 2 has no source examples"):
        evaluate(y[y < 2], y[y < 2], y, classes=np.array([0, 1, 2]))
    with pytest.raises(EmptyClassError, match="class 2"):
        evaluate(y[y < 2], np.eye(3)[y[y < 2]], y)  # probabilities name 3 classes, labels only 2
    with pytest.raises(LabelSetError, match=r"target predictions contain labels \[7\]"):
        evaluate(y, y, np.r_[y, 7])
    with pytest.raises(LabelSetError, match="2 probability columns but there are 3 classes"):
        evaluate(y, y, np.ones((10, 2)) / 2)
    with pytest.raises(LabelShiftError, match="differ in length"):
        evaluate(y, y[:-1], y)
    boxes = Boxes(np.array([[0.5, 0.5], [0.0, 0.0]]), np.array([[0.5, 0.5], [0.0, 0.0]]),
                  np.array([0.0, 1.0]), np.array([0.0, 1.0]), None, None, 0.1)
    with pytest.raises(EmptyRegionError, match="region for w is empty"):
        lp_region(boxes)
    assert issubclass(SingularConfusionError, ValueError) and issubclass(EmptyRegionError, ValueError)


CLI = ("from neurips26.methods.labelshift.cli import labelshift; import typer; "
       "app = typer.Typer(pretty_exceptions_enable=False); app.command()(labelshift); app()")


def test_cli_round_trip(tmp_path: Path) -> None:
    pop = population("digits")
    rng = np.random.default_rng(5)
    p_t = rng.dirichlet(np.ones(10))
    src, tgt, test = pop.sample(2000, np.full(10, 0.1), rng), pop.sample(2000, p_t, rng), pop.sample(30, p_t, rng)
    np.save(tmp_path / "ys.npy", pop.labels[src])
    np.save(tmp_path / "ps.npy", pop.probs[src])
    np.save(tmp_path / "pt.npy", pop.probs[tgt].argmax(1))
    np.savez(tmp_path / "test.npz", test_probabilities=pop.probs[test], other=np.zeros(3))
    out = tmp_path / "out" / "result.json"
    args = [str(tmp_path / f) for f in ("ys.npy", "ps.npy", "pt.npy")]
    done = subprocess.run([sys.executable, "-c", CLI, *args, "--test-probs", str(tmp_path / "test.npz"),
                           "--delta", "0.1", "--epsilon", "0.05", "--out", str(out)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert "LP interval" in done.stdout and "GE interval" in done.stdout
    result = json.loads(out.read_text())
    lp, ge = result["intervals"]["lp"], result["intervals"]["ge"]
    assert all(a >= b - 1e-6 for a, b in zip(lp["lo"], ge["lo"], strict=True))
    assert all(a <= b + 1e-6 for a, b in zip(lp["hi"], ge["hi"], strict=True))
    assert len(result["sets"]["pac-lp"]["sets"]) == 30

    np.save(tmp_path / "bad.npy", np.ones((5, 7)) / 7)
    bad = subprocess.run([sys.executable, "-c", CLI, *args[:2], str(tmp_path / "bad.npy"), "--method", "lp"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0
    assert "LabelSetError" in bad.stderr and "bad.npy" in bad.stderr and "7 probability columns" in bad.stderr
    missing = subprocess.run([sys.executable, "-c", CLI, *args[:2], str(tmp_path / "nope.npy")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0 and "target predictions: file not found" in missing.stderr
