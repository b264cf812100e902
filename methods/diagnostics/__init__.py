"""Diagnostics: failure signatures of evaluated models, layer-wise probing, and the Gated Forensic Memory relay."""
