"""Reference answerers: lm-eval models that know nothing, so that every task's score can be checked against its
baseline.

Two models are registered with lm-eval (``lm_eval.api.registry.register_model``) when this module is imported:

``constant``  (``strategy=first|majority|empty``)
    * ``first``: always the first choice. Multiple-choice requests (one ``loglikelihood`` request per
      (document, choice), the choice's position in ``Instance.idx``) give choice 0 the best log-likelihood;
      a generation whose prompt lists lettered options (``A. ...`` lines) answers the first letter; any other
      generation is empty.
    * ``majority``: always the label most frequent among the gold answers of the task's *training* split
      (read through lm-eval's own task object: ``doc_to_target``/``doc_to_choice`` of
      ``training_docs()``). A task with no training split whose answers form a closed set (choices, or option
      letters listed in the prompt: the video tasks) uses the gold answers of the evaluated split itself, so the
      answerer *is* the majority-class baseline of that split; a free-text task with no training split
      (RoleBench-Unlearn, TAR's descriptions) has no majority label and answers the empty string.
      Multiple-choice requests give the choice whose text is that label the best log-likelihood (choice 0 when
      a document does not offer it); a generation answers the label's text. The task is loaded from our task
      folder (``include_path=`` for another one).
    * ``empty``: every choice the same log-likelihood (lm-eval's argmax then takes the first) and every
      generation the empty string.

``random``  (``seed=0``)
    Uniform over the choices: every multiple-choice request gets an independent random log-likelihood; a
    generation whose prompt lists lettered options answers one of those letters uniformly; any other
    generation is one to eight words drawn uniformly from a fixed list of common English words.

Both take video tasks (``MULTIMODAL``; the frames are ignored) and need no torch. ``loglikelihood_rolling``
scores a text as uniform bytes (``len(utf-8 bytes) * -ln 256``). They read the documents lm-eval hands them
(``Instance.doc``) only through the task's own functions and only for the majority label.

Use them like any lm-eval model, after importing this module::

    import lm_eval, neurips26.tasks.answerers  # registers "constant" and "random"
    lm_eval.simple_evaluate(model="constant", model_args="strategy=first", tasks=[...], task_manager=...)
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from typing import Any

# lm-eval fills its model registry (hf, vllm, ...) only while the registry is empty: its own models are imported
# before ours are registered, or ours would hide them
import lm_eval.models  # noqa: F401
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from neurips26.tasks import TASKS_DIR

from neurips26.errors import UserError

MODELS = ("constant", "random")  # the lm-eval model names registered here
STRATEGIES = ("first", "majority", "empty")
OPTION_LINE = re.compile(r"^\s*\(?([A-Z])[.)]\s+\S", re.MULTILINE)
WORDS = ("the", "of", "and", "a", "to", "in", "is", "it", "that", "was", "for", "on", "are", "with", "as", "at",
         "be", "this", "have", "from", "or", "one", "had", "by", "word", "but", "not", "what", "all", "were",
         "when", "we", "there", "can", "an", "your", "which", "their", "said", "if", "do", "will", "each",
         "about", "how", "up", "out", "them", "then", "she")
BYTE_LOGPROB = -math.log(256)


def listed_options(prompt: str) -> list[str]:
    """The option letters a prompt lists as ``A. text`` lines (in order, without repeats)."""
    letters = OPTION_LINE.findall(prompt)
    return list(dict.fromkeys(letters)) if len(letters) >= 2 else []


def _rolling(requests: list[Instance]) -> list[float]:
    return [len(req.args[0].encode("utf-8")) * BYTE_LOGPROB for req in requests]


def _choice_text(task: Any, doc: dict, target: Any) -> str:
    """The gold answer of ``doc`` as text: the choice it indexes, or the target itself."""
    choices = task.doc_to_choice(doc) if task.config.doc_to_choice is not None else None
    if isinstance(target, list):
        target = target[0]
    if choices is not None and isinstance(target, int):
        return str(choices[target]).strip()
    return str(target).strip()


def majority_label(task: Any, evaluated: list[dict], closed: bool) -> str:
    """The most frequent gold answer text of ``task``'s training split; without one, of the ``evaluated``
    documents when the answers form a ``closed`` set (choices, option letters), else the empty string (a free
    text answer has no majority to take)."""
    docs = list(task.training_docs()) if task.has_training_docs() else []
    if not docs and not closed:
        return ""
    docs = docs or evaluated
    counts = Counter(_choice_text(task, doc, task.doc_to_target(doc)) for doc in docs)
    if not counts:
        raise UserError(f"task {task.config.task}: no documents to take a majority label from")
    return counts.most_common(1)[0][0]


class _Reference(LM):
    """Shared plumbing: video tasks accepted, frames ignored; no tokenizer; the chat template is the messages'
    text, one per line (so option lines stay readable)."""

    MULTIMODAL = True

    def __init__(self, batch_size: Any = None, max_batch_size: Any = None, device: Any = None) -> None:
        """``batch_size``, ``max_batch_size`` and ``device`` are what lm-eval passes every model; unused."""
        super().__init__()

    @property
    def tokenizer_name(self) -> str:
        return type(self).__name__

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        return "\n".join(str(m["content"]) for m in chat_history)

    def loglikelihood_rolling(self, requests: list[Instance], disable_tqdm: bool = False) -> list[float]:
        return _rolling(requests)


@register_model("constant")
class ConstantLM(_Reference):
    """Always the same answer: the first choice, the majority label, or nothing (``strategy=``)."""

    def __init__(self, strategy: str = "first", include_path: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if strategy not in STRATEGIES:
            raise UserError(f"constant: unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
        self.strategy = strategy
        self.include_path = include_path
        self._majority: dict[str, str] = {}
        self._manager: Any = None

    def _label(self, task_name: str, requests: list[Instance]) -> str:
        if task_name not in self._majority:
            from lm_eval.tasks import TaskManager  # lazy: the task index is only needed for `majority`

            if self._manager is None:
                self._manager = TaskManager(include_path=str(self.include_path or TASKS_DIR), include_defaults=False)
            task = self._manager.load(task_name)["tasks"][task_name]
            evaluated = list({req.doc_id: req.doc for req in requests if req.task_name == task_name}.values())
            closed = task.OUTPUT_TYPE == "multiple_choice" or all(listed_options(req.args[0]) for req in requests
                                                                  if req.task_name == task_name)
            self._majority[task_name] = majority_label(task, evaluated, closed)
        return self._majority[task_name]

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        if self.strategy == "empty":
            return [(0.0, False) for _ in requests]
        if self.strategy == "first":
            return [(0.0, True) if req.idx == 0 else (-1.0, False) for req in requests]
        # majority: the request whose continuation is the label; choice 0 where no choice of the doc is
        picked: dict[tuple[str, int], int] = {}
        for req in requests:
            if req.args[1].strip() == self._label(req.task_name, requests):
                picked.setdefault((req.task_name, req.doc_id), req.idx)
        return [(0.0, True) if req.idx == picked.get((req.task_name, req.doc_id), 0) else (-1.0, False)
                for req in requests]

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        out = []
        for req in requests:
            if self.strategy == "empty":
                out.append("")
            elif self.strategy == "majority":
                out.append(self._label(req.task_name, requests))
            else:
                options = listed_options(req.args[0])
                out.append(options[0] if options else "")
        return out


@register_model("random")
class RandomLM(_Reference):
    """Uniformly random answers: a random choice, a random listed letter, or a few random words (``seed=``)."""

    def __init__(self, seed: int | str = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rng = random.Random(int(seed))

    def loglikelihood(self, requests: list[Instance], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        return [(-self.rng.random(), False) for _ in requests]

    def generate_until(self, requests: list[Instance], disable_tqdm: bool = False) -> list[str]:
        out = []
        for req in requests:
            options = listed_options(req.args[0])
            if options:
                out.append(self.rng.choice(options))
            else:
                out.append(" ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(1, 8))))
        return out
