"""The registry of unlearning baselines: :data:`UNLEARNING_METHODS` (a :class:`neurips26.registry.Registry`).

A method has a loss (``None`` for methods that do not train) computed on a forget batch, a retain batch (or
None when there is no retain data) and the original model, and may refuse the target roles by prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from neurips26.errors import UserError
from neurips26.registry import Registry

from . import losses
from .rolemoe import train as rolemoe_train

Batch = dict[str, torch.Tensor]
LossFn = Callable[..., torch.Tensor]  # (model, forget: Batch, retain: Batch | None, original, cfg) -> loss
FitFn = Callable[..., tuple]  # (model, tokenizer, forget, retain, cfg, progress) -> (model, original, log)


class NoRetainData(UserError):
    """A method that needs retain data was given none."""


@dataclass(frozen=True)
class Method:
    """An unlearning baseline: its name, a one-line summary, its loss (None: no training), prompt refusal."""

    name: str
    summary: str
    loss: LossFn | None = None
    refuses: bool = False  # add the refusal instruction for the target roles to every prompt
    fit: FitFn | None = None  # a method with its own training loop (RoleMoE) instead of one loss

    @property
    def trains(self) -> bool:
        return self.loss is not None or self.fit is not None


UNLEARNING_METHODS: Registry[Method] = Registry("unlearning method", group="neurips26.unlearning_methods")
ORDER = ("reference", "refusal", "ga", "gd", "npo", "rolemoe")  # the order of the results tables


def get(name: str) -> Method:
    """The method called ``name``; :class:`~neurips26.errors.UnknownNameError` lists the known ones."""
    return UNLEARNING_METHODS.get(name)


def _gradient_difference(model, forget: Batch, retain: Batch | None, original, cfg) -> torch.Tensor:
    if retain is None:
        raise NoRetainData("gd (gradient difference) needs retain data: the forget set has no retain_train records "
                           "(use ga for ascent on the forget set alone)")
    return losses.gradient_difference(model, forget, retain, cfg.retain_weight)


def _npo(model, forget: Batch, retain: Batch | None, original, cfg) -> torch.Tensor:
    with torch.no_grad(), original() as before:
        reference = losses.sequence_logprob(before, forget)
    return losses.npo(model, forget, reference, cfg.npo_beta, retain, cfg.npo_retain_weight)


UNLEARNING_METHODS.register("reference")(Method("reference", "role prompting, no unlearning (the reference)"))
UNLEARNING_METHODS.register("refusal")(Method(
    "refusal", "prompt-based refusal: an instruction not to play the target roles", refuses=True))
UNLEARNING_METHODS.register("ga")(Method(
    "ga", "gradient ascent on the forget set",
    loss=lambda model, forget, retain, original, cfg: losses.gradient_ascent(model, forget)))
UNLEARNING_METHODS.register("gd")(Method(
    "gd", "gradient difference: ascent on the forget set, descent on the retain set", loss=_gradient_difference))
UNLEARNING_METHODS.register("npo")(Method("npo", "negative preference optimisation on the forget set", loss=_npo))
UNLEARNING_METHODS.register("rolemoe")(Method(
    "rolemoe", "RoleMoE: LoRA experts with a role router trained to specialise, then forgetting restricted to the "
    "target roles' experts", fit=rolemoe_train.fit))
