"""Harness overhead of lm-eval: its wall time against the same forward passes done directly with transformers.

On the embedded model (SmolLM2-135M-Instruct) and a fixed set of requests taken from lm-eval itself:

* ``locus_domain`` (multiple_choice -> loglikelihood requests, ``--limit`` docs, 4 choices each);
* ``locus_catchline`` (generate_until requests, ``--limit-gen`` docs; 0 skips it).

For each request type the lm-eval side is timed twice: ``simple_evaluate(model="hf", ...)`` end to end (model load
included), and ``simple_evaluate`` given an ``HFLM`` built beforehand (load excluded). The direct side tokenizes the
same way, batches the same way (length-sorted, ``--batch-size``, one forward per distinct input as lm-eval's logits
cache does) and is timed without its model load. Its results are checked against lm-eval's per-request results.

    python bench/eval_overhead.py --limit 32 --limit-gen 8 --batch-size 8 --device auto
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from neurips26.corpora import RESOURCES
from neurips26.tasks.evaluation import task_manager
from rich.console import Console
from rich.table import Table
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from neurips26 import models, settings

LOGLIKELIHOOD_TASK = "locus_domain"
GENERATION_TASK = "locus_catchline"

console = Console(width=None if sys.stdout.isatty() else 150)  # a wide table in logs too


@dataclass
class Row:
    """Timings of one request type on both sides."""

    request_type: str
    task: str
    requests: int
    forwards: int  # sequences through the model (loglikelihood) or generate rows
    tokens: int  # input tokens forwarded (loglikelihood) or tokens generated (generate_until)
    lm_eval_e2e_s: float
    lm_eval_s: float
    direct_s: float
    check: str


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``(fn(), seconds)``, synchronising CUDA so that queued kernels are counted."""
    start = time.perf_counter()
    result = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return result, time.perf_counter() - start


def task_requests(task_name: str, limit: int) -> list[tuple]:
    """The ``arguments`` of the requests lm-eval builds for ``task_name`` with ``limit`` docs."""
    task = task_manager().load([task_name])["tasks"][task_name]
    task.build_all_requests(limit=limit)
    return [instance.arguments for instance in task.instances]


def request_key(arguments: tuple) -> tuple[str, str]:
    """A hashable key of a request: (context, continuation) or (context, generation kwargs as text)."""
    return arguments[0], str(arguments[1])


def lm_eval_results(model: Any, task_name: str, limit: int, batch_size: int, device: str) -> dict[tuple, Any]:
    """Run ``simple_evaluate`` on one task; per-request responses keyed by ``request_key``."""
    import lm_eval

    model_args = {"pretrained": str(models.default_model_dir()), "dtype": "float32"}
    out = lm_eval.simple_evaluate(model=model, model_args=model_args, tasks=[task_name], limit=limit,
                                  batch_size=batch_size, device=device, task_manager=task_manager())
    return {request_key(args): resp[0]
            for sample in out["samples"][task_name]
            for args, resp in zip(sample["arguments"], sample["resps"], strict=True)}


def encode_pair(tokenizer: PreTrainedTokenizerBase, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """lm-eval's split: trailing context spaces go to the continuation, which is what the whole adds to the context."""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        context, continuation = context[:-n_spaces], context[-n_spaces:] + continuation
    whole = tokenizer.encode(context + continuation)
    context_ids = tokenizer.encode(context)
    return context_ids, whole[len(context_ids):]


def direct_loglikelihood(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, requests: list[tuple[str, str]],
                         batch_size: int, device: str) -> tuple[list[float], int, int]:
    """Summed continuation log-probs per request, the number of forwarded sequences and their tokens."""
    pairs = [encode_pair(tokenizer, context, continuation) for context, continuation in requests]
    # The input is (context + continuation)[:-1]; requests with the same input share one forward (lm-eval's cache).
    inputs: dict[tuple[int, ...], list[int]] = {}
    for i, (context_ids, continuation_ids) in enumerate(pairs):
        inputs.setdefault(tuple(context_ids + continuation_ids)[:-1], []).append(i)
    ordered = sorted(inputs.items(), key=lambda item: -len(item[0]))
    scores = [0.0] * len(requests)
    with torch.inference_mode():
        for start in range(0, len(ordered), batch_size):
            batch = ordered[start:start + batch_size]
            width = max(len(ids) for ids, _ in batch)
            input_ids = torch.full((len(batch), width), tokenizer.pad_token_id)
            attention_mask = torch.zeros_like(input_ids)
            for row, (ids, _) in enumerate(batch):  # right padding
                input_ids[row, :len(ids)] = torch.tensor(ids)
                attention_mask[row, :len(ids)] = 1
            logits = model(input_ids=input_ids.to(device), attention_mask=attention_mask.to(device)).logits
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            for row, (ids, members) in enumerate(batch):
                for i in members:
                    continuation_ids = pairs[i][1]
                    positions = torch.arange(len(ids) - len(continuation_ids), len(ids))
                    scores[i] = logprobs[row, positions, torch.tensor(continuation_ids)].sum().item()
    return scores, len(ordered), sum(len(ids) for ids in inputs)


def direct_generate(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, requests: list[tuple[str, dict]],
                    batch_size: int, device: str) -> tuple[list[str], int]:
    """Greedy generations (cut at the first stop sequence) and tokens generated; one task, one set of gen kwargs."""
    contexts = [context for context, _ in requests]
    gen_kwargs = requests[0][1]
    until = list(gen_kwargs["until"])
    order = sorted(range(len(contexts)), key=lambda i: -len(tokenizer.encode(contexts[i])))
    texts = [""] * len(contexts)
    generated = 0
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            encoded = tokenizer([contexts[i] for i in batch], return_tensors="pt", padding=True,
                                padding_side="left").to(device)
            output = model.generate(**encoded, do_sample=False, max_new_tokens=gen_kwargs["max_gen_toks"],
                                    stop_strings=until, tokenizer=tokenizer, pad_token_id=tokenizer.pad_token_id)
            new_tokens = output[:, encoded["input_ids"].shape[1]:]
            generated += int((new_tokens != tokenizer.pad_token_id).sum())
            for row, i in enumerate(batch):
                text = tokenizer.decode(new_tokens[row], skip_special_tokens=True)
                for stop in until:
                    text = text.split(stop)[0]
                texts[i] = text
    return texts, generated


def peak_rss_mib() -> float:
    """Peak resident set size of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=32, help="locus_domain docs (4 loglikelihood requests each)")
    parser.add_argument("--limit-gen", type=int, default=8, help="locus_catchline docs (generate_until); 0 skips")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--device", default="auto", help="auto (cuda when available), cpu or cuda")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    logging.getLogger("lm_eval").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="neurips26-bench-") as data:
        os.environ["NEURIPS26_DATA"] = data  # a fresh LOCUS folder, built from the embedded sample
        run(args)


def run(args: argparse.Namespace) -> None:
    """Build the requests, time both sides per request type and print the report."""
    device = models.device() if args.device == "auto" else args.device
    _, build_s = timed(lambda: RESOURCES.get("locus")(out=settings.data_root() / "locus"))  # tasks never build
    model_dir = str(models.default_model_dir())
    console.print(f"model {model_dir} on {device} ({torch.get_num_threads()} CPU threads), "
                  f"LOCUS built in {build_s:.1f} s under {os.environ['NEURIPS26_DATA']}")

    from lm_eval.models.huggingface import HFLM

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token_id = tokenizer.eos_token_id
    model, direct_load_s = timed(
        lambda: AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device).eval())
    lm, hflm_load_s = timed(lambda: HFLM(pretrained=model_dir, dtype="float32", batch_size=args.batch_size,
                                          device=device))
    with torch.inference_mode():  # warm-up, so that neither side pays first-call costs
        for warm in (model, lm.model):
            warm(input_ids=torch.tensor([tokenizer.encode("Warm-up.")], device=device))

    def compare(task_name: str, limit: int, direct: Callable) -> tuple[list, Any, float, dict, float, float]:
        """Requests, direct output and seconds, lm-eval's per-request results, e2e and given-LM seconds."""
        requests = task_requests(task_name, limit)
        direct_out, direct_s = timed(lambda: direct(model, tokenizer, requests, args.batch_size, device))
        _, e2e_s = timed(lambda: lm_eval_results("hf", task_name, limit, args.batch_size, device))
        reference, lm_eval_s = timed(lambda: lm_eval_results(lm, task_name, limit, args.batch_size, device))
        return requests, direct_out, direct_s, reference, e2e_s, lm_eval_s

    requests, (scores, forwards, tokens), direct_s, reference, e2e_s, lm_eval_s = compare(
        LOGLIKELIHOOD_TASK, args.limit, direct_loglikelihood)
    max_diff = max(abs(score - reference[request_key(request)][0])
                   for score, request in zip(scores, requests, strict=True))
    rows = [Row("loglikelihood", LOGLIKELIHOOD_TASK, len(requests), forwards, tokens, e2e_s, lm_eval_s, direct_s,
                f"max |Δ logprob| {max_diff:.1e}")]
    if args.limit_gen > 0:
        requests, (texts, generated), direct_s, reference, e2e_s, lm_eval_s = compare(
            GENERATION_TASK, args.limit_gen, direct_generate)
        same = sum(text == reference[request_key(request)] for text, request in zip(texts, requests, strict=True))
        rows.append(Row("generate_until", GENERATION_TASK, len(requests), len(requests), generated, e2e_s, lm_eval_s,
                        direct_s, f"{same}/{len(requests)} texts identical"))
    print_report(rows, args.batch_size, device, direct_load_s, hflm_load_s)


def print_report(rows: list[Row], batch_size: int, device: str, direct_load_s: float, hflm_load_s: float) -> None:
    table = Table(title=f"lm-eval harness overhead, embedded SmolLM2-135M-Instruct, batch size {batch_size}, {device}",
                  caption="tokens: input tokens forwarded (loglikelihood) or generated (generate_until). lm-eval e2e: "
                          'simple_evaluate(model="hf") with its model load; no load: given a built HFLM. '
                          "Ratios and tok/s are against the direct run (model loaded beforehand).")
    headers = ("request type", "requests", "forward\nseqs", "tokens", "lm-eval\ne2e s", "lm-eval\nno load s",
               "direct s", "ratio\ne2e", "ratio\nno load", "overhead s\nno load", "tok/s\nlm-eval", "tok/s\ndirect")
    for header in headers:
        table.add_column(header, justify="left" if header == "request type" else "right")
    for row in rows:
        table.add_row(row.request_type, str(row.requests), str(row.forwards), str(row.tokens),
                      f"{row.lm_eval_e2e_s:.1f}", f"{row.lm_eval_s:.1f}", f"{row.direct_s:.1f}",
                      f"{row.lm_eval_e2e_s / row.direct_s:.2f}x", f"{row.lm_eval_s / row.direct_s:.2f}x",
                      f"{row.lm_eval_s - row.direct_s:+.1f}", f"{row.tokens / row.lm_eval_s:.0f}",
                      f"{row.tokens / row.direct_s:.0f}")
    console.print(table)
    for row in rows:
        console.print(f"check {row.task}: {row.check}")
    console.print(f"model load: HFLM {hflm_load_s:.2f} s, AutoModelForCausalLM {direct_load_s:.2f} s; "
                  f"peak RSS {peak_rss_mib():.0f} MiB (whole process: direct model, built HFLM, simple_evaluate's own)")
    if torch.cuda.is_available():
        console.print(f"peak CUDA memory {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
