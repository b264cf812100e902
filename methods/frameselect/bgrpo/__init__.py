"""Bayesian GRPO frame selection: a linear Plackett-Luce selection policy, pre-trained on evidence spans,
updated by GRPO against a frozen answerer's NLL, with a bootstrap-ensemble posterior (:mod:`.train`).

    posterior = train(examples)                 # examples: pools of train questions + evidence labels
    posterior.save(Path("bgrpo-model"), card(posterior, ...))
    select("bgrpo", pool, 16, model="bgrpo-model")
"""

from .card import card
from .train import Config, Example, Posterior, example, load, train

__all__ = ["Config", "Example", "Posterior", "card", "example", "load", "train"]
