"""The default task: procedurally generated multi-step arithmetic word problems with checkable answers.

    Mia has 7 marbles. She buys 3 bags with 4 marbles in each. Then she gives 5 marbles to Omar.
    How many marbles does Mia have now?   -> 14

Each problem starts from a count and applies ``steps`` operations (add, remove, add k groups of m);
the count never goes negative. Problems are a pure function of the seed.

Also a short-answer task: one-digit additions that carry (``7+5=`` -> ``12``), asked after a fixed
two-line few-shot prefix, whose two-digit answers make the expected accuracy computable exactly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

NAMES = [("Mia", "She"), ("Omar", "He"), ("Lena", "She"), ("Ravi", "He"), ("Sofia", "She"), ("Tom", "He"),
         ("Aisha", "She"), ("Ben", "He"), ("Yuki", "She"), ("Carlos", "He")]
ITEMS = ["apples", "marbles", "pencils", "stickers", "books", "cookies", "coins", "shells", "cards", "stamps"]
ADD = ["buys {k} more {items}", "finds {k} more {items}", "gets {k} {items} from {friend}"]
REMOVE = ["gives {k} {items} to {friend}", "loses {k} {items}", "uses {k} {items}"]
GROUPS = ["buys {k} bags with {m} {items} in each", "gets {k} boxes of {m} {items} each"]
INSTRUCTION = "Answer with the final number."


@dataclass(frozen=True)
class Problem:
    question: str
    answer: str
    steps: int


def problem(rng: random.Random, steps: int, max_start: int = 20) -> Problem:
    (name, pronoun), items = rng.choice(NAMES), rng.choice(ITEMS)
    friend = rng.choice([n for n, _ in NAMES if n != name])
    value = rng.randint(2, max_start)
    sentences = [f"{name} has {value} {items}."]
    for i in range(steps):
        kind = rng.choice(["add", "remove", "groups"] if value > 2 else ["add", "groups"])
        k, m = rng.randint(2, 10), rng.randint(2, 5)
        if kind == "add":
            template, value = rng.choice(ADD), value + k
        elif kind == "remove":
            k = min(k, value - 1)
            template, value = rng.choice(REMOVE), value - k
        else:
            k = min(k, 4)
            template, value = rng.choice(GROUPS), value + k * m
        clause = template.format(k=k, m=m, items=items, friend=friend)
        sentences.append(f"{pronoun if i == 0 else 'Then ' + pronoun.lower()} {clause}.")
    sentences.append(f"How many {items} does {name} have now?")
    return Problem(" ".join(sentences), str(value), steps)


def generate(n: int, steps: int = 2, seed: int = 0) -> list[Problem]:
    """``n`` problems of ``steps`` operations each."""
    if n < 1 or steps < 1:
        raise ValueError(f"need at least one problem and one step, got {n} problems of {steps} steps")
    rng = random.Random(seed)
    return [problem(rng, steps) for _ in range(n)]


def prompt_ids(tokenizer, question: str, instruction: str = INSTRUCTION) -> list[int]:
    """Token ids of the question as a user turn (chat template when the tokenizer has one)."""
    text = f"{question} {instruction}".strip()
    if getattr(tokenizer, "chat_template", None):
        return list(tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                                  tokenize=True, return_dict=True)["input_ids"])
    return tokenizer(f"Question: {text}\nAnswer:")["input_ids"]


def reference(answer: str) -> str:
    """The reference completion whose log-probability the gradient baselines attribute."""
    return f"The answer is {answer}."


FEW_SHOT = "12+7=19\n35+21=56\n"


def carry_additions() -> list[tuple[str, str]]:
    """All 45 one-digit sums a+b >= 10 as (few-shot prompt text, two-digit answer), in a fixed order."""
    return [(f"{FEW_SHOT}{a}+{b}=", str(a + b)) for a in range(1, 10) for b in range(1, 10) if a + b >= 10]
