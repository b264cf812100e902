"""The representative county layer and coverage, on hand-made raw builds."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus import counties

from tests.test_cli import run


def code(n: int) -> str:
    """A Municode export with ``n`` sections."""
    lines = [f"Sec. 1-{i}. - Rule {i}. Nobody shall do thing number {i} within the limits." for i in range(1, n + 1)]
    return "THE CODE\nChapter 1 - GENERAL PROVISIONS\n" + "\n".join(lines) + "\n"


# jurisdiction_id, kind, counties, sections
JURISDICTIONS = [
    ("bartow", "county", "Bartow County", 2),  # Bartow: its own code wins over a bigger city
    ("adairsville", "city", "Bartow County", 5),
    ("calhoun", "city", "Gordon County", 4),  # Gordon: no own code
    ("fairmount", "city", "Gordon County", 2),
    ("resaca", "city", "Gordon County", 1),
    ("edison", "city", "Calhoun County", 3),  # Calhoun: one place
    ("spanish-fork", "city", "Utah County", 2),
    ("empty", "city", "Cobb County", 0),  # no sections: not a candidate, county not covered
]


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("raw")
    rows = ["jurisdiction_id,name,kind,state,counties,source"]
    for jid, kind, county, n in JURISDICTIONS:
        state = "UT" if county == "Utah County" else "GA"
        rows.append(f"{jid},{jid.title()},{kind},{state},{county},test")
        (root / jid).mkdir()
        (root / jid / "code.txt").write_text(code(n) if n else "")
    (root / "jurisdictions.csv").write_text("\n".join(rows) + "\n")
    return root


def representatives(folder: Path) -> dict[str, dict]:
    table = pq.read_table(sorted((folder / "data" / "county_representatives").glob("*.parquet")))
    return {r["county_fips"]: r for r in table.to_pylist()}


def test_rule_without_population_table(raw: Path, tmp_path: Path) -> None:
    out = tmp_path / "locus"
    locus.build(raw=raw, out=out)
    reps = representatives(out)
    assert set(reps) == {"13015", "13129", "13037", "49049"}  # Cobb's only code is empty
    assert (reps["13015"]["jurisdiction_id"], reps["13015"]["rule"]) == ("bartow", counties.OWN)
    assert (reps["13129"]["jurisdiction_id"], reps["13129"]["rule"]) == ("calhoun", counties.BY_SECTIONS)
    assert reps["13129"]["n_candidates"] == 3 and reps["13129"]["population"] is None
    assert (reps["13037"]["jurisdiction_id"], reps["13037"]["n_candidates"]) == ("edison", 1)
    coverage = {c["state"]: c for c in pq.read_table(out / "data/coverage/train-00000-of-00001.parquet").to_pylist()}
    assert (coverage["GA"]["counties_covered"], coverage["GA"]["counties_total"]) == (3, 159)
    assert (coverage["UT"]["counties_covered"], coverage["UT"]["counties_total"]) == (1, 29)
    assert coverage["GA"]["share"] == pytest.approx(3 / 159)
    card = (out / "README.md").read_text()
    assert "| GA | 3 | 159 | 1.9% |" in card and "largest place by section count" in card
    # locus_v1 lists, per code, the counties it represents
    v1 = pq.read_table(out / "data/locus_v1/train-00000-of-00001.parquet").to_pylist()
    represented = {r["document_id"]: r["represented_county_fips"] for r in v1}
    assert represented["bartow"] == ["13015"] and represented["adairsville"] == []


def test_population_table_picks_the_most_populous_place(raw: Path, tmp_path: Path) -> None:
    table = tmp_path / "population.csv"
    # fairmount is smaller by sections but larger by people; bartow's own code still wins in Bartow
    table.write_text("jurisdiction_id,population\nfairmount,9000\ncalhoun,8000\nadairsville,50000\nbartow,1\n")
    out = tmp_path / "locus"
    result = run("build", "locus", "--raw", str(raw), "--out", str(out), "--population", str(table), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    reps = representatives(out)
    assert (reps["13129"]["jurisdiction_id"], reps["13129"]["rule"]) == ("fairmount", counties.BY_POPULATION)
    assert reps["13129"]["population"] == 9000
    assert (reps["13015"]["jurisdiction_id"], reps["13015"]["population"]) == ("bartow", 1)
    # a county none of whose places is listed falls back to section count
    assert reps["13037"]["rule"] == counties.BY_SECTIONS


def test_hand_made_ties_and_unlisted_places() -> None:
    access = [{"county_fips": "13129", "county_name": "Gordon County", "state": "GA", "county_code_id": None,
               "jurisdiction_ids": ["b10", "b9", "c"]}]
    rows = [{"jurisdiction_id": "b10", "n_sections": 4}, {"jurisdiction_id": "b9", "n_sections": 4},
            {"jurisdiction_id": "c", "n_sections": 9}]
    # equal section counts (ignoring c's): natural order decides, b9 before b10
    [rep] = counties.representative_rows(access, rows, {"b10": 100, "b9": 100})
    assert rep["jurisdiction_id"] == "b9" and rep["rule"] == counties.BY_POPULATION
    [rep] = counties.representative_rows(access, rows)
    assert rep["jurisdiction_id"] == "c" and rep["rule"] == counties.BY_SECTIONS


@pytest.mark.parametrize("text, message", [
    ("name,population\nx,1\n", "needs a 'population' column and one of jurisdiction_id"),
    ("geoid,population\n1304000,12k\n", "line 2: population '12k' for '1304000' is not a whole number"),
    ("geoid,population\n1304000,5\n1304000,6\n", "line 3: '1304000' listed twice"),
    ("jurisdiction_id,population\n,5\n", "line 2: no jurisdiction_id"),
])
def test_bad_population_table_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "pop.csv"
    path.write_text(text)
    with pytest.raises(locus.BuildError, match=message) as info:
        locus.build(out=tmp_path / "out", population=path)
    assert str(path) in str(info.value)
    assert not (tmp_path / "out").exists()  # checked before anything is written


def test_missing_population_table_in_one_line(tmp_path: Path) -> None:
    result = run("build", "locus", "--population", str(tmp_path / "nope.csv"), "--out", "x", cwd=tmp_path)
    assert result.returncode == 2
    assert "nope.csv: population table not found" in result.stderr and "Traceback" not in result.stderr
