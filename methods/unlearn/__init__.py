"""Role-playing unlearning on RoleBench-Unlearn: baselines, the role-fidelity scorer and the evaluation.

Baselines (the registry ``methods.UNLEARNING_METHODS``): ``reference`` (role prompting, no unlearning), ``refusal``
(prompt-based refusal), ``ga`` (gradient ascent), ``gd`` (gradient difference) and ``npo``, for any
transformers causal LM, with a LoRA adapter (peft) or full weights. ``neurips26 unlearn`` (``cli.py``) runs
them through ``experiment.run``; the lm-eval tasks ``rolebench_unlearn_*`` score any model with the same
prompts (``prompts``), scorer (``scorer``) and measures (``metrics``). Modules are imported on use, so the
command line starts without torch.
"""
