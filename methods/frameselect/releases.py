"""Generated TAR and CLoVR releases, built once and kept: the question sets the FrameSelect claims measure on.

    folder = generated("clovr", seed=3, n_sets=3)      # <cache>/frameselect/releases/clovr-<key>/
    questions, pools = with_pools("clovr", folder)   # the questions with evidence spans and their pools

Each release is rendered by the corpus's own generator (exact ground truth: every answer and evidence
span follows from the scene scripts) and built by its builder into a Hub-ready folder under
``<cache>/frameselect/releases``, named by the generator's arguments; a second call with the same
arguments reads the folder already built. Different seeds give disjoint videos and questions, which is
how train, held-out and test splits are made.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from neurips26.corpora.clovr import build as clovr_build
from neurips26.corpora.clovr import generate as clovr_generate
from neurips26.corpora.tar import build as tar_build
from neurips26.corpora.tar import generate as tar_generate

from neurips26 import settings
from neurips26.errors import UserError

from . import benchmarks
from .benchmarks import Question
from .core import Pool
from .pool import build_pool

GENERATORS = {"clovr": (clovr_generate.generate, clovr_build.build),
              "tar": (tar_generate.generate, tar_build.build)}


def root() -> Path:
    """``<cache>/frameselect/releases``."""
    return settings.cache_dir() / "frameselect" / "releases"


def generated(benchmark: str, seed: int, folder: Path | None = None, **options: Any) -> Path:
    """The built folder of ``benchmark``'s generated release with ``seed`` and generator ``options``
    (``n_sets``, ``videos_per_set``, ``duration`` for CLoVR; ``n_videos``, ``test_videos``, ``duration``
    for TAR), built on first use under ``folder`` (default :func:`root`)."""
    if benchmark not in GENERATORS:
        raise UserError(f"no generator for benchmark {benchmark!r} (have {', '.join(GENERATORS)})")
    generate, build = GENERATORS[benchmark]
    key = hashlib.sha256(json.dumps({"seed": seed, **options}, sort_keys=True).encode()).hexdigest()[:12]
    out = Path(folder or root()) / f"{benchmark}-seed{seed}-{key}"
    if (out / settings.MANIFEST).is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        generate(Path(tmp) / "raw", seed=seed, **options)
        build(raw=Path(tmp) / "raw", out=Path(tmp) / "built")
        if not (out / settings.MANIFEST).is_file():  # another process may have built it meanwhile
            shutil.rmtree(out, ignore_errors=True)
            (Path(tmp) / "built").replace(out)
    return out


def with_pools(benchmark: str, folder: Path, candidate_fps: float = 1.0, thumb: int = 128,
               cache: Path | None = None) -> tuple[list[Question], list[Pool]]:
    """The questions of a built folder that have evidence spans, and their candidate pools (descriptor features,
    ``thumb``-pixel thumbnails; encodings cached under ``cache``, default ``<cache>/frameselect``)."""
    cache = settings.cache_dir() / "frameselect" if cache is None else cache
    questions = [q for q in benchmarks.load(benchmark, folder) if q.evidence]
    pools = [build_pool(q.video_paths, query=q.query, encoder="descriptor", candidate_fps=candidate_fps, thumb=thumb,
                        cache=cache) for q in questions]
    return questions, pools
