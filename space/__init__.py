"""The Gradio Space that serves the leaderboard."""
