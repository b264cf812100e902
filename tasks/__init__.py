"""lm-eval task folders (YAML + utils.py), shipped as package data."""
