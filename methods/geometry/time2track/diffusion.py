"""Time2Track's conditional motion diffusion model: a transformer denoiser over motion-frame tokens, conditioned
on the subject's ECG (a global token) and on per-frame token features.

As in MDM (the generic motion diffusion model), the denoiser predicts the clean motion ``x0`` from a noised
``x_t``: one global token (an ECG encoder's embedding plus the diffusion step's) is prepended to one token per
frame (the frame's displacements projected, plus its token features projected, plus the step's embedding). Time2Track
feeds the delay-aware token features (:mod:`.tokens`); the generic baseline (:mod:`.baseline`) feeds the frames'
absolute times only. Training: DDPM with a cosine schedule of :data:`STEPS` steps, squared error on ``x0``.
Sampling: DDIM (eta 0) over :data:`SAMPLE_STEPS` steps from Gaussian noise drawn with a seeded generator, so a
sample is a deterministic function of the seed.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from .data import CONTEXT

STEPS = 100
SAMPLE_STEPS = 20


class ECGEncoder(nn.Module):
    """The ECG context ``(batch, CONTEXT)`` -> one embedding: two strided convolutions, flattened (so the
    timing stays readable), then a linear map."""

    def __init__(self, width: int, channels: int = 16, context: int = CONTEXT) -> None:
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(1, channels, 9, stride=2, padding=4), nn.GELU(),
                                  nn.Conv1d(channels, channels, 9, stride=2, padding=4), nn.GELU())
        self.out = nn.Linear(channels * (context // 4), width)

    def forward(self, ecg: torch.Tensor) -> torch.Tensor:
        """Embeddings ``(batch, width)`` of standardised ECG contexts."""
        return self.out(self.conv(ecg.unsqueeze(1)).flatten(1))


def step_embedding(step: torch.Tensor, width: int) -> torch.Tensor:
    """Sinusoidal embedding ``(batch, width)`` of diffusion steps."""
    half = width // 2
    freq = torch.exp(-math.log(10_000) * torch.arange(half, device=step.device) / half)
    angle = step.float()[:, None] * freq[None]
    return torch.cat([torch.sin(angle), torch.cos(angle)], dim=-1)


class MotionDenoiser(nn.Module):
    """Transformer denoiser: (noised motion ``(batch, frames, frame_dim)``, step, token features ``(batch, frames,
    token_dim)``, ECG ``(batch, CONTEXT)``) -> predicted clean motion."""

    def __init__(self, frame_dim: int, token_dim: int, width: int = 64, layers: int = 2, heads: int = 4) -> None:
        super().__init__()
        self.width = width
        self.frame_in = nn.Linear(frame_dim, width)
        self.token_in = nn.Sequential(nn.Linear(token_dim, width), nn.GELU(), nn.Linear(width, width))
        self.step_mlp = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, width))
        self.ecg = ECGEncoder(width)
        layer = nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.frame_out = nn.Linear(width, frame_dim)

    def forward(self, x_t: torch.Tensor, step: torch.Tensor, tokens: torch.Tensor, ecg: torch.Tensor) -> torch.Tensor:
        """The predicted clean motion, shaped as ``x_t``."""
        s = self.step_mlp(step_embedding(step, self.width))[:, None]
        frames = self.frame_in(x_t) + self.token_in(tokens) + s
        h = self.encoder(torch.cat([self.ecg(ecg)[:, None] + s, frames], dim=1))
        return self.frame_out(h[:, 1:])


class ConditionalMotionDiffusion(nn.Module):
    """A motion diffusion model: the denoiser, its cosine noise schedule, the x0 loss and the DDIM sampler."""

    def __init__(self, frame_dim: int, token_dim: int, width: int = 64, layers: int = 2) -> None:
        super().__init__()
        self.denoiser = MotionDenoiser(frame_dim, token_dim, width, layers)
        t = torch.linspace(0, 1, STEPS + 1)
        alpha_bar = torch.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2
        self.register_buffer("alpha_bar", (alpha_bar / alpha_bar[0])[1:].clamp(1e-5, 1.0))

    def loss(self, x0: torch.Tensor, tokens: torch.Tensor, ecg: torch.Tensor,
             generator: torch.Generator) -> torch.Tensor:
        """Squared error of the predicted ``x0`` at a random step of a random noising."""
        step = torch.randint(0, STEPS, (len(x0),), generator=generator).to(x0.device)
        noise = torch.randn(x0.shape, generator=generator).to(x0.device)
        ab = self.alpha_bar[step].view(-1, 1, 1)
        x_t = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
        return F.mse_loss(self.denoiser(x_t, step, tokens, ecg), x0)

    @torch.no_grad()
    def sample(self, tokens: torch.Tensor, ecg: torch.Tensor, frame_dim: int, seed: int,
               steps: int = SAMPLE_STEPS) -> torch.Tensor:
        """DDIM (eta 0) samples ``(batch, frames, frame_dim)`` from noise drawn with ``seed``."""
        generator = torch.Generator().manual_seed(seed)
        x = torch.randn((len(tokens), tokens.shape[1], frame_dim), generator=generator).to(tokens.device)
        schedule = torch.linspace(STEPS - 1, 0, steps).round().long().tolist()
        for i, step in enumerate(schedule):
            ab = self.alpha_bar[step]
            x0 = self.denoiser(x, torch.full((len(x),), step, device=x.device), tokens, ecg)
            if i + 1 == len(schedule):
                return x0
            eps = (x - ab.sqrt() * x0) / (1 - ab).sqrt()
            ab_next = self.alpha_bar[schedule[i + 1]]
            x = ab_next.sqrt() * x0 + (1 - ab_next).sqrt() * eps
        return x


def fit(model: ConditionalMotionDiffusion, x0: torch.Tensor, tokens: torch.Tensor, ecg: torch.Tensor, steps: int,
        *, lr: float = 2e-3, batch: int = 64, seed: int = 0,
        step_done: Callable[[], None] | None = None) -> list[float]:
    """Train ``model`` for ``steps`` AdamW steps on random batches (cosine learning-rate decay); the losses."""
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    decay = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, max(steps, 1))
    generator = torch.Generator().manual_seed(seed)
    losses = []
    model.train()
    for _ in range(steps):
        idx = torch.randint(0, len(x0), (min(batch, len(x0)),), generator=generator).to(x0.device)
        loss = model.loss(x0[idx], tokens[idx], ecg[idx], generator)
        optimiser.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        decay.step()
        losses.append(loss.item())
        if step_done is not None:
            step_done()
    model.eval()
    return losses
