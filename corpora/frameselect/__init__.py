"""FrameSelect tables: the frames selectors chose for TAR and CLoVR-Bench questions, and their results.

``build`` runs every selector at every budget and writes the ``selections`` and
``results`` configs; ``replay`` re-answers stored selections with another model.
"""
