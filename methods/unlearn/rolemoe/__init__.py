"""RoleMoE: LoRA experts behind a role router, trained so that roles use different experts, then unlearning
restricted to the experts of the target roles.

- ``model``: :class:`~.model.RoleMoE` wraps any transformers causal LM (its weights frozen): every linear layer of
  the decoder gets ``E`` LoRA experts, mixed by per-sequence gates that a small router computes from the prompt.
- ``losses``: the specialization loss (mutual information between role and routing) and the disentanglement loss
  (orthogonality of the experts' subspaces).
- ``routing``: routing statistics: I(role; expert) / H(role), expert overlap between roles, experts per forget set.
- ``train``: the two stages (specialise, then forget with the target roles' experts only), registered as the
  ``rolemoe`` unlearning method in :mod:`neurips26.methods.unlearn.methods`.
"""
