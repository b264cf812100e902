"""FreeAct: a policy that acts in a latent action space learned from observations adapts to a new robot without
any demonstration there, against fine-tuning a policy on a few target-domain demonstrations.

Shift (``neurips26.methods.actions.shift.MIRROR_X``, a dynamics shift of the action interface): the target robot
executes every commanded position mirrored in x about the scene centre (``x -> 512 - x``); the scene, the task
and the observations are PushT's. Source data: the 177 real training demonstrations of Diffusion Policy's PushT
store (``../shared/data/pusht``). Target demonstrations: the held-out test demonstrations with their actions
mapped to the commands the mirrored robot needs (replayed there they reproduce the recorded states).

Arms, per seed, at equal optimiser steps (``compute.train_steps``):

* ``freeact`` (``neurips26.methods.actions.adapt``): latent action model on the source demonstrations' states
  (no actions; ``latent_steps``), latent policy on the encoder's labels (``policy_steps``), and the grounding
  decoder fitted on the target robot's own play (random waypoint motion, no task, no demonstration;
  ``decoder_steps``). No target-domain demonstration is used.
* ``finetune``: the behaviour-cloning MLP (same size as the latent policy) trained on the source demonstrations'
  actions for ``latent_steps + policy_steps`` steps, then fine-tuned on ``k`` target demonstrations (drawn per
  seed from the test split) for ``decoder_steps`` steps.

Metric: mean max coverage in the shifted simulator from the fixed ``pusht_rollout`` seeds (10 Hz, 30 s); items
are the episodes, paired by initial state across arms. Each ``k`` is a condition (``target_demos=k``); the
headline is k = 5 (the largest k at the tiny scale). Reported beside them: ``source_bc`` (the pre-trained policy
with no adaptation, in the target robot) and ``source_bc@source`` (the same policy on the source robot: what the
shift costs), success counts, the parts' final losses.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from neurips26.methods.actions import adapt
from neurips26.methods.actions.data import from_store
from neurips26.methods.actions.evaluate import rollouts, seeds
from neurips26.methods.actions.shift import MIRROR_X, target_demos
from neurips26.methods.actions.train import finetune, train

from claims.core import CLAIMS, ROOT, Arm, Outcome
from neurips26.models import device as default_device

RAW = ROOT.parent / "shared" / "data" / "pusht"
HEADLINE_K = 5
# scale -> (latent model, latent policy, decoder steps; training episodes (None: all); play episodes x steps;
#           evaluation episodes; rollout seconds; target demonstrations k per condition)
SCALES = {
    "tiny": ((10, 20, 10), 10, (2, 20), 3, 3.0, (1, 3)),
    "default": ((1000, 2000, 1000), None, (30, 200), 30, 30.0, (1, 5)),
    "large": ((5000, 20000, 5000), None, (100, 300), 50, 30.0, (1, 5, 20)),
}


@CLAIMS.register("freeact", method="FreeAct",
                 claim="A policy acting in a latent action space learned from observations, grounded on a new robot "
                       "from that robot's own play, adapts to the new robot without target-domain demonstrations "
                       "and does better there than fine-tuning a policy on a few target-domain demonstrations.",
                 metric="shifted-PushT mean max coverage", direction="higher",
                 baseline="BC pre-trained on the source demonstrations, fine-tuned on k=5 target-domain "
                          "demonstrations (same total steps)",
                 method_arm="freeact", baseline_arm="finetune")
def freeact(scale: str, seeds_: list[int]) -> Outcome:
    """FreeAct (no target demonstrations) against fine-tuning on k target demonstrations, per k, on the mirrored
    robot."""
    (latent_steps, policy_steps, decoder_steps), n_train, (play_episodes, play_steps), n_eval, seconds, ks = \
        SCALES[scale]
    torch.set_num_threads(1)
    device = default_device()
    total = latent_steps + policy_steps + decoder_steps
    demos = from_store(RAW, "train", n_train)
    held_out = target_demos(from_store(RAW, "test", max(ks) if scale == "tiny" else None), MIRROR_X)
    eval_seeds = seeds(n_eval)
    names = ["freeact", "source_bc", "source_bc@source"] + [f"finetune@{k}" for k in ks]
    coverage: dict[str, list[list[float]]] = {n: [] for n in names}
    successes = {n: 0 for n in names}
    losses: list[dict] = []
    for seed in seeds_:
        data = adapt.play(MIRROR_X, play_episodes, play_steps, seed=seed)
        policy, _, cost = adapt.freeact(demos, data, latent_steps=latent_steps, policy_steps=policy_steps,
                                        decoder_steps=decoder_steps, seed=seed)
        assert cost.total_steps == total
        source, _ = train("bc", demos, steps=latent_steps + policy_steps, seed=seed, device=device)
        policies = {"freeact": (policy.to(device), MIRROR_X), "source_bc": (source, MIRROR_X),
                    "source_bc@source": (source, None)}
        picks = np.random.default_rng(seed).permutation(len(held_out))
        for k in ks:
            tuned = copy.deepcopy(source)
            finetune(tuned, [held_out[i] for i in picks[:k]], steps=decoder_steps, seed=seed)
            policies[f"finetune@{k}"] = (tuned, MIRROR_X)
        for name, (agent, shift) in policies.items():
            runs = rollouts(agent, eval_seeds, 10.0, seconds, sample_seed=seed, shift=shift)
            coverage[name].append([r.max_coverage for r in runs])
            successes[name] += sum(r.success for r in runs)
        losses.append(cost.losses)

    def arm(name: str, steps: int, **compute) -> Arm:
        return Arm(values=[float(np.mean(x)) for x in coverage[name]], items=coverage[name],
                   compute={"train_steps": steps, **compute})

    freeact_arm = arm("freeact", total, latent_model_steps=latent_steps, policy_steps=policy_steps,
                      decoder_steps=decoder_steps, target_demos=0, target_play_steps=play_episodes * play_steps)
    conditions = {f"target_demos={k}": {"freeact": freeact_arm,
                                        "finetune": arm(f"finetune@{k}", total, pretrain_steps=latent_steps +
                                                        policy_steps, finetune_steps=decoder_steps, target_demos=k)}
                  for k in ks}
    pretrain = latent_steps + policy_steps
    headline = HEADLINE_K if HEADLINE_K in ks else max(ks)
    return Outcome(
        arms={**conditions[f"target_demos={headline}"], "source_bc": arm("source_bc", pretrain),
              "source_bc@source": arm("source_bc@source", pretrain)},
        conditions=conditions,
        extra={"shift": MIRROR_X.describe(), "headline_target_demos": headline, "successes": successes,
               "episodes_per_arm": len(seeds_) * n_eval, "freeact_losses": losses,
               "target_play": {"episodes": play_episodes, "steps": play_steps, "kind": "random waypoint motion"},
               "data": {"store": "pusht_cchi_v7_replay.zarr", "source_train_episodes": len(demos),
                        "target_demo_pool": len(held_out)},
               "rollouts": {"first_seed": eval_seeds[0], "episodes": n_eval, "rate_hz": 10.0,
                            "max_seconds": seconds}, "device": device})
