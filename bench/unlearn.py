"""Unlearning baselines at the small setting: time and peak memory per baseline, evaluation throughput.

Each baseline runs in a fresh process (so its peak memory is its own) on the embedded model, a forget set
of the RoleBench-Unlearn folder (default: built from the embedded sample into a temp dir) and the small
CPU setting of ``neurips26 unlearn``. Reported per baseline: model load, training (seconds, steps/s,
training tokens/s), peak resident memory of the process (and peak CUDA memory on a GPU), and the
evaluation: responses generated and scored, seconds, responses per second. The role-fidelity scorer is
trained (or loaded from its cache) once before, on its own row.

    python bench/unlearn.py                                   # all baselines, embedded sample, forget05
    python bench/unlearn.py --data /path/to/built --steps 12 --eval-limit 24 --methods ga,npo
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

console = Console(width=200)


def measure(method: str, folder: str, split: str, train_kwargs: dict, eval_kwargs: dict, device: str | None) -> dict:
    """One baseline in this (fresh) process: load, train, evaluate; seconds and peak memory."""
    import torch
    from neurips26.methods.unlearn import data, evaluate, prompts, train
    from neurips26.methods.unlearn.experiment import targets
    from neurips26.methods.unlearn.methods import get

    start = time.perf_counter()
    model, tokenizer = train.load_model(None, device)
    load_s = time.perf_counter() - start
    cfg, eval_cfg = train.TrainConfig(**train_kwargs), evaluate.EvalConfig(**eval_kwargs)
    chosen = get(method)
    start = time.perf_counter()
    tokens = 0
    if chosen.trains:
        forget = data.examples(data.load_rows(Path(folder), split, "forget_train"))
        retain = data.examples(data.load_rows(Path(folder), split, "retain_train"))
        model, original, log = train.run(model, tokenizer, chosen, forget, retain, cfg)
        per_example = sum(len(e["input_ids"]) for e in data.encode(tokenizer, forget, cfg.max_length)) / len(forget)
        tokens = int(per_example * cfg.batch_size * cfg.steps * (2 if method in ("gd", "rolemoe") else 1)
                     + (per_example * cfg.moe_batch_size * cfg.moe_steps if method == "rolemoe" else 0))
    else:
        original = train.Original(model)
    train_s = time.perf_counter() - start
    system = prompts.refusal_instruction(targets(Path(folder), split)) if chosen.refuses else ""
    result = evaluate.evaluate(model, tokenizer, Path(folder), split, original, system, eval_cfg)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    steps = (cfg.steps + (cfg.moe_steps if method == "rolemoe" else 0)) if chosen.trains else 0
    return {"method": method, "load_s": load_s, "train_s": train_s, "steps": steps,
            "train_tokens": tokens, "peak_rss_mb": rss_mb,
            "peak_cuda_mb": torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else None,
            "responses": len(result.samples), "generate_s": result.generate_seconds,
            "score_s": result.score_seconds, "responses_per_s": result.responses_per_second,
            "parts": result.parts}


def main() -> None:
    from neurips26.methods.unlearn import scorer
    from neurips26.methods.unlearn.methods import UNLEARNING_METHODS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--data", type=Path, help="built rolebench_unlearn folder (default: build the sample)")
    parser.add_argument("--split", default="forget05")
    parser.add_argument("--methods", default=",".join(UNLEARNING_METHODS), help="comma-separated baselines")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--full", action="store_true", help="full weights instead of LoRA")
    parser.add_argument("--eval-limit", type=int, default=24, help="test questions per set (0: all)")
    parser.add_argument("--max-new-tokens", type=int, default=48)
    parser.add_argument("--eval-batch-size", type=int, default=16)
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda when present)")
    parser.add_argument("--json", type=Path, default=Path("bench/out/unlearn.json"))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="unlearn-bench-") as tmp:
        folder = args.data
        if folder is None:
            from neurips26.corpora.rolebench_unlearn import build

            folder = Path(tmp) / "rolebench_unlearn"
            build.build(out=folder)
        start = time.perf_counter()
        info = scorer.describe(scorer.for_folder(folder))
        scorer_s = time.perf_counter() - start
        train_kwargs = {"steps": args.steps, "batch_size": args.batch_size, "max_length": args.max_length,
                        "lora": not args.full}
        eval_kwargs = {"limit": args.eval_limit or None, "max_new_tokens": args.max_new_tokens,
                       "batch_size": args.eval_batch_size}
        rows = []
        for method in [m.strip() for m in args.methods.split(",") if m.strip()]:
            console.print(f"[dim]{method}...[/dim]")
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
                rows.append(pool.submit(measure, method, str(folder), args.split, train_kwargs, eval_kwargs,
                                        args.device).result())

    table = Table(title=f"Unlearning baselines, {args.split}, {'full' if args.full else 'LoRA'}, {args.steps} steps "
                        f"x {args.batch_size}; eval {args.eval_limit or 'all'}/set x {args.max_new_tokens} tokens")
    for column in ("method", "load s", "train s", "steps/s", "train tok/s", "peak RSS MB", "peak CUDA MB",
                   "responses", "eval s", "responses/s"):
        table.add_column(column, justify="left" if column == "method" else "right")
    for r in rows:
        train_s = r["train_s"]
        table.add_row(r["method"], f"{r['load_s']:.1f}", f"{train_s:.1f}",
                      f"{r['steps'] / train_s:.2f}" if r["steps"] else "-",
                      f"{r['train_tokens'] / train_s:.0f}" if r["steps"] else "-", f"{r['peak_rss_mb']:.0f}",
                      "-" if r["peak_cuda_mb"] is None else f"{r['peak_cuda_mb']:.0f}", str(r["responses"]),
                      f"{r['generate_s'] + r['score_s']:.1f}", f"{r['responses_per_s']:.2f}")
    console.print(table)
    for language, lang_info in info["languages"].items():
        console.print(f"scorer {language}: {scorer_s:.1f} s to train or load all ({lang_info['roles']} roles, held-out "
                      f"accuracy {lang_info.get('accuracy', float('nan')):.3f})", highlight=False)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "scorer_s": scorer_s,
                                     "scorer": info, "rows": rows}, indent=2) + "\n", encoding="utf-8")
    console.print(f"written {args.json}", highlight=False)


if __name__ == "__main__":
    main()
