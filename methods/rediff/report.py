"""ReDiff evaluations as lm-eval-shaped files, a table and the speed-quality plot.

One run (a decoder at one number of tokens per step) is written as lm-eval writes a task's run:
``results_<date>.json`` (``results[task]["exact_match,none"]`` and its stderr, ``configs[task]["metadata"]`` with
the protocol, the task settings and the data provenance, ``n-samples``, ``versions``, ``config``) and
``samples_rediff_arithmetic_<date>.jsonl`` (per problem: ``doc_id``, ``doc``, ``target``, ``resps``,
``filtered_resps``, ``exact_match`` and the cascade record: commit steps, commit-time and final correctness,
revisions, every draft). :func:`neurips26.results.read_run` reads them back; the cascade metrics of the run are
under the results' ``rediff`` key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from neurips26 import runfiles
from neurips26.output import save_figure

from .cascade import per_problem
from .data import DATA_VERSION, Problems, detokenize
from .decoding import Trace
from .protocol import TASK, TASK_VERSION

COLUMNS = (("decoder", "decoder", "{}"), ("tokens_per_step", "k", "{}"), ("steps", "steps", "{}"),
           ("forward_passes", "passes", "{}"), ("exact_match", "exact match", "{:.3f}"),
           ("token_acc", "token acc", "{:.3f}"), ("commit_error_rate", "P(err)", "{:.3f}"),
           ("cascade_lift", "cascade lift", "{:+.3f}"), ("correction_rate", "corrected", "{:.3f}"),
           ("distinct_2", "distinct-2", "{:.3f}"), ("longest_repeat", "longest rep.", "{:.2f}"))


def problem_rows(problems: Problems, trace: Trace) -> list[dict[str, Any]]:
    """One row per problem: the prompt and answer, the final response, exact match, the cascade record and drafts."""
    rows = []
    for i, record in enumerate(per_problem(trace, problems.targets)):
        prompt, answer = problems.text(i)
        rows.append({"doc_id": i, "doc": {"prompt": prompt, "answer": answer}, "target": answer,
                     "response": detokenize(trace.final[i]),
                     "arguments": {"gen_args_0": {"arg_0": prompt,
                                                  "arg_1": {"tokens_per_step": trace.tokens_per_step}}},
                     **record, "drafts": [detokenize(d) for d in trace.drafts[i]]})
    return rows


def write_run(folder: Path, problems: Problems, trace: Trace, summary: Mapping[str, Any], model_name: str,
              model_args: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> Path:
    """Write the results and samples files of one run into ``folder``; the results file's path."""
    # The problems are generated with exact answers: the fixed seed-0 set is the released evaluation set.
    data = {"resource": "rediff_arithmetic", "config": f"digits{problems.digits}", "version": DATA_VERSION,
            "manifest_sha256": problems.digest(), "demo": False}
    return runfiles.write_run(
        folder, TASK, problem_rows(problems, trace), metrics=["exact_match"], model_name=model_name,
        model_args=model_args, data=data, version=TASK_VERSION, model="rediff", extra=extra,
        scores={"exact_match": (summary["exact_match"], summary["exact_match_stderr"])},
        settings={"digits": problems.digits, "tokens_per_step": trace.tokens_per_step},
        task_config={"generation_kwargs": {"tokens_per_step": trace.tokens_per_step}},
        sections={"rediff": {"cascade": dict(summary)}})


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text table of speed-quality rows (each a :func:`~.cascade.summarise` dict plus ``decoder``)."""
    cells = [[title for _, title, _ in COLUMNS]]
    cells += [[fmt.format(row[key]) for key, _, fmt in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join([lines[0], "-" * len(lines[0]), *lines[1:]])


def plot(curves: Mapping[str, Sequence[Mapping[str, Any]]], path: Path) -> Path:
    """The speed-quality curves (exact match and cascade lift against tokens per step), one line per decoder."""
    import matplotlib  # lazy: plotting is only needed by `neurips26 rediff eval`

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: as above

    figure, (quality, lift) = plt.subplots(1, 2, figsize=(10, 4))
    for name, rows in curves.items():
        ks = [r["tokens_per_step"] for r in rows]
        quality.plot(ks, [r["exact_match"] for r in rows], marker="o", label=name)
        lift.plot(ks, [r["cascade_lift"] for r in rows], marker="o", label=name)
    for axis, label in ((quality, "exact match"), (lift, "cascade lift")):
        axis.set_xscale("log", base=2)
        axis.set_xlabel("tokens committed per step")
        axis.set_ylabel(label)
        axis.grid(alpha=0.3)
        axis.legend()
    lift.axhline(0.0, color="grey", lw=0.8)
    quality.set_ylim(-0.02, 1.02)
    figure.suptitle("Parallel decoding: speed against quality, with and without refinement")
    return save_figure(figure, path)
