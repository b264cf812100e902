"""The five settings of Lost in Conversation and a rule-based user simulator that plays them (no LLM needed).

* ``full``: the original single-turn instruction.
* ``concat``: every shard in one turn, as a bullet list (same information, shard wording).
* ``sharded``: turn k reveals shard k, whatever the assistant said before: a question, an early answer
  attempt or a stall all get the next shard, and only it.
* ``recap``: ``sharded``, then one more turn restating every shard.
* ``snowball``: turn k restates shards 1..k-1 and reveals shard k.

When every shard is out and the assistant's last reply holds no answer attempt, the simulator asks once for
the final answer. The conversation's answer is its last answer attempt (as LiC scores the final attempt). The
simulator only reads the assistant's replies to say what they were (``question``, ``answer``, ``stall``) in the
transcript; what it sends next never depends on the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

SETTINGS = ("full", "concat", "sharded", "recap", "snowball")
SINGLE_TURN = ("full", "concat")
CONCAT_LEAD = "Here is my whole request:"
RECAP_LEAD = "To recap, here is everything I asked for:"
SNOWBALL_LEAD = "So far I said:"
FINAL_ASK = "Please give your complete final answer now."

Extractor = Callable[[str], str | None]


def bullets(shards: list[str]) -> str:
    """Shards as a bullet list, one per line (continuation lines indented)."""
    return "\n".join("- " + shard.replace("\n", "\n  ") for shard in shards)


@dataclass
class Conversation:
    """One simulation of one instruction in one setting: the chat so far and what each turn was."""

    instruction: Mapping[str, Any]
    setting: str
    simulation: int
    messages: list[dict[str, str]] = field(default_factory=list)
    revealed: int = 0  # shards revealed so far
    recapped: bool = False
    asked_final: bool = False
    done: bool = False
    turns: list[dict[str, Any]] = field(default_factory=list)

    @property
    def answer(self) -> str | None:
        """The last answer attempt of the conversation (None when the assistant never gave one)."""
        return next((t["answer"] for t in reversed(self.turns) if t["answer"] is not None), None)


class UserSimulator:
    """Plays the user of a setting: opens the conversation and answers each assistant reply (see module doc)."""

    def __init__(self, extract: Callable[[Mapping[str, Any], str], str | None]) -> None:
        self.extract = extract  # (instruction, response) -> answer attempt or None

    def start(self, instruction: Mapping[str, Any], setting: str, simulation: int = 0) -> Conversation:
        """A new conversation with its first user message."""
        if setting not in SETTINGS:
            raise ValueError(f"unknown setting {setting!r}; known: {', '.join(SETTINGS)}")
        conversation = Conversation(instruction, setting, simulation)
        shards = list(instruction["shards"])
        if setting == "full":
            first, conversation.revealed = instruction["full_prompt"], len(shards)
        elif setting == "concat":
            first, conversation.revealed = f"{CONCAT_LEAD}\n{bullets(shards)}", len(shards)
        else:
            first, conversation.revealed = shards[0], 1
        conversation.messages.append({"role": "user", "content": first})
        return conversation

    def reply(self, conversation: Conversation, response: str) -> None:
        """Record the assistant's ``response`` and add the next user message, or end the conversation."""
        answer = self.extract(conversation.instruction, response)
        kind = "answer" if answer is not None else "question" if "?" in response else "stall"
        conversation.messages.append({"role": "assistant", "content": response})
        conversation.turns.append({"turn": len(conversation.turns) + 1, "revealed": conversation.revealed,
                                   "response": response, "kind": kind, "answer": answer})
        message = self._next(conversation, answer is not None)
        if message is None:
            conversation.done = True
        else:
            conversation.messages.append({"role": "user", "content": message})

    def _next(self, conversation: Conversation, answered: bool) -> str | None:
        shards = list(conversation.instruction["shards"])
        if conversation.revealed < len(shards):
            new = shards[conversation.revealed]
            conversation.revealed += 1
            if conversation.setting == "snowball":
                return f"{SNOWBALL_LEAD}\n{bullets(shards[:conversation.revealed - 1])}\nAnd: {new}"
            return new
        if conversation.setting == "recap" and not conversation.recapped:
            conversation.recapped = True
            return f"{RECAP_LEAD}\n{bullets(shards)}"
        if not answered and not conversation.asked_final:
            conversation.asked_final = True
            return FINAL_ASK
        return None
