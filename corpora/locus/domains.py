"""Regulatory domain of a section, read from its code's own chapter/title headings.

The mapping is a list of (domain, keyword pattern) pairs matched against the
headings in a section's ``path``, innermost first. The first heading that
matches any domain decides:

- it matches exactly one domain -> that domain;
- it matches several (``BUSINESS LICENSES AND TAXES``) -> ambiguous, left out;
- no heading matches -> no label, left out.

Only the path is used, never the section's own catchline or text, so the label
is the code's own classification of where the section belongs.
"""

from __future__ import annotations

import re

DOMAINS: dict[str, str] = {
    "zoning": r"zoning|zones?\b|land use|subdivisions?|planning|land development",
    "animals": r"animals?|dogs?|livestock|fowl|pets?\b|rabies|kennels?|chickens?|pot bellied pigs",
    "alcohol": r"alcohol(ic)?|liquor|beer|wine|intoxicating",
    "traffic": r"traffic|motor vehicles?|vehicles|parking|bicycles?",
    "noise": r"noise|sound amplif",
    "business licensing": r"business(es)?|licens(e|es|ing)|peddl|solicit|vendors?|auctioneers?|pawn",
    "health and sanitation": r"health|sanitation|solid waste|garbage|refuse|litter|weeds",
    "buildings": r"buildings?|construction|housing|structures|building codes?|manufactured homes?",
    "elections": r"elections?|voting|voters?|campaign|candidates?",
    "taxation": r"tax(es|ation)?\b|revenue|ad valorem|assessments?",
    "personnel": r"personnel|employees?|employment|retirement|pensions?|civil service|human resources",
    "utilities": r"utilit(y|ies)|water|sewers?|sewage|stormwater|electric",
    "public safety": r"fire\b|fire prevention|police|emergency|law enforcement",
}
_PATTERNS = {domain: re.compile(rf"\b(?:{pattern})", re.IGNORECASE) for domain, pattern in DOMAINS.items()}
_HEADING_NOISE = re.compile(r"\[\d+\]|footnotes?:.*$", re.IGNORECASE)


def domains_of_heading(heading: str) -> set[str]:
    """Every domain whose keywords occur in ``heading``."""
    text = _HEADING_NOISE.sub("", heading)
    return {domain for domain, pattern in _PATTERNS.items() if pattern.search(text)}


def domain_of_path(path: list[str]) -> str | None:
    """The section's domain, or None when unlabelled or ambiguous (see module docstring)."""
    for heading in reversed(path):
        found = domains_of_heading(heading)
        if len(found) == 1:
            return found.pop()
        if found:
            return None
    return None
