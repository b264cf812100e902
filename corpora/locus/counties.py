"""The county layers: the access layer, one representative code per county, and coverage.

``counties`` (the access layer, :func:`county_rows`) lists for each county every code that applies in it: the
county's own code and every place code inside it.

Beside the access layer (``counties``: every code that applies in a county),
``county_representatives`` keeps one code per county, chosen among the codes
in the county that have sections:

1. the county's own code (a county, a consolidated city-county, or a district
   lying in that one county) when there is one -> rule ``own code``;
2. else, when a population table is supplied (``--population CSV``) and lists
   at least one candidate, the most populous listed place -> ``largest place by
   population`` (places missing from the table are not candidates then);
3. else the place with the most sections -> ``largest place by section count``.

Ties go to more sections, then to the first id in natural order. ``coverage``
counts, per state, the counties with a representative code against all the
state's counties in the Census 2020 county table that ``addfips`` ships.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import addfips

from .records import BY_POPULATION, BY_SECTIONS, OWN, BuildError, Jurisdiction, natural_key, read_csv

POPULATION_KEYS = ("jurisdiction_id", "geoid", "place_geoid", "county_geoid")


def read_population(path: Path) -> dict[str, int]:
    """Jurisdiction id (or GEOID) -> population, from a CSV with a key column and ``population``.

    The key is the first non-empty of ``jurisdiction_id``, ``geoid``, ``place_geoid``,
    ``county_geoid``; it matches a jurisdiction's id (a GEOID for LOCUS-v1 ingests).
    """
    path = Path(path)
    reader = read_csv(path, "population table not found")
    columns = reader.fieldnames or []
    keys = [k for k in POPULATION_KEYS if k in columns]
    if not keys or "population" not in columns:
        raise BuildError(f"{path}: needs a 'population' column and one of {', '.join(POPULATION_KEYS)} "
                         f"(has: {', '.join(columns) or 'no header'})")
    out: dict[str, int] = {}
    for line, row in enumerate(reader, start=2):
        key = next((row[k].strip() for k in keys if (row.get(k) or "").strip()), "")
        value = (row.get("population") or "").strip()
        if not key:
            raise BuildError(f"{path}: line {line}: no {' or '.join(keys)}")
        if not value.isdecimal():
            raise BuildError(f"{path}: line {line}: population {value!r} for {key!r} is not a whole number")
        if key in out:
            raise BuildError(f"{path}: line {line}: {key!r} listed twice")
        out[key] = int(value)
    return out


def representative_rows(counties: list[dict], jurisdiction_rows: list[dict],
                        population: dict[str, int] | None = None) -> list[dict]:
    """One representative code per county of the access layer (see the module docstring)."""
    n_sections = {j["jurisdiction_id"]: j["n_sections"] for j in jurisdiction_rows}
    population = population or {}
    out = []
    for c in counties:
        candidates = [jid for jid in c["jurisdiction_ids"] if n_sections.get(jid)]
        if not candidates:
            continue
        listed = [jid for jid in candidates if jid in population]
        if c["county_code_id"] in candidates:
            chosen, rule = c["county_code_id"], OWN
        elif listed:
            chosen, rule = _largest(listed, lambda jid: population[jid], n_sections), BY_POPULATION
        else:
            chosen, rule = _largest(candidates, lambda jid: 0, n_sections), BY_SECTIONS
        out.append({"county_fips": c["county_fips"], "county_name": c["county_name"], "state": c["state"],
                    "jurisdiction_id": chosen, "rule": rule, "population": population.get(chosen),
                    "n_candidates": len(candidates)})
    return out


def _largest(ids: list[str], size: Callable[[str], int], n_sections: dict[str, int]) -> str:
    return min(ids, key=lambda jid: (-size(jid), -n_sections[jid], natural_key(jid)))


def county_totals() -> dict[str, int]:
    """Two-digit state FIPS -> number of counties, from addfips' Census 2020 table."""
    with resources.files(addfips).joinpath("data", "counties_2020.csv").open(encoding="utf-8") as fh:
        codes = {(r["statefp"], r["countyfp"]) for r in csv.DictReader(fh)}
    return dict(Counter(state for state, _ in codes))


def coverage_rows(representatives: list[dict], states: list[str]) -> list[dict]:
    """Per state of the build: counties with a representative code, out of all its counties."""
    fips = addfips.AddFIPS()
    totals = county_totals()
    covered = Counter(r["state"] for r in representatives)
    rows = []
    for state in sorted(set(states)):
        state_fips = fips.get_state_fips(state) or ""
        total = totals.get(state_fips, 0)
        rows.append({"state": state, "state_fips": state_fips, "counties_covered": covered[state],
                     "counties_total": total, "share": covered[state] / total if total else None})
    return rows


def county_rows(jurisdictions: list[Jurisdiction], jurisdiction_rows: list[dict]) -> list[dict]:
    """The access layer: for each county, its own code and every place code inside it."""
    n_sections = {j["jurisdiction_id"]: j["n_sections"] for j in jurisdiction_rows}
    counties: dict[str, dict] = {}
    for j in jurisdictions:
        own_code = j.kind in ("county", "consolidated") or (j.kind == "district" and len(j.county_fips) == 1)
        for name, fips in j.resolved_counties:
            c = counties.setdefault(fips, {"county_fips": fips, "county_name": name, "state": j.state,
                                           "county_code_id": None, "jurisdiction_ids": [],
                                           "n_jurisdictions": 0, "n_sections": 0})
            if own_code and c["county_code_id"] is None:
                c["county_code_id"] = j.jurisdiction_id
            c["jurisdiction_ids"].append(j.jurisdiction_id)
            c["n_jurisdictions"] += 1
            c["n_sections"] += n_sections[j.jurisdiction_id]
    for c in counties.values():
        own = c["county_code_id"]
        c["jurisdiction_ids"].sort(key=lambda jid: (jid != own, natural_key(jid)))
    return [counties[k] for k in sorted(counties)]
