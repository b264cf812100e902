"""Cost of the IPG estimator on the embedded model: wall time, model passes and peak memory over steps M x samples N.

    python bench/ipg.py                                   # M in 4,8,16, N in 4,8, one problem, layer 15
    python bench/ipg.py --steps 4,8 --samples 4 --problems 2 --max-new-tokens 8 --batch-rows 128

Each configuration estimates IPG for the neurons of one layer on ``--problems`` arithmetic problems. A
*sampling pass* is one batched forward over whole trajectories (the prompt, then incremental decoding); a
*gradient pass* one batched forward+backward. An unbatched estimator needs at least M (N + 1) passes per
problem (N sampled trajectories and one backward per alpha step): ``ratio`` = passes made / that minimum.
Each configuration runs in a fresh process (model loaded, then timed), so memory figures do not leak
between configurations.
The default outcome, ``parity`` (length of the completion is odd), makes nearly every alpha group score
differently, so every row gets its backward pass (the worst case); ``number`` is the task's own outcome,
whose all-equal groups skip the backward. Peak memory: GPU ``max_memory_allocated``, or on CPU the
process's resident memory sampled every 50 ms during the estimate (``peak MB``; ``model MB`` is the
level before it, with the model loaded).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

import psutil
import torch
from neurips26.methods.ipg import arithmetic
from neurips26.methods.ipg.estimator import estimate_ipg
from neurips26.methods.ipg.outcomes import number_match
from neurips26.methods.ipg.policy import LMPolicy
from neurips26.methods.ipg.scaling import neuron_sites
from rich.console import Console
from rich.table import Table
from transformers import AutoModelForCausalLM, AutoTokenizer

from neurips26 import models

OUTCOMES = {"parity": lambda out, answer: float(len(out) % 2), "number": number_match}


class PeakRSS:
    """Peak resident memory of this process while the block runs, sampled in a thread."""

    def __enter__(self) -> PeakRSS:
        self.process = psutil.Process()
        self.base = self.peak = self.process.memory_info().rss
        self.running = True
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.thread.start()
        return self

    def poll(self) -> None:
        while self.running:
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        self.running = False
        self.thread.join()


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def measure(args: argparse.Namespace, M: int, N: int) -> dict:
    """Load the model, estimate IPG once for (M, N) and return the figures."""
    device = models.device() if args.device == "auto" else args.device
    folder = models.default_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).to(device)
    problems = arithmetic.generate(args.problems, steps=1)
    prompts = [torch.tensor(arithmetic.prompt_ids(tokenizer, p.question)) for p in problems]
    answers = [p.answer for p in problems]
    policy = LMPolicy(model, neuron_sites(model, [args.layer]), tokenizer, max_new_tokens=args.max_new_tokens)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    with PeakRSS() as rss:
        estimate_ipg(policy, prompts, answers, OUTCOMES[args.outcome], M, N, args.batch_rows)
    if device == "cuda":
        torch.cuda.synchronize()
    wall = time.perf_counter() - start
    c = policy.counts
    minimum = M * (N + 1) * args.problems
    return {"M": M, "N": N, "device": device, "threads": torch.get_num_threads(), "wall_s": wall, **asdict(c),
            "passes": c.passes(), "minimum": minimum, "ratio": c.passes() / minimum,
            "peak_mb": (torch.cuda.max_memory_allocated() if device == "cuda" else rss.peak) / 2**20,
            "model_mb": (0 if device == "cuda" else rss.base) / 2**20, "load_avg": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=ints, default=[4, 8, 16], help="Riemann steps M, comma-separated")
    parser.add_argument("--samples", type=ints, default=[4, 8], help="trajectories N per step, comma-separated")
    parser.add_argument("--problems", type=int, default=1)
    parser.add_argument("--layer", type=int, default=15)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--batch-rows", type=int, default=128, help="trajectories per batched pass")
    parser.add_argument("--outcome", choices=sorted(OUTCOMES), default="parity")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--json", type=Path, default=Path("bench/out/ipg.json"))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # M,N: measure in this process, print JSON
    args = parser.parse_args()
    if args.one:
        M, N = ints(args.one)
        print(json.dumps(measure(args, M, N)))
        return

    console = Console(width=160)
    console.print(f"{models.DEFAULT_MODEL_NAME}, layer {args.layer}, {args.problems} problem(s), "
                  f"{args.max_new_tokens} new tokens, outcome {args.outcome}, batches of {args.batch_rows} rows")
    results = []
    for M in args.steps:
        for N in args.samples:
            cmd = [sys.executable, __file__, "--one", f"{M},{N}", *sys.argv[1:]]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"M={M} N={N} failed:\n{done.stderr[-2000:]}")
            row = json.loads(done.stdout.strip().splitlines()[-1])
            results.append(row)
            console.print(f"M={M} N={N}: {row['wall_s']:.1f} s on {row['device']}, {row['passes']} passes "
                          f"(load average {row['load_avg']:.1f})", highlight=False)

    table = Table(title=f"IPG estimator cost ({models.DEFAULT_MODEL_NAME}, {results[0]['device'] if results else ''})")
    for col in ("M", "N", "wall s", "sampling passes", "gradient passes", "passes", "min M(N+1)", "ratio",
                "trajectories", "backprop rows", "tokens", "model MB", "peak MB"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(str(r["M"]), str(r["N"]), f"{r['wall_s']:.1f}", str(r["generate_batches"]),
                      str(r["gradient_batches"]), str(r["passes"]), str(r["minimum"]), f"{r['ratio']:.3f}",
                      str(r["generate_rows"]), str(r["gradient_rows"]), str(r["tokens_generated"]),
                      f"{r['model_mb']:.0f}", f"{r['peak_mb']:.0f}")
    console.print(table)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "results": results},
                                    indent=1) + "\n")
    console.print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
