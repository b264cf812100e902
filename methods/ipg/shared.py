"""A policy that computes what rows share only once: the same numbers as ``LMPolicy``, fewer model passes.

Multipliers on components of layer ``l`` and above leave layers below ``l`` untouched, so the residual
stream entering the first hooked layer depends on the tokens only: it is computed once per distinct token
sequence (and memoised). Above it, rows with the same multipliers and the same tokens give the same
log-probabilities and the same gradient of log pi with respect to their multipliers, so each distinct
(multipliers, offsets, tokens) group is run once. The IPG estimator draws N trajectories at each of M
values of alpha, and short answers repeat, so most rows are duplicates.

Per-row gradients stay exact: ``log_prob`` returns ``logp_g + (s_r - stop_grad(s_r)) . grad logp_g`` for row
``r`` of group ``g``, whose value is ``logp_g`` and whose gradient with respect to ``s_r`` is ``grad logp_g``.
Needs a Llama-style decoder (``model.model.embed_tokens``, ``layers``, ``norm``, ``rotary_emb``,
``model.lm_head``: Llama, Mistral, Qwen2, SmolLM2, ...). No KV cache: each decoding step reruns the hooked
layers over the whole sequence, which pays off for the short horizons this policy is for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn
from transformers.masking_utils import create_causal_mask

from neurips26.errors import UserError

from .policy import Counts, Rollouts, inverse_cdf
from .scaling import Site, intervene


def _groups(keys: list[bytes]) -> tuple[list[int], Tensor]:
    """(first row of each distinct key, group index of every row)."""
    first: dict[bytes, int] = {}
    index = [first.setdefault(key, len(first)) for key in keys]
    reps = [0] * len(first)
    for row, g in reversed(list(enumerate(index))):
        reps[g] = row
    return reps, torch.tensor(index)


def _row_bytes(x: Tensor | None, rows: int) -> list[bytes]:
    if x is None:
        return [b""] * rows
    x = x.detach().cpu().contiguous()
    if x.shape[0] == 1 and rows > 1:
        return [x[0].numpy().tobytes()] * rows
    return [row.numpy().tobytes() for row in x]


@dataclass
class SharedPolicy:
    """Sampling at ``temperature`` with multipliers on ``sites``, sharing the passes of identical rows.

    Same interface and same numbers as ``policy.LMPolicy`` (prompts are 1-D token-id tensors);
    ``batch_rows`` bounds the rows of one pass through the hooked layers."""

    model: nn.Module
    sites: list[Site]
    tokenizer: Any = None
    temperature: float = 1.0
    max_new_tokens: int = 4
    stop_ids: list[int] = field(default_factory=list)
    batch_rows: int = 64
    counts: Counts = field(default_factory=Counts)
    memo_size: int = 4096

    def __post_init__(self) -> None:
        if self.temperature <= 0:
            raise ValueError("temperature must be > 0 (the policy samples; log-probabilities need a proper softmax)")
        inner = getattr(self.model, "model", None)
        if not all(hasattr(inner, name) for name in ("embed_tokens", "layers", "norm", "rotary_emb")) or \
                not hasattr(self.model, "lm_head"):
            raise UserError(f"{type(self.model).__name__}: the shared-pass policy needs a Llama-style decoder")
        if not self.sites:
            raise UserError("the shared-pass policy needs at least one site")
        self.start = min(site.layer for site in self.sites)
        self.model.requires_grad_(False)
        self.model.eval()
        self.memo: dict[bytes, Tensor] = {}

    @property
    def n_components(self) -> int:
        return sum(site.size for site in self.sites)

    @property
    def horizon(self) -> int:
        return self.max_new_tokens

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def _layers(self, hidden: Tensor, layers: nn.ModuleList) -> Tensor:
        inner = self.model.model
        positions = torch.arange(hidden.shape[1], device=hidden.device)[None]
        mask = create_causal_mask(config=self.model.config, inputs_embeds=hidden, attention_mask=None, cache=None,
                                  position_ids=positions)
        rotary = inner.rotary_emb(hidden, position_ids=positions)
        for layer in layers:
            hidden = layer(hidden, attention_mask=mask, position_embeddings=rotary, position_ids=positions)
        return hidden

    @torch.no_grad()
    def residual(self, ids: Tensor) -> Tensor:
        """The residual stream entering the first hooked layer for token rows ``ids`` [B, T] -> [B, T, d]."""
        keys = _row_bytes(ids, ids.shape[0])
        missing = list(dict.fromkeys(k for k in keys if k not in self.memo))
        if missing:
            if len(self.memo) + len(missing) > self.memo_size:
                self.memo.clear()
            rows = [keys.index(k) for k in missing]
            for at in range(0, len(rows), self.batch_rows):
                chunk = ids[rows[at:at + self.batch_rows]].to(self.device)
                hidden = self._layers(self.model.model.embed_tokens(chunk), self.model.model.layers[:self.start])
                for k, h in zip(missing[at:at + self.batch_rows], hidden, strict=True):
                    self.memo[k] = h
        return torch.stack([self.memo[k] for k in keys])

    def _logits(self, ids: Tensor, scales: Tensor, offsets: Tensor | None, keep: int) -> Tensor:
        """Logits [G, keep, V] at the last ``keep`` positions of ``ids`` [G, T] under per-row multipliers."""
        out = []
        for at in range(0, ids.shape[0], self.batch_rows):
            part = slice(at, at + self.batch_rows)
            hidden = self.residual(ids[part])
            with intervene(self.sites, scales[part], None if offsets is None else offsets[part]):
                hidden = self._layers(hidden, self.model.model.layers[self.start:])
            out.append(self.model.lm_head(self.model.model.norm(hidden[:, -keep:])))
        return torch.cat(out)

    def _row_params(self, scales: Tensor, offsets: Tensor | None, rows: int) -> tuple[Tensor, Tensor | None]:
        scales = scales.to(self.device).expand(rows, -1) if scales.shape[0] == 1 else scales.to(self.device)
        if offsets is not None:
            offsets = offsets.to(self.device).expand(rows, -1) if offsets.shape[0] == 1 else offsets.to(self.device)
        return scales, offsets

    @torch.no_grad()
    def sample(self, prompt: Tensor, scales: Tensor, uniforms: Tensor, offsets: Tensor | None = None) -> Rollouts:
        """One trajectory per row of ``uniforms`` [B, max_new_tokens], until a stop token or ``max_new_tokens``."""
        rows = uniforms.shape[0]
        scales, offsets = self._row_params(scales, offsets, rows)
        params = [a + b for a, b in zip(_row_bytes(scales, rows), _row_bytes(offsets, rows), strict=True)]
        seqs = prompt.to(self.device)[None].expand(rows, -1)
        stop = torch.tensor(self.stop_ids or [-1], device=self.device)
        pad = self.stop_ids[0] if self.stop_ids else 0
        done = torch.zeros(rows, dtype=torch.bool, device=self.device)
        logp = torch.zeros(rows, device=self.device)
        tokens, mask = [], []
        for step in range(self.max_new_tokens):
            reps, index = _groups([p + s for p, s in zip(params, _row_bytes(seqs, rows), strict=True)])
            logits = self._logits(seqs[reps], scales[reps], None if offsets is None else offsets[reps], 1)
            self.counts.decode_steps += 1
            logprobs = torch.log_softmax(logits[:, -1].float() / self.temperature, dim=-1)[index.to(self.device)]
            nxt = inverse_cdf(logprobs.exp(), uniforms[:, step].to(self.device))
            logp += torch.where(done, 0.0, logprobs.gather(1, nxt[:, None]).squeeze(1))
            nxt = torch.where(done, pad, nxt)
            tokens.append(nxt)
            mask.append(~done)
            done = done | torch.isin(nxt, stop)
            seqs = torch.cat([seqs, nxt[:, None]], 1)
            if done.all():
                break
        self.counts.generate_batches += 1
        self.counts.generate_rows += rows
        result = Rollouts(torch.stack(tokens, 1), torch.stack(mask, 1), logp)
        self.counts.tokens_generated += int(result.mask.sum())
        return result

    def log_prob(self, prompt: Tensor, rollouts: Rollouts, scales: Tensor, offsets: Tensor | None = None,
                 temperature: float | None = None) -> Tensor:
        """Sum over generated tokens of log pi(y_t | y_<t, prompt) under the multipliers, one value per row [B];
        differentiable with respect to ``scales`` (each row's own gradient), as ``LMPolicy.log_prob``."""
        rows, length = rollouts.tokens.shape
        scales_rows, offsets = self._row_params(scales, offsets, rows)
        ids = torch.cat([prompt.to(self.device)[None].expand(rows, -1), rollouts.tokens.to(self.device)], 1)
        tokens_mask = rollouts.mask.to(self.device)
        keys = [a + b + c + d for a, b, c, d in zip(_row_bytes(scales_rows, rows), _row_bytes(offsets, rows),
                                                     _row_bytes(ids, rows), _row_bytes(tokens_mask, rows), strict=True)]
        reps, index = _groups(keys)
        index = index.to(self.device)
        grad = torch.is_grad_enabled() and scales.requires_grad
        leaf = scales_rows[reps].detach().clone().requires_grad_(grad)
        with torch.enable_grad() if grad else torch.no_grad():
            logits = self._logits(ids[reps, :-1], leaf, None if offsets is None else offsets[reps], length)
            logp = torch.log_softmax(logits.float() / (temperature or self.temperature), dim=-1)
            logp = (logp.gather(-1, ids[reps, -length:, None]).squeeze(-1) * tokens_mask[reps]).sum(1)
        if not grad:
            self.counts.forward_batches += 1
            return logp[index]
        (group_grad,) = torch.autograd.grad(logp.sum(), leaf)
        self.counts.gradient_batches += 1
        self.counts.gradient_rows += len(reps)
        return logp.detach()[index] + ((scales_rows - scales_rows.detach()) * group_grad[index]).sum(1)

    def outputs(self, rollouts: Rollouts) -> list[Any]:
        rows = [t[m].tolist() for t, m in zip(rollouts.tokens.cpu(), rollouts.mask.cpu(), strict=True)]
        if self.tokenizer is None:
            return [tuple(r) for r in rows]
        return self.tokenizer.batch_decode(rows, skip_special_tokens=True)
