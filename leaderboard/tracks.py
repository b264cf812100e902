"""Tracks: the overall boards a submission can complete.

One overall over every task (text QA, video QA, segmentation, robot control, ReDiff...) ranks nobody: no model
runs all of them. So each track has an overall board of its own, over the tasks a submission of that kind runs:

* ``text`` (Text LM): the ``neurips26`` group of lm-eval tasks (``lm_eval --tasks neurips26``);
* ``video`` (Video LM): the ``neurips26_video`` group;
* one track per method family: the group a registered evaluator outside lm-eval belongs to (``fic``,
  ``rediff``, ``robot_actions``, the geometry families...);
* an lm-eval group outside these (a task folder of one's own) is a track of its own.

A track's overall is :func:`.ranking.leaderboard` over its group (groups in ``OUT_OF_OVERALL`` keep their own
boards and stay out of the mean). Its boards are its resource groups, plus any other lm-eval group whose YAMLs live
in the same task folder as the track's (the LOCUS gold tasks beside LOCUS).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .catalog import TaskSpec
from .ranking import overall_tasks, scope

# lm-eval tracks: (track name, label, the group whose tasks the track's complete submission runs)
LM_TRACKS = (("text", "Text LM", "neurips26"), ("video", "Video LM", "neurips26_video"))


@dataclass(frozen=True)
class Track:
    """A track: its overall board (``board``, over ``group``) and the boards of its parts."""

    name: str
    label: str
    group: str
    parts: tuple[str, ...]  # the groups shown as boards of their own (empty: the overall is the only board)
    family: bool = False  # a method family (an evaluator outside lm-eval), not an lm-eval track

    @property
    def board(self) -> str:
        """The name of the track's overall board (the group's own name when the track is one group)."""
        return f"{self.label} overall" if self.parts else self.group


def tracks(tasks: Mapping[str, TaskSpec], groups: Mapping[str, list[str]]) -> list[Track]:
    """The lm-eval tracks whose group exists, then one track per method family, by name."""
    out: list[Track] = []
    claimed: set[str] = set()
    for name, label, root in LM_TRACKS:
        if root not in groups:
            continue
        members = [g for g in groups[root] if g in groups]
        folders = {tasks[t].folder for t in scope(dict(tasks), group=root, groups=dict(groups)) if tasks[t].folder}
        beside = sorted({s.group for s in tasks.values() if s.folder in folders and s.group not in members})
        out.append(Track(name, label, root, tuple(members + beside)))
        claimed |= {root, *members, *beside}
    members = {m for g in groups.values() for m in g}
    alone = sorted({s.group for s in tasks.values() if s.source != "registered" and s.group not in claimed
                    and s.group not in members})  # an lm-eval group outside the tracks (a task folder of one's own)
    out += [Track(g, g, g, ()) for g in alone]
    families = sorted({s.group for s in tasks.values() if s.source == "registered" and s.group not in claimed})
    out += [Track(g, g, g, (), family=True) for g in families]
    return out


def demo_tracks(track_list: list[Track]) -> list[Track]:
    """The tracks whose boards the demo view shows over UNRANKED runs: the lm-eval ones (a method family's
    evaluator outside lm-eval has no demo runs)."""
    return [t for t in track_list if not t.family]


def board_scopes(track_list: list[Track]) -> dict[str, dict[str, str]]:
    """Board name -> the ``leaderboard`` arguments of every board of the tracks (their overalls and parts)."""
    scopes: dict[str, dict[str, str]] = {}
    for track in track_list:
        scopes[track.board] = {"group": track.group}
        scopes |= {part: {"group": part} for part in track.parts}
    return scopes


def track_parts(track: Track, tasks: Mapping[str, TaskSpec], groups: Mapping[str, list[str]]) -> list[str]:
    """The parts whose tasks enter the track's overall mean (each shown as a score column of the overall)."""
    ranked = set(overall_tasks(dict(tasks), scope(dict(tasks), group=track.group, groups=dict(groups)), track.group))
    return [p for p in track.parts if ranked & set(scope(dict(tasks), group=p, groups=dict(groups)))]


def track_of(task: str, track_list: list[Track], tasks: Mapping[str, TaskSpec],
             groups: Mapping[str, list[str]]) -> Track | None:
    """The track whose boards hold ``task`` (None: none)."""
    for track in track_list:
        for group in (track.group, *track.parts):
            if task in scope(dict(tasks), group=group, groups=dict(groups)):
                return track
    return None
