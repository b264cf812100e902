"""Weak LOCUS labels read from a code's own headings.

The label sets are LOCUS-v1's (``records.FUNCTIONS``/``TOPICS``; see the gold folder's ``CODEBOOK.md``).
Weak labels need no annotator:

- ``weak_topic``: from the chapter/title headings above a section (``domains.py``), the
  project's thirteen domains folded into the five LOCUS topics (``DOMAIN_TOPIC``);
- ``weak_function``: from the section's own catchline, by keyword, first match in the order Context,
  Enforcement, Process, Rules (``FUNCTION_CUES``); None when no cue matches;
- ``weak_substantive``: False for Context catchlines and repealed/reserved sections, True for the other
  functions, None otherwise.
"""

from __future__ import annotations

import re

from .domains import domain_of_path

DOMAIN_TOPIC = {
    "zoning": "Zoning", "buildings": "Buildings", "business licensing": "Business", "alcohol": "Business",
    "animals": "Nuisance", "noise": "Nuisance", "health and sanitation": "Nuisance", "traffic": "Other",
    "elections": "Other", "taxation": "Other", "personnel": "Other", "utilities": "Other", "public safety": "Other",
}
FUNCTION_CUES = {
    "Context": r"definitions?|purpose|intent|findings|short title|title\b|scope|applicab|construction of|"
               r"rules of construction|severab|effective date|interpretation|authority\b|reserved|repealed",
    "Enforcement": r"penalt|violations?|enforce|citations?|abatement|fines?\b|remed|revocation|suspension|"
                   r"inspections?|liens?\b|punish|unlawful acts? and penalt",
    "Process": r"permits?|applications?|fees?\b|hearings?|appeals?|notices?|meetings?|elections?|appoint|duties|"
               r"powers|budget|accounts?\b|procedures?|boards?|commissions?|council|officers?|term of office|"
               r"compensation|records|reports?\b|issuance|renewal|registration|bonds?\b|administration",
    "Rules": r"prohibit|unlawful|restrict|requirements?|standards|hours|permitted|regulations?|limitations?|"
             r"height|setbacks?|keeping|parking|noise|maintenance|duty of|obstruct|discharg|running at large|"
             r"storage|signs?\b|fences?|yards?\b|lots?\b|uses?\b|conduct",
}
_CUES = {function: re.compile(rf"\b(?:{cue})", re.I) for function, cue in FUNCTION_CUES.items()}


def weak_topic(path: list[str]) -> str | None:
    """LOCUS topic from the headings above a section, or None."""
    domain = domain_of_path(list(path or []))
    return DOMAIN_TOPIC[domain] if domain else None


def weak_function(heading: str) -> str | None:
    """LOCUS function from a section's catchline, or None."""
    for function, cue in _CUES.items():
        if cue.search(heading or ""):
            return function
    return None


def weak_substantive(heading: str, status: str = "active") -> bool | None:
    """Whether a section is substantive, from its catchline and status, or None."""
    if status != "active":
        return False
    function = weak_function(heading)
    return None if function is None else function != "Context"
