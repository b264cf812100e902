"""The FreeAct claim on the mirrored PushT robot: the tiny run end to end at equal compute, the shift (target
demonstrations replay exactly on the shifted robot), the latent action model and the closed-loop grounding."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from neurips26.corpora.pusht import sim
from neurips26.methods.actions import adapt
from neurips26.methods.actions.data import from_store
from neurips26.methods.actions.shift import MIRROR_X, Shift, target_demos

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims.core import run_claim  # noqa: E402
from claims.freeact import SCALES  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # the cores are shared (tests/conftest.py)


@pytest.fixture(scope="module")
def demos(shared_data: Path) -> list:
    return from_store(shared_data / "pusht", "train", 12)


def test_tiny_run_compares_freeact_with_finetuning_per_k_at_equal_steps(tmp_path: Path, shared_data: Path) -> None:
    run_claim("freeact", scale="tiny", seeds=3, out=tmp_path)
    res = json.loads((tmp_path / "freeact.json").read_text())
    ks = SCALES["tiny"][-1]
    assert res["method_arm"] == "freeact" and res["baseline_arm"] == "finetune" and res["seeds"] == [0, 1, 2]
    assert set(res["conditions"]) == {f"target_demos={k}" for k in ks}
    steps = sum(SCALES["tiny"][0])
    for name, cond in res["conditions"].items():
        arms = cond["arms"]
        assert arms["freeact"]["compute"]["train_steps"] == arms["finetune"]["compute"]["train_steps"] == steps
        assert arms["freeact"]["compute"]["target_demos"] == 0
        assert arms["finetune"]["compute"]["target_demos"] == int(name.split("=")[1])
        assert all(0 <= v <= 1 for v in arms["freeact"]["values"] + arms["finetune"]["values"])
        assert cond["verdict"] in ("reproduced", "not reproduced") and len(cond["ci95"]) == 2
    assert res["arms"]["freeact"]["n_items"] == [SCALES["tiny"][3]] * 3
    assert {"source_bc", "source_bc@source"} <= set(res["arms"]) and "mirrored" in res["shift"]


def test_target_demonstrations_replay_their_recorded_states_on_the_shifted_robot(demos: list) -> None:
    for shift in (MIRROR_X, Shift(mirror_x=False, rotation_deg=30.0)):
        np.testing.assert_allclose(shift(shift.command_for(demos[0].action)), demos[0].action, atol=1e-9)
    demo = target_demos(demos[:1], MIRROR_X)[0]
    assert not np.allclose(demo.action, demos[0].action)
    env = sim.make_env()
    sim.set_state(env, demo.state[0])
    for action in demo.action[:40]:
        env.step(MIRROR_X(action))
    shifted = sim.observe(env)
    sim.set_state(env, demo.state[0])
    for action in demo.action[:40]:  # the same commands on the source robot go elsewhere
        env.step(action)
    assert np.abs(shifted[:2] - demo.state[40, :2]).max() < 0.5
    assert np.abs(sim.observe(env)[:2] - demo.state[40, :2]).max() > 20


def test_latent_action_model_predicts_state_changes_better_than_no_change(demos: list) -> None:
    model, _ = adapt.train_latent_model(demos, steps=150, seed=0)
    obs, last, after = (torch.as_tensor(x) for x in adapt.transitions(demos[-1].state))
    with torch.no_grad():
        z = model.encode(obs, last, after)
        predicted = model.fdm(torch.cat([obs, last, z], dim=1))
    assert z.shape == (len(obs), 2)
    assert torch.mean((predicted - after) ** 2) < 0.5 * torch.mean(after**2)


def test_grounding_tracks_the_planned_latent_path() -> None:
    """Step k asks for the plan's k-th point minus the latents realised since the plan began."""
    torch.manual_seed(0)
    policy = adapt.FreeActPolicy(2)
    policy.model = adapt.LatentActionModel(2)
    history = np.array([[100, 100, 200, 200, 0.1], [102, 101, 200, 200, 0.1], [106, 103, 200, 200, 0.1],
                        [111, 104, 200, 200, 0.1]], dtype=float)
    plan = np.array([[0.5, 0.1], [1.0, 0.3], [1.4, 0.2]], dtype=np.float32)
    with torch.no_grad():
        obs, last, after = (torch.as_tensor(x) for x in adapt.transitions(history))
        realised = policy.model.encode(obs, last, after)[1:3].sum(0).numpy()
        wanted = plan[2] - realised
        expected = policy.decoder(torch.as_tensor(adapt.grounding_inputs(history[-2:-1], history[-1:],
                                                                         wanted[None])))
    got = policy.ground([history], [plan], 2)
    np.testing.assert_allclose(got, np.clip((expected.numpy() + 1) * 256, 0, 512), rtol=1e-5)
