"""Shared fixtures: where the real shared data lives, skipping cleanly without it."""

from __future__ import annotations

from pathlib import Path

import pytest
from neurips26.corpora.locus.real_sample import JURISDICTIONS, link_raw

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (the real public sample); skips the test when absent."""
    if not (SHARED_DATA / "SOURCES.md").is_file():
        pytest.skip(f"real shared data not found at {SHARED_DATA} (CI has it)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def locus_raw(shared_data: Path) -> Path:
    return shared_data / "locus"


REAL = JURISDICTIONS


@pytest.fixture(scope="session")
def real_locus(locus_raw: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A raw folder in the LOCUS input contract whose jurisdiction folders link to the shared real files."""
    return link_raw(locus_raw, tmp_path_factory.mktemp("real_raw"))


@pytest.fixture(scope="session")
def small_video_releases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Small built TAR (2 clips of 8 s) and CLoVR (one set of 2 clips of 20 s) folders, under one data root."""
    pytest.importorskip("av")
    from neurips26.corpora.clovr import build as clovr_build
    from neurips26.corpora.clovr import generate as clovr_generate
    from neurips26.corpora.tar import build as tar_build
    from neurips26.corpora.tar import generate as tar_generate

    root = tmp_path_factory.mktemp("small-video-releases")
    tar_generate.generate(root / "tar-raw", seed=0, n_videos=2, test_videos=1, duration=8.0)
    clovr_generate.generate(root / "clovr-raw", seed=0, n_sets=1, videos_per_set=2, duration=20.0)
    tar_build.build(raw=root / "tar-raw", out=root / "data" / "tar")
    clovr_build.build(raw=root / "clovr-raw", out=root / "data" / "clovr")
    return root / "data"


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models gain nothing from intra-op threads; on a shared machine they only wait for each other."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
