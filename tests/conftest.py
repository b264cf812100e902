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
