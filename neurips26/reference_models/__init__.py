"""Reference answerers and the check that scores mean something.

Importing this package registers two lm-eval models that know nothing (:mod:`.answerers`): ``constant``
(``strategy=first|majority|empty``) and ``random`` (``seed=``). :mod:`.baselines` resolves each task's
baseline (its YAML's ``metadata.protocol``) on a run's samples and says whether an answerer's score stays
within the baseline's 95% interval, as a model that knows nothing must.
"""

from __future__ import annotations

from .answerers import STRATEGIES, ConstantLM, RandomLM

__all__ = ["STRATEGIES", "ConstantLM", "RandomLM"]
