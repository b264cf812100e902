"""Robot-actions bench: codec round-trip error on the real PushT demonstrations, training cost per method, and
rollout throughput against the bare simulator.

Needs a built pusht folder (``neurips26 build pusht --raw ../shared/data/pusht --out pusht``). Prints three
tables: (1) every codec's round-trip RMSE in pixels over all 16-step chunks of the 206 demonstrations, with the
numbers each chunk costs; (2) each method's training speed (steps/s, ratio against the BC MLP), peak memory and
final loss at the given steps; (3) simulator steps per second of rollouts of each policy against replaying fixed
actions (the simulator alone), i.e. what the policy costs per control step.

    python bench/actions.py --data pusht
    python bench/actions.py --data pusht --steps 300 --seeds 8 --device cuda
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
import torch
from neurips26.corpora.pusht import sim
from neurips26.methods.actions import data as demos_data
from neurips26.methods.actions.codecs import chunks_of, codec_table
from neurips26.methods.actions.evaluate import rollouts, seeds
from neurips26.methods.actions.train import METHODS, train

from neurips26.models import device as default_device


def table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    cells = [[title for _, title in columns]] + [[fmt(row[key]) for key, _ in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join([lines[0], "-" * len(lines[0]), *lines[1:]])


def fmt(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("pusht"), help="The built pusht folder.")
    parser.add_argument("--steps", type=int, default=500, help="Training steps per method.")
    parser.add_argument("--seeds", type=int, default=8, help="Rollouts per policy for the throughput table.")
    parser.add_argument("--seconds", type=float, default=10.0, help="Rollout length (simulated seconds).")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: CUDA when present).")
    args = parser.parse_args()
    device = default_device(args.device)

    demos = demos_data.load(args.data, "train") + demos_data.load(args.data, "test")
    chunks = chunks_of([d.action for d in demos], 16)
    print(f"(1) codec round trip: {len(chunks)} chunks of 16 steps from {len(demos)} real demonstrations")
    print(table(codec_table(chunks), [("codec", "codec"), ("setting", "setting"), ("numbers", "numbers/chunk"),
                                      ("rmse", "RMSE px")]))

    train_demos = demos_data.load(args.data, "train")
    train("bc", train_demos, steps=20, device=device)  # warm-up: the first run pays torch's one-time costs
    rows, policies = [], {}
    for method in METHODS:
        policy, cost = train(method, train_demos, steps=args.steps, device=device)
        policies[method] = policy
        rows.append({"method": method, "steps/s": cost.steps / cost.seconds, "seconds": cost.seconds,
                     "peak MB": cost.peak_memory_mb, "final loss": cost.final_loss})
    base = rows[0]["steps/s"]
    for row in rows:
        row["vs bc"] = row["steps/s"] / base
    print(f"\n(2) training on {device}: {args.steps} steps, batch 256, {len(train_demos)} training episodes")
    print(table(rows, [(k, k) for k in ("method", "steps/s", "vs bc", "seconds", "peak MB", "final loss")]))

    seed_list = seeds(args.seeds)
    sim.make_env().reset(seed=0)  # warm-up: pygame and pymunk load once
    start = time.perf_counter()
    steps = 0
    for seed in seed_list:  # the simulator alone: replay a fixed action sequence
        env = sim.make_env()
        env.reset(seed=seed)
        for k in range(round(args.seconds * 10)):
            env.step(np.array([256.0 + 50 * np.sin(k / 5), 256.0]))
            sim.coverage(env)
            steps += 1
    alone = steps / (time.perf_counter() - start)
    rows = [{"policy": "simulator alone", "sim steps/s": alone, "vs simulator": 1.0}]
    for method, policy in policies.items():
        start = time.perf_counter()
        runs = rollouts(policy, seed_list, 10.0, args.seconds)
        rate = sum(len(r.coverage) for r in runs) / (time.perf_counter() - start)
        rows.append({"policy": method, "sim steps/s": rate, "vs simulator": rate / alone})
    print(f"\n(3) rollouts: {args.seeds} seeds x {args.seconds:g} s at 10 Hz, batched across seeds")
    print(table(rows, [(k, k) for k in ("policy", "sim steps/s", "vs simulator")]))
    print(f"\npeak resident memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
          f"torch threads {torch.get_num_threads()}")


if __name__ == "__main__":
    main()
