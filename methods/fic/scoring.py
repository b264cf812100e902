"""Answer extraction and scoring per task type: every score is in [0, 1].

* ``translation``: the response without a leading "Translation:"-style label or code fence; BLEU (sacrebleu,
  the document as one segment) against the English document, divided by 100.
* ``code``: the last ```python block (else the whole response) must define the entry point; it runs with the
  prompt's context code and HumanEval's tests in :mod:`.sandbox`; 1 when every test passes.
* ``arithmetic``: the last integer in the response; 1 when it equals the exact answer.

:func:`extract` returns None when a response holds no answer attempt (the simulator then asks for one).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .sandbox import run_python

_FENCE = re.compile(r"```[ \t]*(?:python|py|Python)?[ \t]*\n(.*?)(?:```|$)", re.DOTALL)
_NUMBER = re.compile(r"(?<![\d.])-?\d+(?![\d.]*\d)")
_LABEL = re.compile(r"^\s*(here is|here's|sure|the)?[^\n:]{0,40}translation[^\n:]{0,20}:\s*", re.IGNORECASE)


def extract(task_type: str, response: str, entry_point: str = "") -> str | None:
    """The answer attempt in ``response`` for ``task_type``, or None when it holds none."""
    text = response.strip()
    if task_type == "arithmetic":
        numbers = _NUMBER.findall(text)
        return numbers[-1] if numbers else None
    if task_type == "code":
        blocks = _FENCE.findall(text)
        code = blocks[-1] if blocks else text
        return code if re.search(rf"\bdef\s+{re.escape(entry_point)}\s*\(", code) else None
    if task_type == "translation":
        fenced = _FENCE.findall(text)
        text = _LABEL.sub("", fenced[-1] if fenced else text).strip()
        return text or None
    raise ValueError(f"unknown task type {task_type!r}")


def score(instruction: Mapping[str, Any], answer: str | None, *, timeout: float = 10.0) -> float:
    """The score in [0, 1] of an extracted answer (0 for none)."""
    if answer is None:
        return 0.0
    task_type = instruction["task_type"]
    if task_type == "arithmetic":
        return float(int(answer) == int(instruction["reference"]))
    if task_type == "translation":
        import sacrebleu

        bleu = sacrebleu.corpus_bleu([" ".join(answer.split())], [[" ".join(instruction["reference"].split())]])
        return min(1.0, bleu.score / 100.0)  # sacrebleu's 100 can come out as 100.00000000000004
    if task_type == "code":
        return float(run_python(code_program(instruction, answer), timeout=timeout).passed)
    raise ValueError(f"unknown task type {task_type!r}")


def code_program(instruction: Mapping[str, Any], answer: str) -> str:
    """The program the sandbox runs: the prompt's context code, the completion, the tests and the check call."""
    prompt = instruction["reference"]  # prompt + canonical solution; keep the code before the target function
    cut = prompt.find(f"def {instruction['entry_point']}(")
    context = prompt[:cut] if cut >= 0 else ""
    return f"{context}\n{answer}\n\n{instruction['tests']}\n\ncheck({instruction['entry_point']})\n"
