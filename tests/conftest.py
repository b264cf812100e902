"""Shared fixtures: where the real shared data lives, skipping cleanly without it."""

from __future__ import annotations

from pathlib import Path

import pytest

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
