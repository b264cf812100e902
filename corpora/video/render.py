"""Render a :class:`~.scene.Scene` to an H.264 MP4 with PyAV, byte-identical for the same scene.

Frames are drawn with PIL: a static background (buildings, grass, sidewalks,
road, lane markings, crosswalk) made once per clip, then per frame the road
users (vehicles as boxes with a windshield, brake and hazard lights;
pedestrians as dots), a burst where a collision happens, and a CCTV overlay
with the camera name and the clip time. Encoding uses libx264 with a fixed
GOP (``keyint`` frames), one thread, no macroblock-tree rate control and no timestamps in the container, so the
same script always gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from .decoder import _av
from .scene import COLOURS, LANES, ROAD, SIDEWALKS, Scene

KEYINT = 20  # frames between keyframes (2 s at 10 fps), typical of CCTV encoders
# mbtree off: with it, this x264 build's output varied from run to run on identical input.
X264 = {"preset": "veryfast", "crf": "23", "x264-params": "keyint={keyint}:min-keyint={keyint}:scenecut=0:mbtree=0"}


def background(scene: Scene) -> Image.Image:
    w, h = scene.width, scene.height
    layout = scene.layout
    img = Image.new("RGB", (w, h), layout.grass)
    draw = ImageDraw.Draw(img)
    for x0, x1, rgb in layout.buildings:
        draw.rectangle([x0 * w, 0, x1 * w, 0.24 * h], fill=tuple(rgb))
        for wx in range(int(x0 * w) + 2, int(x1 * w) - 2, 5):  # windows
            draw.rectangle([wx, 0.06 * h, wx + 2, 0.06 * h + 2], fill=(60, 70, 90))
    for y in SIDEWALKS.values():
        draw.rectangle([0, (y - 0.04) * h, w, (y + 0.04) * h], fill=(175, 170, 160))
    draw.rectangle([0, ROAD[0] * h, w, ROAD[1] * h], fill=(80, 80, 85))
    mid = (LANES["westbound"][0] + LANES["eastbound"][0]) / 2 * h
    for x in range(0, w, 12):  # dashed centre line
        draw.rectangle([x, mid - 0.5, x + 6, mid + 0.5], fill=(230, 200, 60))
    cx = layout.crosswalk_x * w
    y = ROAD[0] * h
    while y < ROAD[1] * h - 1:  # zebra stripes
        draw.rectangle([cx - 0.04 * w, y, cx + 0.04 * w, y + 1.5], fill=(225, 225, 225))
        y += 4
    return img


def draw_frame(scene: Scene, base: Image.Image, t: float, font: Glyphs) -> Image.Image:
    w, h = scene.width, scene.height
    img = base.copy()
    draw = ImageDraw.Draw(img)
    for entity in sorted(scene.entities, key=lambda e: e.kind != "pedestrian"):  # vehicles on top
        box = entity.box(t)
        if box is None or not entity.visible(t):
            continue
        x0, y0, x1, y1 = box[0] * w, box[1] * h, box[2] * w, box[3] * h
        rgb = COLOURS[entity.colour]
        if entity.kind == "pedestrian":
            draw.ellipse([x0, y0, x1, y1], fill=rgb, outline=(20, 20, 20))
            continue
        draw.rectangle([x0, y0, x1, y1], fill=rgb, outline=(25, 25, 25))
        front, back = (x1, x0) if entity.facing > 0 else (x0, x1)
        glass = 0.25 * (x1 - x0)
        wx0, wx1 = sorted((front - entity.facing * glass, front - entity.facing * 0.45 * glass))
        draw.rectangle([wx0, y0 + 1, wx1, y1 - 1], fill=(40, 50, 70))
        braking = entity.speed(t) < 0.01 or entity.speed(t + 0.05) < entity.speed(t - 0.05) - 1e-3
        if braking:
            draw.rectangle([back - 0.5, y0, back + 0.5, y0 + 1.5], fill=(255, 30, 30))
            draw.rectangle([back - 0.5, y1 - 1.5, back + 0.5, y1], fill=(255, 30, 30))
        if any(a <= t < b for a, b in entity.hazard) and int(t * 2) % 2 == 0:
            for cx, cy in ((x0, y0), (x1, y0), (x0, y1), (x1, y1)):
                draw.rectangle([cx - 1, cy - 1, cx + 1, cy + 1], fill=(255, 170, 0))
    for event in scene.events:
        if event.kind == "collision" and event.start <= t < event.start + 1.0:
            x, y = event.detail["x"] * w, event.detail["y"] * h
            r = 2 + 3 * (t - event.start)
            draw.regular_polygon((x, y, r), 6, fill=(255, 220, 60), outline=(255, 90, 0))
    font.stamp(img, f"{scene.layout.camera}  {int(t // 60):02d}:{t % 60:04.1f}")
    return img


class Glyphs:
    """The CCTV overlay text, pasted from glyphs rendered once (drawing text per frame is the slow part)."""

    def __init__(self, size: int) -> None:
        self.font = ImageFont.load_default(size=size)
        self.cache: dict[str, tuple[Image.Image, int]] = {}

    def glyph(self, char: str) -> tuple[Image.Image, int]:
        if char not in self.cache:
            width = max(1, round(self.font.getlength(char)))
            mask = Image.new("L", (width + 1, self.font.size + 3), 0)
            ImageDraw.Draw(mask).text((0, 0), char, fill=255, font=self.font)
            self.cache[char] = (mask, width)
        return self.cache[char]

    def stamp(self, img: Image.Image, text: str, x: int = 1, y: int = 0) -> None:
        for char in text:
            mask, width = self.glyph(char)
            img.paste((0, 0, 0), (x + 1, y + 1), mask)
            img.paste((255, 255, 255), (x, y), mask)
            x += width


def frames(scene: Scene) -> Iterator[Image.Image]:
    """Every frame of the clip as a PIL image."""
    base = background(scene)
    font = Glyphs(max(7, scene.height // 12))
    for i in range(scene.n_frames):
        yield draw_frame(scene, base, i / scene.fps, font)


def write_mp4(scene: Scene, path: Path, keyint: int = KEYINT) -> Path:
    """Render ``scene`` to ``path`` (H.264, yuv420p, ``scene.fps``, a keyframe every ``keyint`` frames)."""
    av = _av()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.part")
    with av.open(str(tmp), "w", format="mp4", options={"fflags": "+bitexact"}) as container:
        options = {**X264, "x264-params": X264["x264-params"].format(keyint=keyint)}
        stream = container.add_stream("libx264", rate=scene.fps, options=options)
        stream.codec_context.thread_count = 1  # x264's output depends on its threads; PyAV's default is automatic
        stream.width, stream.height, stream.pix_fmt = scene.width, scene.height, "yuv420p"
        for image in frames(scene):
            frame = av.VideoFrame.from_image(image).reformat(format="yuv420p", threads=1)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    tmp.replace(path)
    return path
