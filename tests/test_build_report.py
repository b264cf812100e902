"""Every builder's report keeps one contract (neurips26.buildreport.BuildReport): problems is a list of str, every
tally reconciles (inputs = built + rejected ...), and the summary line names every tally."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from neurips26.corpora import RESOURCES
from typer.testing import CliRunner

from neurips26.buildreport import BuildReport, Reconciled, Tally
from neurips26.cli import app

SHARED = {"pusht", "fic", "geometry"}  # built from ../shared/data: skipped where it is absent


def case(name: str, tmp: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The cheapest build of ``name`` (a second or two): the embedded sample, or the smallest options."""
    if name in ("tar", "clovr", "frameselect"):
        data = request.getfixturevalue("small_video_releases")  # raw tar/clovr releases and their built folders
        if name == "frameselect":
            return {"raw": data, "selectors": ["uniform"], "budgets": [2], "limit": 2, "cache": tmp / "cache"}
        return {"raw": data.parent / f"{name}-raw"}
    if name in ("locus", "rolebench_unlearn"):
        return {}  # the embedded sample
    shared: Path = request.getfixturevalue("shared_data")
    return {"pusht": {"raw": shared / "pusht", "episodes": 2},
            "fic": {"raw": shared / "lost-in-conversation"},
            "geometry": {"raw": shared, "shapes": 1, "subjects": 1, "mesh_limit": 1}}[name]


def check_contract(report: object) -> None:
    assert isinstance(report, BuildReport), f"{type(report).__name__} lacks part of the BuildReport contract"
    assert isinstance(report.problems, list) and all(isinstance(p, str) and p for p in report.problems)
    tallies = report.tallies()
    assert tallies and all(isinstance(t, Tally) for t in tallies)
    assert report.reconciles() is True, [str(t) for t in tallies if not t.reconciles()]
    summary = report.summary()
    assert isinstance(summary, str) and summary.strip()
    for tally in tallies:
        assert str(tally) in summary, f"the summary does not name {tally}"
    assert "(reconciles)" in summary


@pytest.mark.parametrize("name", RESOURCES.names())
def test_every_builder_keeps_the_report_contract(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    options = case(name, tmp_path, request)
    report = RESOURCES.get(name)(out=tmp_path / "data" / name, **options)
    check_contract(report)
    built = tmp_path / "data" / name / "build_report.json"
    if built.is_file():  # the written report agrees with the returned one
        assert json.loads(built.read_text(encoding="utf-8"))["reconciles"] is True


def test_a_tally_that_does_not_add_up_is_reported() -> None:
    tally = Tally.of("files in", 5, parsed=3, rejected=1)
    assert not tally.reconciles() and str(tally) == "files in 5 = parsed 3 + rejected 1"
    assert Tally.of("items in", 1_234, built=1_230, rejected=4).reconciles()

    class Partial(Reconciled):
        def tallies(self) -> list[Tally]:
            return [Tally.of("items in", 2, built=2), tally]

    assert not Partial().reconciles() and Partial().reconciled() == "DOES NOT RECONCILE"
    assert Partial().tally_text().endswith("files in 5 = parsed 3 + rejected 1 (DOES NOT RECONCILE)")
    assert not isinstance(Partial(), BuildReport)  # no problems, no summary: not a build report


def test_the_cli_prints_the_summary_and_every_problem(tmp_path: Path) -> None:
    out = tmp_path / "rolebench_unlearn"
    result = CliRunner().invoke(app, ["build", "rolebench_unlearn", "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = json.loads((out / "build_report.json").read_text(encoding="utf-8"))
    rejected = written["records_rejected"]
    assert rejected, "the embedded sample holds rejected records"  # what this test shows being reported
    text = " ".join(result.output.split())  # rich wraps long lines
    assert f"records in {written['records_in']:,} = kept {written['records_kept']:,}" in text
    assert f"problem {rejected} record(s) rejected" in text and "see the errors config" in text
