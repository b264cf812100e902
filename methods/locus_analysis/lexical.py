"""Enforcement discretion and problem salience by counted cues (the default backend).

The gold set rates neither dimension, so nothing can be trained or checked for them here; these are
transparent proxies, z-scored over the corpus like every score, and to be read as such:

- ``enforcement_discretion``: permissive and judgement cues ("may", "at the discretion of", "as deemed
  necessary", "reasonable", "in the opinion of", "if the ... determines") minus mandatory cues ("shall",
  "must", "is required to"), per 100 words;
- ``problem_salience``: words naming a harm or the problem a rule addresses ("nuisance", "danger",
  "hazard", "health, safety and welfare", "injury", "threat", "pollution", "disturb"...), per 100 words.
"""

from __future__ import annotations

import re

WORD = re.compile(r"[A-Za-z]+")
DISCRETION = re.compile(
    r"\bmay\b|\bdiscretion\b|\bdeem(?:s|ed)?\b|\breasonabl[ey]\b|\bin the opinion of\b|\bdetermines?\b|"
    r"\bas (?:necessary|appropriate)\b|\bif (?:necessary|appropriate)\b|\bwaive[sd]?\b|\bexempt\b", re.I)
MANDATORY = re.compile(r"\bshall\b(?!\s+not\s+be\s+required)|\bmust\b|\bis required to\b|\bare required to\b", re.I)
PROBLEM = re.compile(
    r"\bnuisances?\b|\bdanger\w*|\bhazard\w*|\bhealth\b|\bsafety\b|\bwelfare\b|\binjur\w*|\bthreat\w*|\bharm\w*|"
    r"\bpollut\w*|\bdisturb\w*|\bunsanitary\b|\bunsafe\b|\bblight\w*|\bdeteriorat\w*|\bfire hazard\b|"
    r"\bpublic peace\b|\bannoy\w*|\bdisease\w*|\bvermin\b|\brodents?\b", re.I)


def _per_100_words(count: int, text: str) -> float:
    return 100 * count / max(1, len(WORD.findall(text)))


def enforcement_discretion(text: str) -> float:
    """Permissive minus mandatory cues per 100 words."""
    return _per_100_words(len(DISCRETION.findall(text)) - len(MANDATORY.findall(text)), text)


def problem_salience(text: str) -> float:
    """Harm and problem words per 100 words."""
    return _per_100_words(len(PROBLEM.findall(text)), text)
