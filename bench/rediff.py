"""ReDiff bench: train the base arm and the ReDiff arm at equal total steps, then print the speed-quality table.

Runs ``neurips26 rediff train`` and ``neurips26 rediff eval`` in this process on generated addition problems with
long carry chains (exact answers) and prints tokens per step against exact match and cascade lift for the base
decoder and for ReDiff, and the training cost of each stage of each arm (seconds, peak memory). One seed: the
claim (``python bench/claims/run.py rediff``) runs the same defaults over seeds, with intervals. CPU by default;
CUDA when present.

    python bench/rediff.py --threads 1           # the defaults of `neurips26 rediff train` (the claim's default)
    python bench/rediff.py --digits 4 --steps 800 --workdir /tmp/rediff-bench
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import torch
from typer.testing import CliRunner

from neurips26.cli import app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--digits", type=int, default=None, help="Digits per operand (default: the standard run).")
    parser.add_argument("--steps", type=int, default=None, help="Pre-training steps (default: the CLI's).")
    parser.add_argument("--stage1-steps", type=int, default=None)
    parser.add_argument("--stage2-steps", type=int, default=None)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for torch (default: torch's).")
    parser.add_argument("--workdir", type=Path, default=None, help="Keep the models and runs here.")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="rediff-bench-"))
    train = ["rediff", "train", "--out", str(work / "models"), "--device", args.device]
    for flag, value in (("--digits", args.digits), ("--steps", args.steps), ("--stage1-steps", args.stage1_steps),
                        ("--stage2-steps", args.stage2_steps)):
        if value is not None:
            train += [flag, str(value)]
    runner = CliRunner()
    for command in (train, ["rediff", "eval", "--models", str(work / "models"), "--out", str(work / "eval"),
                            "--device", args.device]):
        result = runner.invoke(app, command, catch_exceptions=False)
        print(f"$ neurips26 {' '.join(command)}\n{result.output}")
        if result.exit_code:
            raise SystemExit(result.exit_code)
    training = json.loads((work / "models" / "training.json").read_text())
    schedule = training["schedule"]
    print(f"device {training['device']}, {schedule['digits']}-digit addition, batch {schedule['batch_size']}, "
          f"train steps {training['train_steps']}")
    print(f"{'arm':7} {'stage':14} {'steps':>6} {'seconds':>8} {'peak MB':>8} {'final loss':>10}")
    for arm, costs in training["costs"].items():
        for cost in costs:
            print(f"{arm:7} {cost['stage']:14} {cost['steps']:6d} {cost['seconds']:8.1f} "
                  f"{cost['peak_memory_mb']:8.1f} {cost['final_loss']:10.4f}")
    print(f"files in {work}")


if __name__ == "__main__":
    main()
