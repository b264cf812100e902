"""Multipliers on model components (MLP neurons or SAE features), applied through forward hooks.

A *site* is one place in the model with ``size`` components. Under an intervention with per-row
multipliers ``s`` and an optional offset ``o``, a component's activation ``a`` becomes ``s * a + o``:
``s = 1, o = 0`` leaves the model unchanged, ``s = 0`` zero-ablates, ``s = 0, o = mean`` mean-ablates
and ``s = gamma`` amplifies.

- MLP neurons: the input of the MLP's output projection (``down_proj`` in Llama-style models,
  ``c_proj`` in GPT-2, ...), one component per intermediate unit.
- SAE features: ``f = act(x W_enc + b_enc)`` on the residual stream after a layer (or on the MLP
  output); the layer's output becomes ``x + ((s - 1) f + o) W_dec``, i.e. the scaled features decoded
  plus the SAE's reconstruction error, so ``s = 1`` is exactly the original model.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from neurips26.errors import UserError

# Output projections of the MLP block, relative to a decoder layer, in the common architectures.
NEURON_MODULES = ("mlp.down_proj", "mlp.c_proj", "mlp.fc_out", "mlp.dense_4h_to_h", "mlp.fc2", "fc2",
                  "feed_forward.w2", "mlp.w2")


@dataclass
class SAE:
    """Sparse-autoencoder weights: ``f = act(x W_enc + b_enc)``, ``x_hat = f W_dec + b_dec``.

    ``act`` is ReLU, or JumpReLU (``pre * (pre > threshold)``) when ``threshold`` is given. An SAE that
    subtracts ``b_dec`` before encoding is the same SAE with ``b_enc - b_dec W_enc``.
    """

    w_enc: Tensor  # [d_model, n_features]
    b_enc: Tensor  # [n_features]
    w_dec: Tensor  # [n_features, d_model]
    b_dec: Tensor  # [d_model]
    threshold: Tensor | None = None  # [n_features]

    @property
    def size(self) -> int:
        return self.w_enc.shape[1]

    def encode(self, x: Tensor) -> Tensor:
        pre = x @ self.w_enc + self.b_enc
        if self.threshold is None:
            return torch.relu(pre)
        return pre * (pre > self.threshold)

    def to(self, device: torch.device | str, dtype: torch.dtype) -> SAE:
        threshold = None if self.threshold is None else self.threshold.to(device, dtype)
        return SAE(self.w_enc.to(device, dtype), self.b_enc.to(device, dtype), self.w_dec.to(device, dtype),
                   self.b_dec.to(device, dtype), threshold)

    @classmethod
    def load(cls, path: Path, d_model: int) -> SAE:
        """Read ``W_enc, b_enc, W_dec, b_dec`` (and optional ``threshold``) from .safetensors, .pt or .npz.

        Matrices may be stored either way round (``[d, F]`` or ``[F, d]``); they are oriented by ``d_model``.
        """
        if not path.is_file():
            raise UserError(f"SAE file not found: {path}")
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            raw = load_file(str(path))
        elif path.suffix in (".pt", ".pth"):
            raw = torch.load(path, map_location="cpu", weights_only=True)
        elif path.suffix == ".npz":
            import numpy as np

            with np.load(path) as npz:
                raw = {k: torch.from_numpy(npz[k]) for k in npz.files}
        else:
            raise UserError(f"{path}: SAE file must be .safetensors, .pt or .npz")
        tensors = {k.lower(): v.float() for k, v in raw.items()}
        missing = [k for k in ("w_enc", "b_enc", "w_dec", "b_dec") if k not in tensors]
        if missing:
            raise UserError(f"{path}: SAE file lacks {', '.join(missing)} (has {', '.join(sorted(raw))})")
        w_enc, w_dec = tensors["w_enc"], tensors["w_dec"]
        if w_enc.shape[0] != d_model and w_enc.shape[1] == d_model:
            w_enc = w_enc.T
        if w_dec.shape[1] != d_model and w_dec.shape[0] == d_model:
            w_dec = w_dec.T
        n = w_enc.shape[1]
        if w_enc.shape[0] != d_model or w_dec.shape != (n, d_model):
            raise UserError(f"{path}: SAE shapes W_enc {tuple(w_enc.shape)}, W_dec {tuple(w_dec.shape)} "
                             f"do not fit the model's hidden size {d_model}")
        return cls(w_enc, tensors["b_enc"], w_dec, tensors["b_dec"], tensors.get("threshold"))


@dataclass
class Site:
    """One hooked place with ``size`` components: neurons (pre-hook on a projection) or SAE features."""

    name: str  # e.g. "L12" or "L12.sae"
    layer: int
    module: nn.Module
    size: int
    kind: str  # "neuron" or "sae"
    sae: SAE | None = None

    def hook(self, scale: Tensor, offset: Tensor | None, record: dict[str, Tensor] | None):
        """Register the intervention ``a -> scale * a + offset`` (both [B, size] or [1, size])."""
        s = scale[:, None, :]
        o = None if offset is None else offset[:, None, :]

        def edit(a: Tensor) -> Tensor:
            if record is not None:
                record[self.name] = a.detach()
            return a * s if o is None else a * s + o

        if self.kind == "neuron":
            def pre_hook(module: nn.Module, args: tuple) -> tuple:
                return (edit(args[0]), *args[1:])

            return self.module.register_forward_pre_hook(pre_hook)

        sae = self.sae

        def post_hook(module: nn.Module, args: tuple, output: Tensor | tuple) -> Tensor | tuple:
            x = output[0] if isinstance(output, tuple) else output
            f = sae.encode(x)
            x = x + (edit(f) - f) @ sae.w_dec
            return (x, *output[1:]) if isinstance(output, tuple) else x

        return self.module.register_forward_hook(post_hook)


def decoder_layers(model: nn.Module) -> nn.ModuleList:
    """The model's list of transformer blocks (the ModuleList as long as ``num_hidden_layers``)."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    n = config.num_hidden_layers
    for _, module in model.named_modules():
        if isinstance(module, nn.ModuleList) and len(module) == n:
            return module
    raise UserError(f"cannot find the {n} decoder layers of {type(model).__name__}")


def neuron_sites(model: nn.Module, layers: list[int], module: str | None = None) -> list[Site]:
    """MLP-neuron sites of ``layers``; ``module`` names the projection whose input holds the neurons,
    as a path in the model with ``{layer}`` (e.g. ``model.layers.{layer}.mlp.down_proj``)."""
    blocks = decoder_layers(model)
    sites = []
    for layer in layers:
        if not 0 <= layer < len(blocks):
            raise UserError(f"layer {layer} out of range: the model has layers 0..{len(blocks) - 1}")
        if module is not None:
            try:
                proj = model.get_submodule(module.format(layer=layer))
            except AttributeError:
                raise UserError(f"no module {module.format(layer=layer)!r} in the model") from None
        else:
            proj = next((_submodule(blocks[layer], name) for name in NEURON_MODULES
                         if _submodule(blocks[layer], name) is not None), None)
            if proj is None:
                raise UserError(f"no MLP output projection found in layer {layer} ({type(blocks[layer]).__name__}); "
                                 "name it with a module pattern such as 'model.layers.{layer}.mlp.down_proj'")
        size = getattr(proj, "in_features", None) or proj.weight.shape[0]  # Linear, or GPT-2's Conv1D
        sites.append(Site(f"L{layer}", layer, proj, int(size), "neuron"))
    return sites


def sae_site(model: nn.Module, layer: int, sae: SAE, where: str = "resid") -> Site:
    """An SAE on the residual stream after ``layer`` (``where="resid"``) or on its MLP output (``"mlp"``)."""
    blocks = decoder_layers(model)
    if not 0 <= layer < len(blocks):
        raise UserError(f"layer {layer} out of range: the model has layers 0..{len(blocks) - 1}")
    if where == "resid":
        module = blocks[layer]
    elif where == "mlp":
        module = _submodule(blocks[layer], "mlp") or _submodule(blocks[layer], "feed_forward")
        if module is None:
            raise UserError(f"layer {layer} has no 'mlp' module for an SAE on the MLP output")
    else:
        raise UserError(f"SAE site must be 'resid' or 'mlp', not {where!r}")
    param = next(model.parameters())
    return Site(f"L{layer}.sae", layer, module, sae.size, "sae", sae.to(param.device, param.dtype))


def _submodule(root: nn.Module, name: str) -> nn.Module | None:
    try:
        return root.get_submodule(name)
    except AttributeError:
        return None


@contextmanager
def intervene(sites: list[Site], scales: Tensor, offsets: Tensor | None = None,
              record: dict[str, Tensor] | None = None) -> Iterator[None]:
    """Apply ``a -> scales * a + offsets`` on every site; columns of ``scales`` and ``offsets`` [B, C] (or [1, C])
    follow ``sites`` in order.

    ``record``, when given, receives each site's activations before the edit (from the last forward).
    """
    handles, start = [], 0
    try:
        for site in sites:
            end = start + site.size
            handles.append(site.hook(scales[:, start:end], None if offsets is None else offsets[:, start:end], record))
            start = end
        if start != scales.shape[1]:
            raise UserError(f"scales have {scales.shape[1]} columns, the sites {start} components")
        yield
    finally:
        for handle in handles:
            handle.remove()
