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


REAL = [  # jurisdiction_id, folder under shared/data/locus, name, kind, state, counties
    ("adairsville", "georgia/adairsville", "City of Adairsville", "city", "GA", "Bartow County"),
    ("baldwin-county", "georgia/baldwin-county", "Baldwin County", "county", "GA", "Baldwin County"),
    ("edison", "georgia/edison", "City of Edison", "city", "GA", "Calhoun County"),
    ("fairmount", "georgia/fairmount", "City of Fairmount", "city", "GA", "Gordon County"),
    ("arcade", "georgia/arcade", "City of Arcade", "city", "GA", "Jackson County"),
    ("athens-clarke", "georgia/athens-clarke", "Athens-Clarke County", "consolidated", "GA", "Clarke County"),
    ("spanish-fork", "spanish-fork-ut", "Spanish Fork City", "city", "UT", "Utah County"),
    ("dc", "dc-code", "District of Columbia", "district", "DC", "District of Columbia"),
]


@pytest.fixture(scope="session")
def real_locus(locus_raw: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A raw folder in the LOCUS input contract whose jurisdiction folders link to the shared real files."""
    root = tmp_path_factory.mktemp("real_raw")
    lines = ["jurisdiction_id,name,kind,state,counties,source"]
    for jid, folder, name, kind, state, counties in REAL:
        (root / jid).symlink_to(locus_raw / folder, target_is_directory=True)
        lines.append(f"{jid},{name},{kind},{state},{counties},shared/data/locus/{folder}")
    (root / "jurisdictions.csv").write_text("\n".join(lines) + "\n")
    return root
