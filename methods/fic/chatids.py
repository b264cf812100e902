"""Chat conversations as token ids, built turn by turn (ChatML, the embedded model's template).

A model's own reply stays exactly the ids it generated (no decode and re-encode), so an on-policy student is
trained on the context it really produced. :class:`ChatIds` optionally maps the tokenizer's ids to a compact
vocabulary (the ids a closed domain uses), so a small model trained here has a small embedding and output layer;
without one, ids are the tokenizer's own. :func:`generate` samples (or greedily decodes) one reply per context.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

START, END = "<|im_start|>", "<|im_end|>"


class ChatIds:
    """Token ids of chat turns under a ChatML template (its default system turn first unless ``system`` is
    False), in a compact vocabulary when ``vocab`` (the tokenizer ids kept, in order) is given."""

    def __init__(self, tokenizer: Any, vocab: Sequence[int] | None = None, system: bool = True) -> None:
        self.tokenizer = tokenizer
        probe = tokenizer.apply_chat_template([{"role": "user", "content": "X"}], tokenize=False,
                                              add_generation_prompt=True)
        head = probe.find(f"{START}user\n")
        if head < 0 or probe[head:] != f"{START}user\nX{END}\n{START}assistant\n":
            raise ValueError("the tokenizer's chat template is not ChatML")
        self.vocab = list(vocab) if vocab is not None else None
        self._local = {t: i for i, t in enumerate(self.vocab)} if self.vocab is not None else None
        self._prefix = self.encode(probe[:head]) if head and system else []
        self.end = self.encode(END)[0]
        self._newline = self.encode("\n")
        self._open = self.encode(f"{START}assistant\n")

    @classmethod
    def compact(cls, tokenizer: Any, texts: Iterable[str], system: bool = True) -> ChatIds:
        """A codec whose vocabulary is every id the template and ``texts`` use (sorted tokenizer ids)."""
        full = cls(tokenizer, system=system)
        used = set(full.prefix() + full.user("") + full.open_reply() + full._newline + [full.end])
        for text in texts:
            used.update(tokenizer(text, add_special_tokens=False)["input_ids"])
        return cls(tokenizer, sorted(used), system=system)

    @property
    def size(self) -> int:
        """The number of ids (the model's vocabulary size)."""
        return len(self.vocab) if self.vocab is not None else len(self.tokenizer)

    def encode(self, text: str) -> list[int]:
        """``text`` as ids (a KeyError for a token outside a compact vocabulary)."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return ids if self._local is None else [self._local[i] for i in ids]

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` (up to the first end-of-turn), stripped."""
        ids = list(ids)
        if self.end in ids:
            ids = ids[:ids.index(self.end)]
        tokens = ids if self.vocab is None else [self.vocab[i] for i in ids]
        return self.tokenizer.decode(tokens).strip()

    def prefix(self) -> list[int]:
        """The template's opening (its default system turn)."""
        return list(self._prefix)

    def user(self, text: str) -> list[int]:
        """One whole user turn."""
        return self.encode(f"{START}user\n{text}{END}\n")

    def open_reply(self) -> list[int]:
        """The assistant header a reply follows (the generation prompt)."""
        return list(self._open)

    def close_reply(self, generated: Sequence[int]) -> list[int]:
        """A generated reply as it stands in the conversation: cut after its end-of-turn (added when the reply
        ran out of tokens), then the template's newline."""
        ids = list(generated)
        ids = ids[:ids.index(self.end)] if self.end in ids else ids
        return ids + [self.end] + self._newline

    def conversation(self, messages: Sequence[Mapping[str, str]]) -> list[int]:
        """The ids of text ``messages`` (user and assistant turns) ending with the generation prompt; equal to the
        tokenizer's own chat template applied to them."""
        ids = self.prefix()
        for message in messages:
            if message["role"] == "user":
                ids += self.user(message["content"])
            else:
                ids += self.open_reply() + self.encode(message["content"]) + [self.end] + self._newline
        return ids + self.open_reply()


@torch.no_grad()
def generate(model: Any, contexts: Sequence[Sequence[int]], end: int, *, max_new_tokens: int,
             temperature: float = 0.0, generator: torch.Generator | None = None, batch_size: int = 64
             ) -> list[list[int]]:
    """One reply per context (left-padded batches, KV cache): greedy at temperature 0, else sampled with
    ``generator``. Each reply stops at (and keeps) ``end``."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    out: list[list[int]] = []
    for start in range(0, len(contexts), batch_size):
        batch = [list(c) for c in contexts[start:start + batch_size]]
        width = max(len(c) for c in batch)
        ids = torch.tensor([[end] * (width - len(c)) + c for c in batch], device=device)
        mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in batch], device=device)
        position = (mask.cumsum(-1) - 1).clamp(min=0)
        replies = [[] for _ in batch]
        done = [False] * len(batch)
        cache = None
        for _ in range(max_new_tokens):
            result = model(input_ids=ids, attention_mask=mask, position_ids=position, past_key_values=cache,
                           use_cache=True)
            cache = result.past_key_values
            logits = result.logits[:, -1].float()
            if temperature > 0:
                probs = torch.softmax(logits / temperature, dim=-1)
                token = torch.multinomial(probs.cpu(), 1, generator=generator).squeeze(1).to(device)
            else:
                token = logits.argmax(-1)
            for i, t in enumerate(token.tolist()):
                if not done[i]:
                    replies[i].append(t)
                    done[i] = t == end
            if all(done):
                break
            ids = token[:, None]
            mask = torch.cat([mask, torch.ones_like(ids)], dim=1)
            position = position[:, -1:] + 1
        out.extend(replies)
    model.train(was_training)
    return out
