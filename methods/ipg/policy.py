"""A causal LM as a policy over completions, with component multipliers and a count of the passes it makes.

A policy samples trajectories (completions) for a prompt with per-row component multipliers and gives
the differentiable log-probability of given trajectories under given multipliers. ``LMPolicy`` does
this for any transformers causal LM; the tests drive the same estimator with a tiny enumerable policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .scaling import Site, intervene


@dataclass
class Rollouts:
    """Sampled trajectories: tokens [B, T], mask [B, T] (True where generated, the stop token included) and,
    from sampling, the log-probability of each row under the policy that drew it [B]."""

    tokens: Tensor
    mask: Tensor
    logp: Tensor | None = None

    def __len__(self) -> int:
        return self.tokens.shape[0]

    def __getitem__(self, rows: Tensor | slice) -> Rollouts:
        mask = self.mask[rows]
        length = int(mask.sum(1).max()) if mask.numel() else 0  # drop columns that are padding in every row
        return Rollouts(self.tokens[rows][:, :length], mask[:, :length], None if self.logp is None else self.logp[rows])

    @staticmethod
    def cat(parts: list[Rollouts], pad: int = 0) -> Rollouts:
        length = max(p.tokens.shape[1] for p in parts)
        tokens = torch.cat([F.pad(p.tokens, (0, length - p.tokens.shape[1]), value=pad) for p in parts])
        mask = torch.cat([F.pad(p.mask, (0, length - p.mask.shape[1]), value=False) for p in parts])
        logp = None if any(p.logp is None for p in parts) else torch.cat([p.logp for p in parts])
        return Rollouts(tokens, mask, logp)


@dataclass
class Counts:
    """Model passes made. A generate batch is one forward pass over whole trajectories (``decode_steps`` model
    calls: the prompt, then one per new token); a gradient batch is one forward+backward pass over whole
    trajectories; ``*_rows`` count trajectories."""

    generate_batches: int = 0
    generate_rows: int = 0
    decode_steps: int = 0
    tokens_generated: int = 0
    gradient_batches: int = 0
    gradient_rows: int = 0
    forward_batches: int = 0  # teacher-forced passes without gradient

    def passes(self) -> int:
        return self.generate_batches + self.gradient_batches + self.forward_batches


def inverse_cdf(probs: Tensor, u: Tensor) -> Tensor:
    """Draw one index per row of ``probs`` [B, V] from uniforms ``u`` [B] (common random numbers across rows)."""
    cdf = probs.cumsum(-1)
    return torch.searchsorted(cdf, (u * cdf[:, -1]).unsqueeze(1), right=True).squeeze(1).clamp(max=probs.shape[1] - 1)


class Policy(Protocol):
    """What the IPG estimator needs from a model.

    ``sample`` draws step t of row b from the uniform ``uniforms[b, t]`` ([B, horizon]), so rows given the
    same uniforms share their randomness. ``scales`` and ``offsets`` are [B, C] (or [1, C])."""

    n_components: int
    horizon: int
    device: torch.device
    counts: Counts

    def sample(self, prompt: Any, scales: Tensor, uniforms: Tensor, offsets: Tensor | None = None) -> Rollouts: ...

    def log_prob(self, prompt: Any, rollouts: Rollouts, scales: Tensor, offsets: Tensor | None = None) -> Tensor: ...

    def outputs(self, rollouts: Rollouts) -> list[Any]: ...


@dataclass
class LMPolicy:
    """Sampling at ``temperature`` from a causal LM (no top-k/top-p, so log pi is exact), with multipliers on ``sites``.

    Prompts are 1-D token-id tensors. ``outputs`` decodes completions with ``tokenizer`` (token tuples without one).
    """

    model: nn.Module
    sites: list[Site]
    tokenizer: Any = None
    temperature: float = 1.0
    max_new_tokens: int = 32
    stop_ids: list[int] = field(default_factory=list)
    counts: Counts = field(default_factory=Counts)

    def __post_init__(self) -> None:
        if self.temperature <= 0:
            raise ValueError("temperature must be > 0 (the policy samples; log-probabilities need a proper softmax)")
        if not self.stop_ids:
            eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
            if eos is None and self.tokenizer is not None:
                eos = self.tokenizer.eos_token_id
            self.stop_ids = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))
        self.model.requires_grad_(False)  # gradients flow to the multipliers only
        self.model.eval()

    @property
    def n_components(self) -> int:
        return sum(site.size for site in self.sites)

    @property
    def horizon(self) -> int:
        return self.max_new_tokens

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def with_sites(self, sites: list[Site]) -> LMPolicy:
        """The same model and settings with other sites; passes are counted together."""
        return LMPolicy(self.model, sites, self.tokenizer, self.temperature, self.max_new_tokens,
                        self.stop_ids, self.counts)

    @torch.no_grad()
    def sample(self, prompt: Tensor, scales: Tensor, uniforms: Tensor, offsets: Tensor | None = None) -> Rollouts:
        """One trajectory per row of ``uniforms`` [B, max_new_tokens], until a stop token or ``max_new_tokens``."""
        rows = uniforms.shape[0]
        uniforms = uniforms.to(self.device)
        ids = prompt.to(self.device)[None].expand(rows, -1)
        stop = torch.tensor(self.stop_ids or [-1], device=self.device)
        pad = self.stop_ids[0] if self.stop_ids else 0
        done = torch.zeros(rows, dtype=torch.bool, device=self.device)
        logp = torch.zeros(rows, device=self.device)
        tokens, mask = [], []
        with intervene(self.sites, scales, offsets):
            out = self.model(input_ids=ids, use_cache=True, logits_to_keep=1)
            for step in range(self.max_new_tokens):
                logprobs = torch.log_softmax(out.logits[:, -1].float() / self.temperature, dim=-1)
                nxt = inverse_cdf(logprobs.exp(), uniforms[:, step])
                logp += torch.where(done, 0.0, logprobs.gather(1, nxt[:, None]).squeeze(1))
                nxt = torch.where(done, pad, nxt)
                tokens.append(nxt)
                mask.append(~done)
                done = done | torch.isin(nxt, stop)
                if done.all() or step == self.max_new_tokens - 1:
                    break
                out = self.model(input_ids=nxt[:, None], cache=out.cache, use_cache=True, logits_to_keep=1)
                self.counts.decode_steps += 1
        self.counts.generate_batches += 1
        self.counts.generate_rows += rows
        self.counts.decode_steps += 1
        result = Rollouts(torch.stack(tokens, 1), torch.stack(mask, 1), logp)
        self.counts.tokens_generated += int(result.mask.sum())
        return result

    def log_prob(self, prompt: Tensor, rollouts: Rollouts, scales: Tensor, offsets: Tensor | None = None,
                 temperature: float | None = None, record: dict[str, Tensor] | None = None) -> Tensor:
        """Sum over generated tokens of log pi(y_t | y_<t, prompt) under the multipliers, one value per row [B].

        ``record`` receives each site's activations (see ``scaling.intervene``)."""
        rows, length = rollouts.tokens.shape
        ids = torch.cat([prompt.to(self.device)[None].expand(rows, -1), rollouts.tokens.to(self.device)], 1)
        with intervene(self.sites, scales, offsets, record):
            logits = self.model(input_ids=ids[:, :-1], logits_to_keep=length).logits
        logp = torch.log_softmax(logits.float() / (temperature or self.temperature), dim=-1)
        logp = logp.gather(-1, ids[:, -length:, None]).squeeze(-1)
        if torch.is_grad_enabled() and scales.requires_grad:
            self.counts.gradient_batches += 1
            self.counts.gradient_rows += rows
        else:
            self.counts.forward_batches += 1
        return (logp * rollouts.mask.to(self.device)).sum(1)

    def outputs(self, rollouts: Rollouts) -> list[Any]:
        rows = [t[m].tolist() for t, m in zip(rollouts.tokens.cpu(), rollouts.mask.cpu(), strict=True)]
        if self.tokenizer is None:
            return [tuple(r) for r in rows]
        return self.tokenizer.batch_decode(rows, skip_special_tokens=True)
