"""TAR narration: the sentences every annotation is templated from (events, road users, causes, labels)."""

from __future__ import annotations

from neurips26.corpora.video.scene import Event, Scene

LABELS = {"collision": "a rear-end collision", "stopped_vehicle": "a vehicle stopped in a traffic lane",
          "wrong_way": "wrong-way driving", "jaywalking": "jaywalking", "sudden_braking": "sudden braking",
          "normal": "no anomaly"}
PROBES = {  # yes/no question about each anomaly type
    "collision": "Does any vehicle collide with another vehicle?",
    "stopped_vehicle": "Is a vehicle left standing in a traffic lane with its hazard lights on?",
    "wrong_way": "Does any vehicle drive against the direction of traffic?",
    "jaywalking": "Does a pedestrian cross the road away from the crosswalk?",
    "sudden_braking": "Does a vehicle brake hard without any visible reason?",
}
WHY = {
    "collision": "vehicles must keep a safe distance and never touch",
    "stopped_vehicle": "a vehicle should not stand in a traffic lane when nothing blocks it",
    "wrong_way": "vehicles in the eastbound lane must travel left to right",
    "jaywalking": "pedestrians must cross at the crosswalk",
    "sudden_braking": "nothing in front of the vehicle requires it to stop",
}
# Probes whose honest answer would be unclear in a scenario (a vehicle stopping for a pedestrian is not "left
# standing", a hard stop before a collision is not "without reason"): never asked there.


def s(t: float) -> str:
    return f"{t:.1f} s"


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


EVENT_TEXT = {
    "crossing": "{0} crosses the road at the crosswalk",
    "yield": "{0} stops to let {1} cross",
    "collision": "{0} runs into the back of {1}",
    "stopped_vehicle": "{0} stops in the eastbound lane and stays there with its hazard lights on",
    "queue": "{0} has to stop behind {1}",
    "wrong_way": "{0} drives right to left in the eastbound lane, against the traffic",
    "jaywalking": "{0} crosses the road away from the crosswalk",
    "sudden_braking": "{0} brakes hard and stops for no visible reason",
    "brake": "{0} brakes hard behind {1}",
}


def describe(scene: Scene, event: Event) -> str:
    """One clause for an event, e.g. 'the white truck runs into the back of the red car'."""
    return EVENT_TEXT[event.kind].format(*(scene.entity(e).name for e in event.entities))


def timeline(scene: Scene) -> list[str]:
    return [f"At {s(e.start)}, {describe(scene, e)}." for e in sorted(scene.events, key=lambda e: (e.start, e.kind))]


def anomaly_of(scene: Scene) -> Event | None:
    return next((e for e in scene.events if e.anomaly), None)


def scene_sentence(scene: Scene) -> str:
    cx = scene.layout.crosswalk_x
    where = "near the centre" if 0.45 <= cx <= 0.55 else "left of centre" if cx < 0.45 else "right of centre"
    return (f"A fixed CCTV camera ({scene.layout.camera}) overlooks a two-lane road: a westbound lane (upper, "
            f"traffic moving right to left) and an eastbound lane (lower, left to right), with sidewalks on both "
            f"sides, buildings behind the far sidewalk and a crosswalk {where} of the view.")


def road_users(scene: Scene) -> str:
    vehicles = [e.name for e in scene.entities if e.kind != "pedestrian"]
    people = [e.name for e in scene.entities if e.kind == "pedestrian"]
    parts = [f"{len(vehicles)} vehicle{'s' * (len(vehicles) != 1)} ({', '.join(vehicles)})"] if vehicles else []
    if people:
        parts.append(f"{len(people)} pedestrian{'s' * (len(people) != 1)} ({', '.join(people)})")
    return "Road users: " + " and ".join(parts) + "."


def entity_story(scene: Scene, entity_id: str) -> str:
    """What one road user does, in order, with times."""
    entity = scene.entity(entity_id)
    span = scene.visible_span(entity_id)
    clauses = []
    if entity.kind != "pedestrian" and span:
        side = "left" if entity.facing > 0 else "right"
        enter = "is already in view" if span[0] == 0 else f"enters from the {side} at {s(span[0])}"
        clauses.append(f"{enter} in the {entity.lane} lane")
    for event in sorted(scene.events, key=lambda e: e.start):
        if entity_id in event.entities:
            clauses.append(f"at {s(event.start)} {describe(scene, event).replace(entity.name + ' ', '', 1)}")
    if span and span[1] < scene.duration and entity.kind != "pedestrian":
        clauses.append(f"leaves the view at {s(span[1])}")
    return f"{cap(entity.name)} " + ", ".join(clauses) + "."


def causal_qa(scene: Scene, scenario: str) -> tuple[str, str]:
    events = scene.events
    n = {e.id: e.name for e in scene.entities}
    if scenario == "collision":
        stop, crash = events[1], events[2]
        return (f"What caused the collision between {n['v2']} and {n['v1']}?",
                f"{cap(n['v1'])} stopped at {s(stop.start)} to let {n['p0']} cross at the crosswalk, and "
                f"{n['v2']}, following too fast and too close, did not slow down and hit it at {s(crash.start)}.")
    if scenario == "stopped_vehicle":
        stop, queue = events
        return (f"Why does {n['v2']} stop at {s(queue.start)}?",
                f"Because {n['v1']} had stopped in the eastbound lane ahead of it at {s(stop.start)} and "
                f"blocks the lane.")
    if scenario == "wrong_way":
        return (f"Why is the movement of {n['v1']} dangerous?",
                f"Because {n['v1']} drives right to left in the eastbound lane, where traffic moves left to right, "
                f"so it travels head-on against the flow of traffic.")
    if scenario == "jaywalking":
        jay, stop = events
        return (f"Why does {n['v1']} stop at {s(stop.start)}?",
                f"Because {n['p0']} was crossing the road in front of it, away from the crosswalk, "
                f"from {s(jay.start)}.")
    if scenario == "sudden_braking":
        brake, follow = events
        return (f"Why does {n['v2']} brake hard at {s(follow.start)}?",
                f"Because {n['v1']} ahead of it braked suddenly at {s(brake.start)} for no visible reason.")
    stop = events[1]
    return (f"Why does {n['v1']} stop at {s(stop.start)}?",
            f"To let {n['p0']} cross the road at the crosswalk.")
