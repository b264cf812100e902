"""The model card of a trained bgrpo posterior (a Hub model repository's README.md)."""

from __future__ import annotations

from .train import Posterior

CARD = """---
library_name: neurips26
tags:
- video
- frame-selection
- grpo
- bayesian
license: apache-2.0
---

# bgrpo: Bayesian GRPO frame selector

A frame-selection policy for multi-video question answering, used as the `bgrpo` selector of
`neurips26.methods.frameselect`: `select("bgrpo", pool, budget, model="<this folder>")`.

- **Policy**: a linear score per candidate frame over {n_features} features of the `{encoder}` encoder
  (frame x query, frame minus its video's mean, relevance, bias); picks follow Plackett-Luce.
- **Training data**: {n_train} questions of {train_data} (train split; never the evaluation questions).
- **Pre-training**: logistic regression of "frame inside an evidence span" (saliency), L2 prior C={l2}.
- **GRPO**: {epochs} epochs, groups of {group} picks of {budget} frames, learning rate {lr}, KL weight {beta}
  to the pre-trained policy (the prior); reward = the log-likelihood of the gold answer under a frozen
  answerer ({reward}), which never sees the evidence labels.
- **Posterior**: a bootstrap ensemble of {members} members; selection by the posterior predictive
  (the members' first-pick distributions averaged), top `budget` frames.
- **Training curve** (mean reward / KL per member and epoch): {curve}

Limitations: trained on procedurally generated CCTV clips; features are the project's descriptor
(colour histogram, grey layout, gradient orientations), so it transfers only to pools of that encoder.
"""


def card(posterior: Posterior, n_train: int, train_data: str, encoder: str = "descriptor",
         reward: str = "a frozen answering model") -> str:
    """The README.md of a saved posterior."""
    c = posterior.config
    curve = "; ".join(f"m{h['member']}e{h['epoch']}: {h['reward']:.3f}/{h['kl']:.3f}" for h in posterior.history)
    return CARD.format(n_features=posterior.weights.shape[1], encoder=encoder, n_train=n_train,
                       train_data=train_data, l2=c.l2, epochs=c.epochs, group=c.group, budget=c.budget, lr=c.lr,
                       beta=c.beta, reward=reward, members=c.members, curve=curve or "none")
