"""CLoVR-Bench taxonomy: three levels, tasks and subtasks.

The release has 14 tasks and 36 subtasks under the three levels. The builder
checks only the level (normalising its spelling) and keeps task and subtask
names as given. :data:`GENERATED` lists the tasks and subtasks the procedural
generator writes questions for, at least one task per level.
"""

from __future__ import annotations

import re

LEVELS = ("Comparative Analysis", "Tracking and Retrieval", "Integrated Reasoning")
SLUGS = {level: re.sub(r"[^a-z]+", "_", level.lower()).strip("_") for level in LEVELS}

GENERATED: dict[str, dict[str, list[str]]] = {
    "Comparative Analysis": {
        "Quantity Comparison": ["vehicle count", "pedestrian count"],
        "Speed Comparison": ["recurring vehicle speed"],
        "Event Comparison": ["stop event"],
    },
    "Tracking and Retrieval": {
        "Re-identification": ["appearance set"],
        "Temporal Retrieval": ["first appearance"],
        "Attribute Tracking": ["travel direction"],
    },
    "Integrated Reasoning": {
        "Cross-video Counting": ["appearance count"],
        "Temporal Ordering": ["entity order"],
        "Route Reasoning": ["direction consistency"],
    },
}


def level(value: object) -> str:
    """The canonical level name for ``value`` ('comparative_analysis', 'Level 1', 2, ...); ValueError if none."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= len(LEVELS):
        return LEVELS[value - 1]
    text = re.sub(r"[^a-z0-9]+", " ", str(value).lower()).strip()
    for k, name in enumerate(LEVELS, start=1):
        if text in (name.lower(), SLUGS[name].replace("_", " "), f"level {k}", f"l{k}", str(k)):
            return name
    raise ValueError(f"level {value!r} is not one of {', '.join(LEVELS)}")
