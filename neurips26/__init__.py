"""neurips26: Hub-ready datasets, lm-eval tasks, methods and a leaderboard for NeurIPS 2026 resources."""

__version__ = "0.1.0"
