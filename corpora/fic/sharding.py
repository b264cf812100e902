"""The sharding rules: how each source becomes an ordered list of shards, and the requirements they preserve.

Code (HumanEval), deterministic, from the prompt alone:

1. The target function is the ``def`` named ``entry_point``; its signature is ``def name(args) -> ret:``; any
   code before it (imports, helper functions) is kept as context in shard 1.
2. The docstring is split into paragraphs at blank lines; a paragraph is cut where its first example line starts
   (``>>>``, ``Example``, ``For example``, ``Input:``, or a line with ``==>``, ``➞``, ``=>``).
3. Description text is split into sentences (and list items: lines starting ``-``, ``*`` or ``1.``).
   Example text is split into one item per ``>>>`` call (with its output lines), else one per example line.
4. Shard 1 (the intent) = the answer-format instruction, the signature, the first sentence and the context code;
   then one shard per further sentence, list item or example, in docstring order.

Every sentence, item and example is a *requirement*; each appears verbatim (whitespace-normalised) in exactly
the shards, so concatenating the shards restores every requirement of the full prompt (tested on all 164).

Translation (Lost in Conversation's WMT documents): the released shards (groups of sentences) in order, shard 1
prefixed with the intent ("Translate this German text into English"). Arithmetic (generated): intent, start
number, operation, answer format.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass

CODE_FORMAT = "Reply with the complete Python function in a ```python code block."
TRANSLATION_INTENT = "Translate this German text into English; reply with the English translation only."
ARITHMETIC_FORMAT = "Answer with the number only."
_EXAMPLE_START = re.compile(r"^\s*(>>>|for examples?\b|examples?\b|example \d|input:|\w+\(.*\)\s*(==>|➞|=>|==|->))",
                            re.IGNORECASE)
_EXAMPLE_LINE = re.compile(r"(==>|➞|=>|==|->|\bshould return\b)")
_SENTENCE_END = re.compile(r"(?<=[a-z)\]\"'][.!?])\s+(?=[A-Z(\"'])")
_LIST_ITEM = re.compile(r"^\s*([-*]|\d+[.)])\s+")


class ShardingError(ValueError):
    """A prompt the sharding rule cannot split (no target function, no docstring)."""


@dataclass(frozen=True)
class Sharded:
    """An instruction's shards in order and the requirements they preserve."""

    shards: list[str]
    requirements: list[str]


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces (how requirements are compared)."""
    return " ".join(text.split())


def _paragraphs(doc: str) -> Iterator[list[str]]:
    block: list[str] = []
    for line in doc.splitlines():
        if line.strip():
            block.append(line)
        elif block:
            yield block
            block = []
    if block:
        yield block


def _sentences(lines: list[str]) -> list[str]:
    items: list[str] = []
    current: list[str] = []
    for line in lines:  # list items stand alone; other lines join into running text
        if _LIST_ITEM.match(line):
            if current:
                items.append(" ".join(current))
                current = []
            items.append(line.strip())
        else:
            current.append(line.strip())
    if current:
        items.append(" ".join(current))
    return [normalise(s) for item in items for s in _SENTENCE_END.split(item) if s.strip()]


def _examples(lines: list[str]) -> list[str]:
    if any(line.lstrip().startswith(">>>") for line in lines):
        out: list[list[str]] = []
        for line in lines:
            if line.lstrip().startswith(">>>") or not out:
                out.append([line.strip()])
            else:
                out[-1].append(line.strip())
        return ["\n".join(item) for item in out]
    if sum(bool(_EXAMPLE_LINE.search(line)) for line in lines) >= 2:
        out = []
        for line in lines:  # a header line ("For example:") joins the first example
            if out and (_EXAMPLE_LINE.search(line) or _EXAMPLE_LINE.search(out[-1][-1]) or not out[-1]):
                out.append([line.strip()]) if _EXAMPLE_LINE.search(out[-1][-1]) else out[-1].append(line.strip())
            elif out:
                out[-1].append(line.strip())
            else:
                out.append([line.strip()])
        return [normalise(" ".join(item)) for item in out]
    return [normalise(" ".join(line.strip() for line in lines))]


def docstring_parts(doc: str) -> list[str]:
    """The docstring's sentences, list items and examples in order (see the module docstring); a short header
    ending in ``:`` ("Example 1:", "Note:") joins the item after it."""
    items: list[str] = []
    for block in _paragraphs(doc):
        cut = next((i for i, line in enumerate(block) if _EXAMPLE_START.match(line)), len(block))
        items += _sentences(block[:cut])
        if block[cut:]:
            items += _examples(block[cut:])
    merged: list[str] = []
    for item in items:
        if merged and merged[-1].endswith(":") and len(merged[-1]) <= 40:
            merged[-1] = f"{merged[-1]}\n{item}"
        else:
            merged.append(item)
    return merged


def _docstring(fn: ast.FunctionDef) -> str | None:
    """The function's docstring, or its first string statement (HumanEval/115 imports before its docstring)."""
    for node in fn.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return inspect.cleandoc(node.value.value)
    return None


def shard_code(prompt: str, entry_point: str) -> Sharded:
    """Shard a HumanEval prompt by the rule above; :class:`ShardingError` when it has no such documented function."""
    try:
        tree = ast.parse(prompt)
    except SyntaxError as exc:
        raise ShardingError(f"prompt does not parse: {exc.msg}") from None
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point), None)
    if fn is None:
        raise ShardingError(f"no function {entry_point!r} in the prompt")
    doc = _docstring(fn)
    if not doc or not doc.strip():
        raise ShardingError(f"{entry_point} has no docstring")
    stub = ast.FunctionDef(name=fn.name, args=fn.args, body=[ast.Pass()], decorator_list=[], returns=fn.returns,
                           type_params=[])
    signature = ast.unparse(ast.fix_missing_locations(stub)).splitlines()[0]
    context = "\n".join(prompt.splitlines()[:fn.lineno - 1]).strip()
    items = docstring_parts(doc)
    if _EXAMPLE_START.match(items[0]):
        raise ShardingError(f"{entry_point}: the docstring has no description before its examples")
    intent = f"Write a Python function `{signature}` — {items[0]} {CODE_FORMAT}"
    if context:
        intent += f"\nIt may use this code:\n```python\n{context}\n```"
    return Sharded([intent, *items[1:]], [signature, *(normalise(item) for item in items)])


def shard_translation(shards: list[str]) -> Sharded:
    """The released translation shards in order, the first prefixed with the intent."""
    texts = [s.strip() for s in shards]
    return Sharded([f"{TRANSLATION_INTENT}\n\n{texts[0]}", *texts[1:]], [TRANSLATION_INTENT, *texts])


def arithmetic(a: int, op: str, b: int) -> tuple[str, Sharded, int]:
    """A generated two-operand problem: (full prompt, its shards, the exact answer)."""
    word, answer = {"+": ("Add", a + b), "-": ("Subtract", a - b)}[op]
    full = f"What is {a} {op} {b}? {ARITHMETIC_FORMAT}"
    start, step = f"Start with the number {a}.", f"{word} {b}."
    shards = ["I need help with a quick calculation.", start, step, ARITHMETIC_FORMAT]
    return full, Sharded(shards, [start, step, ARITHMETIC_FORMAT]), answer
