"""FreeAct: a discrete latent-action space learned from video alone, and pseudo-labelling with it.

Model (small, for 32x32 frames): an inverse-dynamics encoder reads a frame and its change to the next one and
gives a latent vector; a vector quantiser snaps it to one of ``codes`` codebook entries (straight-through gradient,
codebook and commitment losses as in VQ-VAE; the codebook starts from encoder outputs and unused entries restart on
them, against collapse); a forward-dynamics decoder predicts the change to the next frame from the current frame
and the code, trained on the change (the frames differ in a few pixels, so a loss on whole frames is won by
copying). Without alignment nothing sees the actions or states; with ``align`` > 0 (FreeAct's alignment with
end-effector motion) a linear read-out of the latent action also regresses the agent's displacement.

Evaluation on held-out episodes: codebook usage and perplexity; next-frame reconstruction error (against copying
the current frame); a linear probe of the true motion from the codes (R^2 of ridge regression from the one-hot code
to the agent's displacement and to the commanded action relative to the agent, fitted on training episodes);
and pseudo-labelling: each held-out frame pair's code decoded to an action by that probe, against the true
action (RMSE in pixels, beside the error of always predicting the mean offset).
"""

from __future__ import annotations

import io
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from neurips26 import hubfolder
from neurips26.errors import UserError

SIZE = 32  # frames are pooled from 96x96 to SIZE x SIZE
CHANGE_SCALE = 0.05  # a typical pixel change between consecutive pooled frames (inputs scaled to about unit size)


def quantise(z: torch.Tensor, codebook: torch.Tensor, beta: float = 0.25) -> tuple[torch.Tensor, torch.Tensor,
                                                                                   torch.Tensor]:
    """(quantised z with a straight-through gradient, code indices, codebook + beta * commitment loss); ``z`` and
    the codebook are compared on the unit sphere, which keeps the codes apart."""
    z, codebook = F.normalize(z, dim=1), F.normalize(codebook, dim=1)  # codes on the unit sphere (cosine VQ)
    distances = torch.cdist(z, codebook)
    index = distances.argmin(dim=1)
    q = codebook[index]
    loss = F.mse_loss(q, z.detach()) + beta * F.mse_loss(z, q.detach())
    return z + (q - z).detach(), index, loss


def _encoder(channels: int, width: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(channels, width, 4, 2, 1), nn.GELU(), nn.Conv2d(width, width, 4, 2, 1), nn.GELU(),
                         nn.Conv2d(width, width, 4, 2, 1), nn.GELU())  # SIZE -> SIZE / 8


class LatentActionModel(nn.Module):
    """Inverse dynamics -> VQ -> forward dynamics (see the module docstring)."""

    def __init__(self, codes: int = 16, latent: int = 16, width: int = 32):
        super().__init__()
        cells = (SIZE // 8) ** 2
        self.idm = nn.Sequential(_encoder(6, width), nn.Flatten(), nn.Linear(width * cells, latent),
                                 nn.BatchNorm1d(latent, affine=False))  # standardised: z must vary with the input
        self.codebook = nn.Parameter(torch.randn(codes, latent) * 0.1)
        self.frame = _encoder(3, width)
        self.embed = nn.Linear(latent, width)
        self.align = nn.Linear(latent, 2)  # the end-effector motion read from a latent action
        self.decoder = nn.Sequential(nn.ConvTranspose2d(2 * width, width, 4, 2, 1), nn.GELU(),
                                     nn.ConvTranspose2d(width, width, 4, 2, 1), nn.GELU(),
                                     nn.ConvTranspose2d(width, 3, 4, 2, 1))

    def encode(self, now: torch.Tensor, after: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Quantised latent action, code index and VQ loss of frame pairs (batch x 3 x SIZE x SIZE each)."""
        return quantise(self.latent(now, after), self.codebook)

    def latent(self, now: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
        """The inverse-dynamics encoder's output, before quantisation."""
        return self.idm(torch.cat([now, (after - now) / CHANGE_SCALE], dim=1))

    @torch.no_grad()
    def restart_codes(self, now: torch.Tensor, after: torch.Tensor, used: torch.Tensor | None = None) -> int:
        """Set codebook entries not in ``used`` (all when None) to encoder outputs of the batch; how many."""
        z = self.latent(now, after)
        dead = torch.arange(len(self.codebook)) if used is None else \
            torch.tensor([i for i in range(len(self.codebook)) if i not in set(used.tolist())], dtype=torch.long)
        if len(dead):
            self.codebook[dead] = z[torch.randint(len(z), (len(dead),))] + 1e-3 * torch.randn(len(dead), z.shape[1])
        return len(dead)

    def forward(self, now: torch.Tensor, after: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                                       torch.Tensor]:
        """(predicted change to the next frame, quantised latent action, code index, VQ loss)."""
        q, index, vq_loss = self.encode(now, after)
        features = self.frame(now)
        action = self.embed(q)[:, :, None, None].expand(-1, -1, *features.shape[2:])
        return self.decoder(torch.cat([features, action], dim=1)), q, index, vq_loss


@dataclass
class Clips:
    """Frame pairs (t, t + gap) of some episodes, with the true motion between them."""

    now: torch.Tensor  # (n, 3, SIZE, SIZE) in [0, 1]
    after: torch.Tensor
    displacement: np.ndarray  # (n, 2): agent position at t + gap minus at t (pixels)
    offset: np.ndarray  # (n, 2): commanded action at t minus agent position at t (pixels)
    agent: np.ndarray  # (n, 2): agent position at t
    action: np.ndarray  # (n, 2): commanded action at t


def load_clips(folder: Path, split: str, episodes: int | None = None, gap: int = 1) -> Clips:
    """The frame pairs (t, t + ``gap``) of the first ``episodes`` episodes of ``split`` in a built pusht folder."""
    from PIL import Image  # lazy: only FreeAct decodes frames

    table = hubfolder.read_table(folder, "episodes", ["episode_index", "state", "action"], split)
    frames = hubfolder.read_table(folder, "frames", None, split)
    if table is None or frames is None:
        raise UserError(f"{folder}: FreeAct needs the episodes and frames configs (build without --no-frames)")
    rows = sorted(table.to_pylist(), key=lambda r: r["episode_index"])[:episodes]
    wanted = {r["episode_index"] for r in rows}
    images: dict[tuple[int, int], np.ndarray] = {}
    for frame in frames.to_pylist():
        if frame["episode_index"] in wanted:
            images[frame["episode_index"], frame["step"]] = np.asarray(Image.open(io.BytesIO(frame["image"]["bytes"])))
    now, after, disp, offset, agent, action = [], [], [], [], [], []
    for row in rows:
        state, act = np.asarray(row["state"]), np.asarray(row["action"])
        for t in range(len(state) - gap):
            now.append(images[row["episode_index"], t])
            after.append(images[row["episode_index"], t + gap])
            disp.append(state[t + gap, :2] - state[t, :2])
            offset.append(act[t] - state[t, :2])
            agent.append(state[t, :2])
            action.append(act[t])

    def tensor(pictures: list[np.ndarray]) -> torch.Tensor:
        x = torch.as_tensor(np.stack(pictures), dtype=torch.float32).permute(0, 3, 1, 2) / 255.0
        return F.adaptive_avg_pool2d(x, SIZE)

    return Clips(tensor(now), tensor(after), np.array(disp), np.array(offset), np.array(agent), np.array(action))


def train(model: LatentActionModel, clips: Clips, steps: int = 600, batch_size: int = 64, lr: float = 1e-3,
          seed: int = 0, restart_every: int = 50, align: float = 0.0, advance=None) -> dict[str, float]:
    """Train on ``clips``; the cost and final loss. ``align`` > 0 adds FreeAct's alignment with end-effector motion:
    a linear read-out of the quantised latent action regresses the agent's displacement (pixels / 10) with that
    weight; 0 trains on frames alone."""
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    start, losses, used = time.perf_counter(), [], []
    scale = float(((clips.after - clips.now) ** 2).mean()) + 1e-12  # the loss is relative to copying the frame
    model.train()
    model.restart_codes(clips.now[:256], clips.after[:256])
    for step in range(steps):
        index = torch.randint(len(clips.now), (batch_size,), generator=generator)
        now, after = clips.now[index], clips.after[index]
        predicted, q, codes, vq_loss = model(now, after)
        loss = F.mse_loss(predicted, after - now) / scale + vq_loss
        if align:
            motion = torch.as_tensor(clips.displacement[index.numpy()] / 10.0, dtype=torch.float32)
            loss = loss + align * F.mse_loss(model.align(q), motion)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        used.append(codes)
        if restart_every and (step + 1) % restart_every == 0 and step + 1 < steps * 0.8:
            model.restart_codes(now, after, torch.cat(used).unique())
            used = []
        losses.append(loss.item())
        if advance:
            advance(1)
    model.eval()
    return {"steps": steps, "seconds": time.perf_counter() - start, "final_loss": float(np.mean(losses[-20:]))}


@torch.no_grad()
def codes_of(model: LatentActionModel, clips: Clips, batch: int = 512) -> tuple[np.ndarray, float]:
    """Every pair's code and the mean squared next-frame error."""
    codes, errors = [], []
    for lo in range(0, len(clips.now), batch):
        now, after = clips.now[lo:lo + batch], clips.after[lo:lo + batch]
        predicted, _, index, _ = model(now, after)
        codes.append(index.numpy())
        errors.append(((now + predicted - after) ** 2).mean(dim=(1, 2, 3)).numpy())
    return np.concatenate(codes), float(np.concatenate(errors).mean())


@dataclass
class Report:
    """FreeAct's evaluation on held-out episodes."""

    pairs: int
    codes_used: int
    codes: int
    perplexity: float
    next_frame_mse: float
    copy_frame_mse: float  # the error of predicting no change
    probe_r2_displacement: float
    probe_r2_offset: float
    pseudo_label_rmse: float  # pixels: decoded action against the true action
    mean_offset_rmse: float  # pixels: always the mean offset
    train_seconds: float

    def as_dict(self) -> dict:
        return asdict(self)


def evaluate(model: LatentActionModel, train_clips: Clips, test_clips: Clips, train_seconds: float = 0.0) -> Report:
    """The held-out report (see the module docstring)."""
    from sklearn.linear_model import Ridge  # lazy: only the probe needs scikit-learn
    from sklearn.metrics import r2_score  # lazy: as above

    n_codes = model.codebook.shape[0]
    train_codes, _ = codes_of(model, train_clips)
    test_codes, mse = codes_of(model, test_clips)
    one_hot = np.eye(n_codes)
    counts = np.bincount(test_codes, minlength=n_codes) / len(test_codes)
    entropy = -np.sum(counts[counts > 0] * np.log(counts[counts > 0]))
    r2 = {}
    for target in ("displacement", "offset"):
        probe = Ridge(alpha=1e-3).fit(one_hot[train_codes], getattr(train_clips, target))
        r2[target] = float(r2_score(getattr(test_clips, target), probe.predict(one_hot[test_codes])))
        if target == "offset":
            decoded = test_clips.agent + probe.predict(one_hot[test_codes])
    rmse = float(np.sqrt(np.mean(np.sum((decoded - test_clips.action) ** 2, axis=1))))
    mean_action = test_clips.agent + train_clips.offset.mean(axis=0)
    baseline = float(np.sqrt(np.mean(np.sum((mean_action - test_clips.action) ** 2, axis=1))))
    copy = float(((test_clips.now - test_clips.after) ** 2).mean())
    return Report(len(test_codes), int((counts > 0).sum()), n_codes, float(np.exp(entropy)), mse, copy,
                  r2["displacement"], r2["offset"], rmse, baseline, train_seconds)
