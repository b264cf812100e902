"""LOCUS analysis layer throughput: sections per second per backend, peak memory, where the time goes.

Sections come from a built LOCUS folder (``--data``; default: the real sample at ``../shared/data/locus``
built into a temp dir when present, else the embedded sample), the first ``--n`` of them (repeated when the
corpus is smaller). Each backend runs in a fresh process, so its peak resident memory is its own.

- ``default``: MiniLM tokenisation, embedding (forward pass), the linear heads, and the rules (opacity,
  discretion/salience cues, fines) - the same steps as ``neurips26 score locus``, timed one by one.
- ``modernbert``: one randomly initialised classifier with the ModernBERT-base shape of the released models
  (22 layers, hidden 768, 12 heads; no weights can be downloaded here) and a word-level tokenizer, timed as
  tokenisation, forward pass and label mapping, at ``--max-length`` word pieces and ``--batch-size``.
  ``neurips26 score locus --backend modernbert`` runs five such models (one per axis), so its rate is about a
  fifth of this one's, shown on its own row.

``ratio`` is sections/s relative to the default backend on the same device. On a GPU:

    python bench/locus_score.py --device cuda --n 4096 --batch-size 64

    python bench/locus_score.py                     # CPU, 512 sections
    python bench/locus_score.py --n 256 --max-length 512 --backends default
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

console = Console(width=160)
ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "data" / "locus"


def sections(data: Path | None, n: int, workdir: Path) -> tuple[list[str], list[str], str]:
    """(headings, texts, where they came from), ``n`` of each."""
    import pyarrow.parquet as pq

    if data is None:
        from neurips26.corpora.locus import build

        data = workdir / "locus"
        if REAL.is_dir():
            from neurips26.corpora.locus.real_sample import link_raw

            build.build(raw=link_raw(REAL, workdir / "raw"), out=data)
        else:
            build.build(out=data)
    table = pq.read_table(sorted((data / "data" / "sections").glob("train-*.parquet")), columns=["heading", "text"])
    headings, texts = table["heading"].to_pylist(), table["text"].to_pylist()
    reps = -(-n // len(texts))
    return (headings * reps)[:n], (texts * reps)[:n], f"{data} ({len(texts):,} sections)"


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def run_default(headings: list[str], texts: list[str], device: str, batch_size: int) -> dict:
    import numpy as np
    import torch
    from neurips26.methods.locus_analysis import fines, heads, lexical, opacity
    from neurips26.methods.unlearn.scorer import embedder

    model = embedder()
    model.to(device)
    trained = heads.Heads.load()
    inputs = [heads.section_input(h, t) for h, t in zip(headings, texts, strict=True)]
    order = np.argsort([-len(s) for s in inputs])  # as SentenceTransformer.encode does
    times = {"tokenise": 0.0, "embed": 0.0, "heads": 0.0, "rules": 0.0}
    chunks = []
    start = time.perf_counter()
    for i in range(0, len(inputs), batch_size):
        t0 = time.perf_counter()
        features = model.tokenize([inputs[j] for j in order[i:i + batch_size]])
        t1 = time.perf_counter()
        features = {k: v.to(device) if hasattr(v, "to") else v for k, v in features.items()}
        with torch.inference_mode():
            out = torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=1)
        chunks.append(out.float().cpu().numpy())
        _sync(device)
        t2 = time.perf_counter()
        times["tokenise"] += t1 - t0
        times["embed"] += t2 - t1
    x = np.concatenate(chunks)[np.argsort(order)]
    t0 = time.perf_counter()
    trained.predict(x)
    times["heads"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for text in texts:
        opacity.measure(text), lexical.enforcement_discretion(text), lexical.problem_salience(text)
        fines.extract(text)
    times["rules"] = time.perf_counter() - t0
    return {"total": time.perf_counter() - start, **times}


def run_modernbert(headings: list[str], texts: list[str], device: str, batch_size: int, max_length: int) -> dict:
    import numpy as np
    import torch
    from neurips26.methods.locus_analysis import modernbert

    folder = Path(tempfile.mkdtemp(prefix="locus-bench-mb-"))
    vocab = sorted({w.lower() for t in texts[:2000] for w in t.split()})[:50_000]
    modernbert.make_random_model(folder, ["Context", "Rules", "Process", "Enforcement"], hidden_size=768, layers=22,
                                 heads=12, intermediate_size=1152, vocab=vocab)
    m = modernbert.load("substantive", str(folder), device=device)
    inputs = [f"{h}\n{t}" for h, t in zip(headings, texts, strict=True)]
    times = {"tokenise": 0.0, "embed": 0.0, "heads": 0.0, "rules": 0.0}
    start = time.perf_counter()
    outputs = []
    for i in range(0, len(inputs), batch_size):
        t0 = time.perf_counter()
        batch = m.tokenizer(inputs[i:i + batch_size], padding=True, truncation=True, max_length=max_length,
                            return_tensors="pt")
        batch.pop("token_type_ids", None)
        t1 = time.perf_counter()
        with torch.inference_mode():
            outputs.append(m.model(**batch.to(device)).logits.float().cpu().numpy())
        _sync(device)
        times["tokenise"] += t1 - t0
        times["embed"] += time.perf_counter() - t1
    t0 = time.perf_counter()
    z = np.concatenate(outputs)
    p = np.exp(z - z.max(1, keepdims=True))
    [m.labels[k] for k in (p / p.sum(1, keepdims=True)).argmax(1)]
    times["heads"] = time.perf_counter() - t0
    return {"total": time.perf_counter() - start, **times}


def measure(backend: str, headings: list[str], texts: list[str], device: str, batch_size: int,
            max_length: int) -> dict:
    """One backend in this (fresh) process; seconds per step and peak memory."""
    import torch

    run_default(headings[:8], texts[:8], device, batch_size) if backend == "default" else None  # warm-up
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    result = (run_default(headings, texts, device, batch_size) if backend == "default"
              else run_modernbert(headings, texts, device, batch_size, max_length))
    return {"backend": backend, "n": len(texts), **result,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "peak_cuda_mb": torch.cuda.max_memory_allocated() / 2**20 if device == "cuda" else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, help="Built LOCUS folder (default: the real sample, built).")
    parser.add_argument("--n", type=int, default=512, help="Sections to score.")
    parser.add_argument("--backends", default="default,modernbert")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present).")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=512, help="modernbert: word pieces per section.")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "out" / "locus_score.json")
    args = parser.parse_args()
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    with tempfile.TemporaryDirectory(prefix="locus-score-bench-") as tmp:
        headings, texts, where = sections(args.data, args.n, Path(tmp))
        rows = []
        ctx = multiprocessing.get_context("spawn")
        for backend in [b.strip() for b in args.backends.split(",") if b.strip()]:
            with ProcessPoolExecutor(1, mp_context=ctx) as pool:
                rows.append(pool.submit(measure, backend, headings, texts, device, args.batch_size,
                                        args.max_length).result())
    base = next((r for r in rows if r["backend"] == "default"), None)
    table = Table(title=f"LOCUS scoring, {len(texts)} sections ({where}), device {device}, "
                        f"batch {args.batch_size}, modernbert max length {args.max_length}, "
                        f"{torch.get_num_threads()} CPU threads")
    for column in ("backend", "sections/s", "ratio vs default", "tokenise %", "embed/forward %", "heads %",
                   "rules %", "peak RSS MB", "peak CUDA MB"):
        table.add_column(column, justify="right")
    for r in rows:
        rate = r["n"] / r["total"]
        ratio = f"{rate / (base['n'] / base['total']):.2f}" if base else ""
        shares = [f"{100 * r[k] / r['total']:.0f}" for k in ("tokenise", "embed", "heads", "rules")]
        cuda = "" if r["peak_cuda_mb"] is None else f"{r['peak_cuda_mb']:.0f}"
        table.add_row(r["backend"], f"{rate:.1f}", ratio, *shares, f"{r['peak_rss_mb']:.0f}", cuda)
        if r["backend"] == "modernbert":
            five = rate / 5
            table.add_row("modernbert x5 axes", f"{five:.1f}",
                          f"{five / (base['n'] / base['total']):.2f}" if base else "", "", "", "", "", "", "")
    console.print(table)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"device": device, "rows": rows, "args": {k: str(v) for k, v in
                                                                               vars(args).items()}}, indent=2))
    console.print(f"json: {args.json}", highlight=False)


if __name__ == "__main__":
    main()
