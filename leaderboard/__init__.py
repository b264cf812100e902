"""Leaderboard store: validated submissions and rankings."""
