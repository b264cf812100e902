"""``neurips26 generate tar|clovr``: write a procedural release of a video resource.

Registered in ``neurips26.cli`` as ``app.command("generate")(friendly(generate))``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer
from neurips26.corpora.video.records import VIDEO_GENERATORS

from neurips26.errors import UserError
from neurips26.options import out_option
from neurips26.output import progress

OUTPUTS = ("annotations", "videos", "scenes", "SHA256SUMS")


def clear_output(out: Path) -> None:
    """Remove what an earlier generator run wrote; refuse a non-empty folder that is not one."""
    if out.exists() and any(out.iterdir()) and not (out / "SHA256SUMS").is_file():
        raise FileExistsError(f"{out}: exists, is not empty and is not a generated release (no SHA256SUMS); "
                              "choose an empty or new --out")
    for name in OUTPUTS:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def generate(
    resource: Annotated[str, typer.Argument(help="tar or clovr.")],
    out: Annotated[Path | None, out_option("Output folder (default: ./<resource>-raw).")] = None,
    seed: Annotated[int, typer.Option(help="Same seed and options, same bytes.")] = 0,
    videos: Annotated[int | None, typer.Option(min=1, help="TAR: number of clips (default 6).")] = None,
    test_videos: Annotated[int | None, typer.Option(min=0, help="TAR: clips in the test split (default 2).")] = None,
    sets: Annotated[int | None, typer.Option(min=1, help="CLoVR: number of video sets (default 3).")] = None,
    videos_per_set: Annotated[int | None, typer.Option(min=2, help="CLoVR: videos per set (default 3).")] = None,
    duration: Annotated[float | None, typer.Option(help="Seconds per clip (TAR 10, CLoVR 24).")] = None,
    fps: Annotated[int, typer.Option(min=1, help="Frames per second.")] = 10,
    width: Annotated[int, typer.Option(min=16, help="Frame width (even).")] = 160,
    height: Annotated[int, typer.Option(min=16, help="Frame height (even).")] = 96,
) -> None:
    """Render a procedural release (MP4 clips + annotations in the released layout) that `build` reads."""
    from rich.console import Console

    render = VIDEO_GENERATORS.get(resource)  # UnknownNameError lists the known ones
    options = {"tar": {"n_videos": videos, "test_videos": test_videos},
               "clovr": {"n_sets": sets, "videos_per_set": videos_per_set}}
    wrong = [name for other, opts in options.items() if other != resource for name, v in opts.items() if v is not None]
    if wrong:
        raise UserError(f"option(s) {', '.join(wrong)} do not apply to {resource}")
    kwargs = {k: v for k, v in options.get(resource, {}).items() if v is not None}
    if duration is not None:
        kwargs["duration"] = duration
    out = out or Path(f"{resource}-raw")
    clear_output(out)
    with progress(lines=True) as bars:
        report = render(out, seed=seed, fps=fps, size=(width, height),
                        progress=bars.track(f"rendering {resource}"), **kwargs)
    Console().print(f"[green]generated[/green] {out}: {report.summary()}", highlight=False)
    Console().print(f"build it: neurips26 build {resource} --raw {out}", highlight=False)
