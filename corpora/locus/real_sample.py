"""The real public LOCUS sample (``shared/data/locus``) in the builder's input contract.

The shared sample is laid out as its upstream repositories publish it, not as
``--raw`` expects; :func:`link_raw` writes a ``jurisdictions.csv`` for it and
links each jurisdiction folder (no bytes copied). The tests and
``bench/locus_build.py`` build from it; ``copies`` repeats every jurisdiction to
scale the corpus up.
"""

from __future__ import annotations

import csv
from pathlib import Path

# jurisdiction_id, folder under shared/data/locus, name, kind, state, counties
JURISDICTIONS = [
    ("adairsville", "georgia/adairsville", "City of Adairsville", "city", "GA", "Bartow County"),
    ("baldwin-county", "georgia/baldwin-county", "Baldwin County", "county", "GA", "Baldwin County"),
    ("edison", "georgia/edison", "City of Edison", "city", "GA", "Calhoun County"),
    ("fairmount", "georgia/fairmount", "City of Fairmount", "city", "GA", "Gordon County"),
    ("arcade", "georgia/arcade", "City of Arcade", "city", "GA", "Jackson County"),
    ("athens-clarke", "georgia/athens-clarke", "Athens-Clarke County", "consolidated", "GA", "Clarke County"),
    ("spanish-fork", "spanish-fork-ut", "Spanish Fork City", "city", "UT", "Utah County"),
    ("dc", "dc-code", "District of Columbia", "district", "DC", "District of Columbia"),
]


def link_raw(shared_locus: Path, root: Path, copies: int = 1) -> Path:
    """Make ``root`` a raw folder whose jurisdiction folders link to the shared sample; return ``root``.

    With ``copies > 1`` every jurisdiction appears that many times, as ``<id>-0001``, ``<id>-0002``...
    """
    root.mkdir(parents=True, exist_ok=True)
    width = max(4, len(str(copies)))
    with (root / "jurisdictions.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["jurisdiction_id", "name", "kind", "state", "counties", "source"])
        for jid, folder, name, kind, state, counties in JURISDICTIONS:
            for i in range(1, copies + 1):
                copy_id = jid if copies == 1 else f"{jid}-{i:0{width}d}"
                (root / copy_id).symlink_to(shared_locus / folder, target_is_directory=True)
                writer.writerow([copy_id, name, kind, state, counties, f"shared/data/locus/{folder}"])
    return root
