"""The leaderboard protocol of ``pusht_rollout``: mean max coverage of a policy's PushT rollouts.

The standard run rolls the policy out from the 50 fixed seeds 100000-100049 at 10 Hz for at most 30 s each
(:data:`STANDARD`); any other setting (another rate, fewer seeds) is stored unranked. Per rollout the
samples row's response holds the coverage after every step and the commanded actions, from which the board
recomputes max coverage, success (coverage >= 0.95, Diffusion Policy's threshold) and the three smoothness
metrics. Ranked by mean max coverage: only 7 of the 206 recorded human demonstrations reach 0.95 coverage in
this simulator, so the success rate alone separates little. The baseline is measured (:mod:`.baselines`): the best
mean max coverage of policies that never look at the scene (one that does not move, scoring about each seed's
initial coverage; one that commands a fixed point; one that commands random points), recorded in :data:`MEASURED` by
``python -m neurips26.tasks.measure --record pusht_rollout``.
"""

from __future__ import annotations

from neurips26.protocol import PROTOCOLS, MeasuredBaseline, Protocol

FIRST_SEED = 100_000
STANDARD = {"rate_hz": 10.0, "episodes": 50, "first_seed": FIRST_SEED, "max_seconds": 30.0}
"""The standard run: 50 seeds from 100000 at 10 Hz, 30 s each (300 steps, as Diffusion Policy's PushT)."""
TASK = "pusht_rollout"
TASK_VERSION = 1.0
METRICS = ("max_coverage", "rollout_success", "mean_sq_jerk", "high_freq_energy", "diff_energy")

# the best answerer that knows nothing: `python -m neurips26.tasks.measure --record` rewrites this block
MEASURED = {
    "pusht_rollout": MeasuredBaseline(
        answerer="random", scores={"empty": 0.1321, "constant": 0.1416, "random": 0.1433}, answer="target (256, 256)",
        n=50, seeds=5, data="pusht_rollout/test: gym-pusht seeds 100000-100049 at 10 Hz, 30 s each",
        how="methods/actions/baselines.py"),
}


PROTOCOL = PROTOCOLS.register(TASK, group="robot_actions", output_type="generate_until", version=TASK_VERSION,
                              metrics=METRICS)(Protocol(
    split="test", num_fewshot=0, fewshot_split=None, chat_template=False, metric="max_coverage",
    higher_is_better=True, baseline_from=MEASURED[TASK], range=(0, 1),
    size=STANDARD["episodes"],
    task_metadata=dict(STANDARD),
    note="Policies for PushT (gym-pusht): rollouts from fixed seeds; metrics recomputed from each rollout's "
         "coverage trace and commanded actions."))
