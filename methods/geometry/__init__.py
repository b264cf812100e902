"""Geometry evaluators: segmentation boundaries (Fractal-G), Fourier contours and cardiac volumes, 4D motion
diversity (Time2Track) and surface reconstruction from unposed inputs.

One module per evaluator family computes its metrics one way (:mod:`.segmentation`, :mod:`.contours`,
:mod:`.motion`, :mod:`.surfaces`); beside each, its data with exact ground truth and its baselines
(:mod:`.segdata`, :mod:`.phantom`, :mod:`.motiondata`, :mod:`.surfdata`). :mod:`.protocol` registers one ranked
board per family, :mod:`.bench` runs the baselines on the standard sets and :mod:`.report` writes the runs.
``neurips26 geometry eval|bench`` is the command line (:mod:`.cli`).
"""
