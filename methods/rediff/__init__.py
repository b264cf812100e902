"""ReDiff: error cascades in parallel decoding of masked-diffusion language models, and the refining baseline.

* :mod:`.data` - generated multi-digit addition problems with long carry chains (exact ground truth, no download).
* :mod:`.decoding` - the decoder interface (propose -> commit -> optionally revise, drafts exposed) and the
  confidence-based parallel decoding loop every decoder shares.
* :mod:`.cascade` - the cascade evaluator: accuracy and exact match against tokens committed per step, cascade
  lift, repetition, correction rate, the speed-quality curve.
* :mod:`.model` and :mod:`.train` - a small masked-diffusion LM trained on CPU in minutes, and the ReDiff refiner
  (stage 1: synthetic corruptions; stage 2: its own drafts corrected toward the target).
* :mod:`.schedule` and :mod:`.experiment` - the two arms at equal total training steps (ReDiff, and the base trained
  as many more masked-diffusion steps) and their decoding at every number of tokens per step.
* :mod:`.report` - lm-eval-shaped results and samples files, the table and the plot; :mod:`.protocol` - the
  leaderboard protocol of ``rediff_arithmetic``; :mod:`.cli` - ``neurips26 rediff train|eval``.
"""
