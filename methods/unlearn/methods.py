"""The registry of unlearning baselines: ``METHODS[name]``, added with :func:`register`.

A method has a loss (``None`` for methods that do not train) computed on a forget batch, a retain batch (or
None when there is no retain data) and the original model, and may refuse the target roles by prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from . import losses

Batch = dict[str, torch.Tensor]
LossFn = Callable[..., torch.Tensor]  # (model, forget: Batch, retain: Batch | None, original, cfg) -> loss


@dataclass(frozen=True)
class Method:
    name: str
    summary: str
    loss: LossFn | None = None
    refuses: bool = False  # add the refusal instruction for the target roles to every prompt

    @property
    def trains(self) -> bool:
        return self.loss is not None


METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    METHODS[method.name] = method
    return method


def get(name: str) -> Method:
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; known: {', '.join(METHODS)}")
    return METHODS[name]


def _gradient_difference(model, forget: Batch, retain: Batch | None, original, cfg) -> torch.Tensor:
    if retain is None:
        return losses.gradient_ascent(model, forget)
    return losses.gradient_difference(model, forget, retain, cfg.retain_weight)


def _npo(model, forget: Batch, retain: Batch | None, original, cfg) -> torch.Tensor:
    with torch.no_grad(), original() as before:
        reference = losses.sequence_logprob(before, forget)
    return losses.npo(model, forget, reference, cfg.npo_beta, retain, cfg.npo_retain_weight)


register(Method("reference", "role prompting, no unlearning (the reference)"))
register(Method("refusal", "prompt-based refusal: an instruction not to play the target roles", refuses=True))
register(Method("ga", "gradient ascent on the forget set",
                loss=lambda model, forget, retain, original, cfg: losses.gradient_ascent(model, forget)))
register(Method("gd", "gradient difference: ascent on the forget set, descent on the retain set",
                loss=_gradient_difference))
register(Method("npo", "negative preference optimisation on the forget set", loss=_npo))
