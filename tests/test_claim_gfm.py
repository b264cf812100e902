"""The Gated Forensic Memory claims: relay against the frozen baseline on held-out photographs, and the premise
(a mid-layer probe peak) reported untestable on the random embedded VLM."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import claims.gfm  # noqa: E402, F401  (registers the claim)
from claims.core import run_claim  # noqa: E402
from claims.gfm_peak import pretrained_folder  # noqa: E402


def test_tiny_run_compares_the_relay_with_the_frozen_baseline_on_held_out_photographs(tmp_path: Path,
                                                                                     one_torch_thread: None) -> None:
    run_claim("gfm", scale="tiny", seeds=3, out=tmp_path)
    written = json.loads((tmp_path / "gfm.json").read_text())
    assert written["name"] == "gfm" and written["scale"] == "tiny" and written["seeds"] == [0, 1, 2]
    relay, frozen = written["arms"]["gfm"], written["arms"]["frozen"]
    assert relay["compute"] == frozen["compute"] and relay["compute"]["train_steps"] == 4
    assert relay["n_items"] == frozen["n_items"] == [16, 16, 16]
    assert all(0 <= v <= 1 for v in relay["values"] + frozen["values"])
    assert written["verdict"] in ("reproduced", "not reproduced") and len(written["ci95"]) == 2
    for seed in written["per_seed"]:
        assert len(seed["held_out_photos"]) == 5 and seed["read_layer"] < min(seed["write_layers"])
        assert max(seed["write_layers"]) < 6  # never the last block's output: it could not reach the answer
        assert isinstance(seed["probe"]["flat"], bool) and len(seed["probe"]["auc"]) == 7
        assert (seed["probe"]["peak"] is None) == seed["probe"]["flat"]


def test_the_mid_layer_peak_is_untestable_on_the_random_vlm_and_says_what_it_needs(tmp_path: Path,
                                                                                    one_torch_thread: None) -> None:
    if pretrained_folder() is not None:
        pytest.skip("a pretrained VLM is in the cache: the claim is testable here")
    run_claim("gfm_peak", scale="tiny", seeds=3, out=tmp_path)
    written = json.loads((tmp_path / "gfm_peak.json").read_text())
    assert written["verdict"] == "untestable here" and "pretrained VLM" in written["needs"]
    assert written["arms"]["peak"]["compute"] == written["arms"]["last"]["compute"] == {"train_steps": 0}
    assert len(written["arms"]["peak"]["values"]) == 3
    for seed in written["per_seed"]:
        assert 0 < seed["peak_layer"] < seed["last_layer"] == 6 and len(seed["selection_auc"]) == 7


def test_the_committed_default_results_files_are_the_claims_own() -> None:
    for name in ("gfm", "gfm_peak"):
        res = json.loads((ROOT / "bench" / "results" / f"{name}.json").read_text())
        assert res["scale"] == "default" and len(res["seeds"]) >= 3
        assert res["command"] == f"python bench/claims/run.py {name} --scale default --seeds {len(res['seeds'])}"
    peak = json.loads((ROOT / "bench" / "results" / "gfm_peak.json").read_text())
    assert peak["verdict"] == "untestable here" or "SmolVLM" in peak["model"]
