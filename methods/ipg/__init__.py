"""Integrated Policy Gradient: which components (MLP neurons, SAE features) drive a model's outcome.

Scale the components of a path by s = alpha 1, sample completions from the scaled model, and integrate the
score-function policy gradient of the expected outcome over alpha in (0, 1) (``estimator.estimate_ipg``).
Validate by ablating / amplifying the top-k against random k-sets (``validation.validate``) and against
baseline attributions on the answer log-probability (``baselines.answer_attributions``). ``neurips26 ipg``
runs it all (``run.run``). Modules are imported on use, so that the command line starts without torch.
"""
