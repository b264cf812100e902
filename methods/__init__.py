"""The papers' methods, as evaluators and baselines."""
