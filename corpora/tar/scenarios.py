"""TAR scenarios: scene scripts with one scripted traffic anomaly (or none) and background traffic.

Each clip has one scenario: ``collision`` (a vehicle stops for a pedestrian at
the crosswalk and the one behind runs into it), ``stopped_vehicle`` (a vehicle
stops in its lane with hazard lights on; the next one queues behind it),
``wrong_way`` (a vehicle drives against the traffic of its lane),
``jaywalking`` (a pedestrian crosses away from the crosswalk; a vehicle stops
for them), ``sudden_braking`` (a vehicle brakes hard for no visible reason; the
one behind brakes too) or ``normal`` (a vehicle yields at the crosswalk), plus
background traffic and pedestrians. Event times lie on the frame grid. Each
scenario's script registers itself in :data:`SCRIPTS`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from neurips26.corpora.video.scene import (
    LANES,
    ROAD,
    SIDEWALKS,
    SIZES,
    Entity,
    Event,
    Scene,
    Track,
    grid,
    overlaps,
    pick_looks,
    random_layout,
)

from neurips26.registry import Registry

SCENARIOS = ("collision", "stopped_vehicle", "wrong_way", "jaywalking", "sudden_braking", "normal")  # the order
WALK = 0.1  # pedestrians cross at 0.1 frame heights per second
SCRIPTS: Registry[Callable[[Scene, random.Random], set | None]] = Registry("TAR scenario",
                                                                     group="neurips26.tar_scenarios")


def _vehicle(eid: str, look: tuple[str, str], track: Track, lane: str, facing: int | None = None) -> Entity:
    return Entity(eid, look[0], look[1], track.points, facing=facing or LANES[lane][1], lane=lane)


def _crosser(eid: str, colour: str, x: float, t_wait: float, t_go: float, south: bool = True) -> Entity:
    """A pedestrian standing on one sidewalk until ``t_go`` and then crossing to the other one."""
    y0, y1 = (SIDEWALKS["north"], SIDEWALKS["south"]) if south else (SIDEWALKS["south"], SIDEWALKS["north"])
    track = Track(t_wait, x, y0).wait(t_go)
    track.cruise(t_go + abs(y1 - y0) / WALK, vy=WALK if south else -WALK)
    return Entity(eid, "pedestrian", colour, track.points, facing=1)


def _on_road(scene: Scene, entity: Entity, band: tuple[float, float] = ROAD) -> tuple[float, float]:
    """[first, last frame's end) when the entity's box overlaps the horizontal band ``band``."""
    frames = [i for i in range(scene.n_frames)
              if (b := entity.box(i / scene.fps)) is not None and b[3] > band[0] and b[1] < band[1]]
    return frames[0] / scene.fps, (frames[-1] + 1) / scene.fps


def _background(scene: Scene, rng: random.Random, lane: str, n: int, allowed: set) -> None:
    """``n`` vehicles crossing the view in ``lane`` at one speed, placed where they hit nobody."""
    speed = rng.uniform(0.13, 0.19)
    direction = LANES[lane][1]
    taken = {e.colour for e in scene.entities if e.kind != "pedestrian"}
    for _ in range(n):
        look = pick_looks(rng, 1, ("car", "van", "truck", "bus"), taken)[0]
        for _ in range(30):
            x0 = rng.uniform(-0.8, 0.9)
            track = Track(0.0, x0 if direction > 0 else 1 - x0, LANES[lane][0], vx=direction * speed)
            entity = _vehicle(f"b{len(scene.entities)}", look, track.cruise(scene.duration), lane)
            scene.entities.append(entity)
            span = scene.visible_span(entity.id)
            if span and span[1] - span[0] > 1.0 and not overlaps(scene, allowed):
                taken.add(look[1])
                break
            scene.entities.pop()


def _strollers(scene: Scene, rng: random.Random, n: int) -> None:
    """Pedestrians walking along the sidewalks (never on the road)."""
    used = {e.colour for e in scene.entities if e.kind == "pedestrian"}
    for _ in range(n):
        colour = rng.choice(sorted({"red", "blue", "green", "orange", "yellow", "purple", "pink", "teal"} - used))
        used.add(colour)
        side = rng.choice(sorted(SIDEWALKS))
        direction = rng.choice((-1, 1))
        x0 = rng.uniform(0.05, 0.95)
        track = Track(0.0, x0, SIDEWALKS[side], vx=direction * rng.uniform(0.03, 0.05)).cruise(scene.duration)
        scene.entities.append(Entity(f"p{len(scene.entities)}", "pedestrian", colour, track.points, facing=direction))


def script(rng: random.Random, video_id: str, scenario: str, duration: float, fps: int,
           size: tuple[int, int]) -> Scene:
    """A scene with ``scenario`` and background traffic; retried until no two road users overlap by accident."""
    for _ in range(100):
        scene = Scene(video_id, duration, fps, size[0], size[1], random_layout(rng, f"CAM {rng.randint(1, 9)}"))
        allowed = SCRIPTS.get(scenario)(scene, rng)
        if allowed is None or overlaps(scene, allowed):
            continue
        other = "westbound" if scenario != "jaywalking" else "eastbound"
        _background(scene, rng, other, rng.randint(1, 2), allowed)
        _strollers(scene, rng, rng.randint(0, 2))
        return scene
    raise RuntimeError(f"could not script a {scenario} scene")  # pragma: no cover


@SCRIPTS.register("collision")
def collision(scene: Scene, rng: random.Random) -> set | None:
    """A vehicle stops for a pedestrian at the crosswalk and the one behind runs into it."""
    T, fps, cx = scene.duration, scene.fps, scene.layout.crosswalk_x
    (ka, ca), (kb, cb) = pick_looks(rng, 2, ("car", "van", "truck"))
    la, lb = SIZES[ka][0], SIZES[kb][0]
    y = LANES["eastbound"][0]
    ped = _crosser("p0", rng.choice(("orange", "yellow", "pink")), cx, 0.0, grid(rng.uniform(1.5, 2.5), fps),
                   south=False)
    scene.entities.append(ped)
    t_stop = grid(rng.uniform(2.0, 3.0), fps)  # A has stopped by then
    xs = cx - 0.05 - la / 2
    v = rng.uniform(0.13, 0.17)
    a = Track(0.0, xs - v * (t_stop - 1.0) - v * 0.5, y, vx=v).cruise(t_stop - 1.0).brake(1.0).wait(T)
    t_c = grid(t_stop + rng.uniform(1.0, 2.5), fps)
    if t_c > T - 1.5:
        return None
    vb = v * rng.uniform(1.3, 1.6)
    xc = xs - la / 2 - lb / 2
    b = Track(0.0, xc - vb * t_c, y, vx=vb).cruise(t_c).wait(T)
    scene.entities += [_vehicle("v1", (ka, ca), a, "eastbound"), _vehicle("v2", (kb, cb), b, "eastbound")]
    scene.entities[-2].hazard = scene.entities[-1].hazard = [(grid(t_c + 0.5, fps), T)]
    cross = _on_road(scene, ped)
    scene.events += [
        Event("crossing", cross[0], cross[1], ["p0"]),
        Event("yield", t_stop, T, ["v1", "p0"], cause=0),
        Event("collision", t_c, T, ["v2", "v1"], anomaly=True, cause=1, detail={"x": xs - la / 2, "y": y}),
    ]
    return {frozenset(("v1", "v2"))}


@SCRIPTS.register("stopped_vehicle")
def stopped_vehicle(scene: Scene, rng: random.Random) -> set | None:
    """A vehicle stops in its lane with hazard lights on; the next one queues behind it."""
    T, fps, cx = scene.duration, scene.fps, scene.layout.crosswalk_x
    (ka, ca), (kc, cc) = pick_looks(rng, 2, ("car", "van", "truck", "bus"))
    la, lc = SIZES[ka][0], SIZES[kc][0]
    y = LANES["eastbound"][0]
    xs = rng.choice((rng.uniform(0.55, 0.8), rng.uniform(0.25, 0.4)))
    if abs(xs - cx) < 0.12:
        return None
    t_s = grid(rng.uniform(2.5, 4.0), fps)
    v = rng.uniform(0.13, 0.18)
    a = Track(0.0, xs - v * (t_s - 1.2) - v * 0.6, y, vx=v).cruise(t_s - 1.2).brake(1.2).wait(T)
    t_q = grid(t_s + rng.uniform(1.5, 2.5), fps)
    xq = xs - la / 2 - 0.03 - lc / 2
    c = Track(0.0, xq - v * (t_q - 1.0) - v * 0.5, y, vx=v).cruise(t_q - 1.0).brake(1.0).wait(T)
    scene.entities += [_vehicle("v1", (ka, ca), a, "eastbound"), _vehicle("v2", (kc, cc), c, "eastbound")]
    scene.entities[-2].hazard = [(t_s, T)]
    scene.events += [
        Event("stopped_vehicle", t_s, T, ["v1"], anomaly=True),
        Event("queue", t_q, T, ["v2", "v1"], cause=0),
    ]
    return set()


@SCRIPTS.register("wrong_way")
def wrong_way(scene: Scene, rng: random.Random) -> set | None:
    """A vehicle drives against the traffic of its lane."""
    T = scene.duration
    (kw, cw), = pick_looks(rng, 1, ("car", "van", "motorcycle"))
    v = rng.uniform(0.14, 0.2)
    y = LANES["eastbound"][0]
    x0 = 1 + SIZES[kw][0] / 2 + rng.uniform(0.0, 0.4)
    w = Track(0.0, x0, y, vx=-v).cruise(T)
    scene.entities.append(_vehicle("v1", (kw, cw), w, "eastbound", facing=-1))
    span = scene.visible_span("v1")
    if span is None or span[1] - span[0] < 3.0:
        return None
    scene.events.append(Event("wrong_way", span[0], span[1], ["v1"], anomaly=True))
    return set()


@SCRIPTS.register("jaywalking")
def jaywalking(scene: Scene, rng: random.Random) -> set | None:
    """A pedestrian crosses away from the crosswalk; a vehicle stops for them."""
    T, fps, cx = scene.duration, scene.fps, scene.layout.crosswalk_x
    xj = rng.choice((rng.uniform(0.12, 0.25), rng.uniform(0.75, 0.88)))
    if abs(xj - cx) < 0.25:
        return None
    colour = rng.choice(("orange", "yellow", "pink", "purple"))
    ped = _crosser("p0", colour, xj, 0.0, grid(rng.uniform(1.5, 3.0), fps))
    scene.entities.append(ped)
    on_road = _on_road(scene, ped)
    y = LANES["westbound"][0]
    lane_band = (ROAD[0], (LANES["westbound"][0] + LANES["eastbound"][0]) / 2)
    in_lane = _on_road(scene, ped, lane_band)
    (kv, cv), = pick_looks(rng, 1, ("car", "van", "truck"))
    lv = SIZES[kv][0]
    v = rng.uniform(0.13, 0.17)
    xs = xj + 0.04 + lv / 2
    t_stop = grid(in_lane[0] + 0.2, fps)
    t_go = grid(in_lane[1] + 0.3, fps)
    if t_go > T - 1.5 or t_stop < 1.2:
        return None
    track = Track(0.0, xs + v * (t_stop - 1.0) + v * 0.5, y, vx=-v).cruise(t_stop - 1.0).brake(1.0).wait(t_go)
    track.accelerate(1.0, -v).cruise(T)
    scene.entities.append(_vehicle("v1", (kv, cv), track, "westbound"))
    scene.events += [
        Event("jaywalking", on_road[0], on_road[1], ["p0"], anomaly=True, detail={"x": xj}),
        Event("yield", t_stop, t_go, ["v1", "p0"], cause=0),
    ]
    return set()


@SCRIPTS.register("sudden_braking")
def sudden_braking(scene: Scene, rng: random.Random) -> set | None:
    """A vehicle brakes hard for no visible reason; the one behind brakes too."""
    T, fps = scene.duration, scene.fps
    (ka, ca), (kb, cb) = pick_looks(rng, 2, ("car", "van", "truck"))
    la, lb = SIZES[ka][0], SIZES[kb][0]
    y = LANES["eastbound"][0]
    v = rng.uniform(0.13, 0.17)
    t_b = grid(rng.uniform(3.0, 4.5), fps)
    x_b = rng.uniform(0.45, 0.65)  # where A is when it starts braking
    a = Track(0.0, x_b - v * t_b, y, vx=v).cruise(t_b).brake(0.5).wait(t_b + 1.5).accelerate(1.0, v).cruise(T)
    d_b = 0.8
    headway = 0.05 * v + v * d_b / 2 + 0.03
    xb = x_b - la / 2 - lb / 2 - headway
    t_b2 = grid(t_b + 0.3, fps)
    b = Track(0.0, xb - v * t_b, y, vx=v).cruise(t_b2).brake(d_b).wait(t_b + 2.0).accelerate(1.0, v).cruise(T)
    scene.entities += [_vehicle("v1", (ka, ca), a, "eastbound"), _vehicle("v2", (kb, cb), b, "eastbound")]
    scene.events += [
        Event("sudden_braking", t_b, grid(t_b + 1.5, fps), ["v1"], anomaly=True),
        Event("brake", t_b2, grid(t_b + 2.0, fps), ["v2", "v1"], cause=0),
    ]
    return set()


@SCRIPTS.register("normal")
def normal(scene: Scene, rng: random.Random) -> set | None:
    """No anomaly: a vehicle yields to a pedestrian at the crosswalk."""
    T, fps, cx = scene.duration, scene.fps, scene.layout.crosswalk_x
    ped = _crosser("p0", rng.choice(("orange", "yellow", "pink", "teal")), cx, 0.0, grid(rng.uniform(1.0, 2.0), fps),
                   south=False)
    scene.entities.append(ped)
    y = LANES["eastbound"][0]
    in_lane = _on_road(scene, ped, (y - 0.09, y + 0.09))
    (ka, ca), = pick_looks(rng, 1, ("car", "van", "truck", "bus"))
    la = SIZES[ka][0]
    v = rng.uniform(0.13, 0.17)
    xs = cx - 0.05 - la / 2
    t_stop = grid(in_lane[0] + rng.uniform(-0.5, 0.3), fps)
    t_go = grid(in_lane[1] + 0.3, fps)
    if t_stop < 1.2 or t_go > T - 1.5:
        return None
    a = Track(0.0, xs - v * (t_stop - 1.0) - v * 0.5, y, vx=v).cruise(t_stop - 1.0).brake(1.0).wait(t_go)
    a.accelerate(1.0, v).cruise(T)
    scene.entities.append(_vehicle("v1", (ka, ca), a, "eastbound"))
    cross = _on_road(scene, ped)
    scene.events += [Event("crossing", cross[0], cross[1], ["p0"]),
                     Event("yield", t_stop, t_go, ["v1", "p0"], cause=0)]
    return set()
