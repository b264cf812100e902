"""The RoleMoE model: LoRA experts on every linear layer of a frozen causal LM, mixed by a per-sequence router.

For a linear layer ``W`` and a sequence with gates ``g`` (a distribution over ``E`` experts)::

    y = W x + (alpha / r) * sum_e g_e B_e A_e x

The gates come from the prompt alone, once per sequence: the mean input embedding of its last ``window`` prompt
tokens, standardised with the mean and spread of the training prompts, through a small MLP and a softmax. All
layers share them, so a role's routing is one distribution over experts, and forgetting a role can be restricted
to the experts it routes to. Generation routes on the prompt, then keeps the gates for every new token.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import nn

CONFIG_FILE, WEIGHTS_FILE = "rolemoe_config.json", "rolemoe.safetensors"


@dataclass
class MoEConfig:
    experts: int = 4
    rank: int = 8
    alpha: int = 16
    router_hidden: int = 64
    window: int = 64  # prompt tokens the router reads (the last ones, as training keeps them)
    seed: int = 0
    top_k: int = 0  # 0: soft gates over every expert; k: only the k largest gates, renormalised


class Routing:
    """State shared by the router and every expert layer: the current gates [batch, E] and an off switch."""

    def __init__(self) -> None:
        self.gates: torch.Tensor | None = None
        self.enabled = True


class ExpertLinear(nn.Module):
    """A frozen linear layer plus ``E`` LoRA experts weighted by the shared gates."""

    def __init__(self, base: nn.Linear, cfg: MoEConfig, routing: Routing) -> None:
        super().__init__()
        self.base, self.routing, self.scale = base, routing, cfg.alpha / cfg.rank
        device = base.weight.device
        self.A = nn.ParameterList()
        for _ in range(cfg.experts):
            a = torch.empty(cfg.rank, base.in_features, device=device)
            nn.init.kaiming_uniform_(a, a=math.sqrt(5))  # as LoRA (peft) initialises A
            self.A.append(nn.Parameter(a))
        self.B = nn.ParameterList(nn.Parameter(torch.zeros(base.out_features, cfg.rank, device=device))
                                  for _ in range(cfg.experts))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.base(x)
        gates = self.routing.gates
        if not self.routing.enabled or gates is None:
            return y
        a = torch.cat(list(self.A))  # [E*r, in]
        b = torch.cat(list(self.B), dim=1)  # [out, E*r]
        h = x.to(a.dtype) @ a.T  # [batch, tokens, E*r]
        h = (h.unflatten(-1, (len(self.A), -1)) * gates[:, None, :, None].to(a.dtype)).flatten(-2)
        return y + (self.scale * (h @ b.T)).to(y.dtype)


class Router(nn.Module):
    """Gates from standardised mean prompt embeddings: Linear -> GELU -> Linear -> softmax."""

    def __init__(self, dim: int, cfg: MoEConfig) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, cfg.router_hidden), nn.GELU(), nn.Linear(cfg.router_hidden,
                                                                                         cfg.experts))
        self.register_buffer("center", torch.zeros(dim))
        self.register_buffer("spread", torch.ones(dim))

    def logits(self, features: torch.Tensor) -> torch.Tensor:
        """Unnormalised expert scores of standardised features: [batch, E]."""
        return self.net((features - self.center) / self.spread)

    def forward(self, features: torch.Tensor, top_k: int = 0) -> torch.Tensor:
        gates = torch.softmax(self.logits(features), dim=-1)
        if 0 < top_k < gates.shape[-1]:
            kept = torch.zeros_like(gates).scatter_(-1, gates.topk(top_k, dim=-1).indices, 1.0)
            gates = gates * kept
            gates = gates / gates.sum(-1, keepdim=True)
        return gates


class RoleMoE(nn.Module):
    """A causal LM (frozen) with RoleMoE experts on every linear layer except the output head."""

    def __init__(self, model: nn.Module, cfg: MoEConfig) -> None:
        super().__init__()
        torch.manual_seed(cfg.seed)
        self.cfg, self.model, self.routing = cfg, model.requires_grad_(False), Routing()
        self.layers: dict[str, ExpertLinear] = {}
        output = model.get_output_embeddings()
        for name, module in list(model.named_modules()):
            for child_name, child in list(module.named_children()):
                if isinstance(child, nn.Linear) and child is not output:
                    wrapped = ExpertLinear(child, cfg, self.routing)
                    setattr(module, child_name, wrapped)
                    self.layers[f"{name}.{child_name}".lstrip(".")] = wrapped
        embedding = model.get_input_embeddings()
        self.router = Router(embedding.embedding_dim, cfg).to(embedding.weight.device)
        self.config = model.config

    @property
    def device(self) -> torch.device:
        return self.router.center.device

    def prompt_features(self, input_ids: torch.Tensor, prompt_mask: torch.Tensor) -> torch.Tensor:
        """Mean input embedding of the last ``window`` prompt tokens of each row: [batch, dim]."""
        mask = prompt_mask.bool()
        from_end = mask.flip(-1).long().cumsum(-1).flip(-1)  # 1 on the last prompt token, 2 before it, ...
        mask = mask & (from_end <= self.cfg.window)
        with torch.no_grad():
            embedded = self.model.get_input_embeddings()(input_ids).float()
        weights = mask.float() / mask.sum(-1, keepdim=True).clamp_min(1)
        return torch.einsum("btd,bt->bd", embedded, weights)

    def gates(self, input_ids: torch.Tensor, prompt_mask: torch.Tensor) -> torch.Tensor:
        """The experts' weights for each sequence: [batch, E], rows summing to 1 (only the ``top_k`` largest
        non-zero when ``cfg.top_k`` is set)."""
        return self.router(self.prompt_features(input_ids, prompt_mask), self.cfg.top_k)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                labels: torch.Tensor | None = None, gates: torch.Tensor | None = None, **kwargs):
        """The wrapped model's output; the router reads the prompt (labels -100 and attended, when labels are
        given, else every attended token), unless ``gates`` [batch, E] are given (routing by the known role)."""
        if gates is None:
            mask = torch.ones_like(input_ids) if attention_mask is None else attention_mask
            prompt = mask.bool() & (labels == -100) if labels is not None else mask
            gates = self.gates(input_ids, prompt)
        self.routing.gates = gates
        return self.model(input_ids=input_ids, attention_mask=attention_mask, labels=labels, **kwargs)

    @torch.no_grad()
    def generate(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, **kwargs):
        """Route on the prompt, then generate with the wrapped model's ``generate``."""
        mask = torch.ones_like(input_ids) if attention_mask is None else attention_mask
        self.routing.gates = self.gates(input_ids, mask)
        try:
            return self.model.generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
        finally:
            self.routing.gates = None

    @contextmanager
    def disable_adapter(self) -> Iterator[RoleMoE]:
        """The original model: every expert switched off (as peft's ``disable_adapter``)."""
        self.routing.enabled = False
        try:
            yield self
        finally:
            self.routing.enabled = True

    def expert_parameters(self, expert: int) -> list[nn.Parameter]:
        """Every layer's A and B of one expert."""
        return [p for layer in self.layers.values() for p in (layer.A[expert], layer.B[expert])]

    def expert_weights(self) -> list[tuple[list[torch.Tensor], list[torch.Tensor]]]:
        """Per layer: (the experts' A, the experts' B), for the disentanglement loss."""
        return [(list(layer.A), list(layer.B)) for layer in self.layers.values()]

    def adapter_state(self) -> dict[str, torch.Tensor]:
        """The router and every expert's weights (the wrapped model's own weights are not included)."""
        return {k: v for k, v in self.state_dict().items() if not k.startswith("model.") or ".A." in k or ".B." in k}

    def save_pretrained(self, folder: Path) -> None:
        """Write the router and experts (safetensors) and the configuration."""
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        save_file({k: v.detach().contiguous().cpu() for k, v in self.adapter_state().items()}, folder / WEIGHTS_FILE)
        (folder / CONFIG_FILE).write_text(json.dumps(asdict(self.cfg), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def from_pretrained(cls, model: nn.Module, folder: Path) -> RoleMoE:
        """Wrap ``model`` and load a saved router and experts."""
        from safetensors.torch import load_file

        folder = Path(folder)
        cfg = MoEConfig(**json.loads((folder / CONFIG_FILE).read_text(encoding="utf-8")))
        moe = cls(model, cfg)
        missing = set(moe.adapter_state()) - set(state := load_file(folder / WEIGHTS_FILE))
        if missing:
            raise ValueError(f"{folder / WEIGHTS_FILE}: missing {len(missing)} tensors, e.g. {sorted(missing)[0]}")
        moe.load_state_dict(state, strict=False)
        return moe
