"""The Text LM track's overall board ranks a complete run of the embedded model on folders built from real releases.

LOCUS is built from four real Georgia codes of ``../shared/data/locus`` (the builder writes evaluation sets only
from four jurisdictions on: two test, one validation, one train; splits go by the sha256 of the jurisdiction id,
and the ids ``<place>-georgia`` put the two smallest codes, Arcade's chapters 20-29 and Athens-Clarke's Title 2,
in test). Those two keep every sixth section over all their chapters (whole lines of the release, so every
label the build needs is there: 83 test documents over the four LOCUS tasks instead of 341). RoleBench-Unlearn is
built from real RoleBench records (the first ten records of the first three roles of the role-generalization
file, lines unchanged): forget05 then holds one target role, two forget and four retain test questions, beside
the 24 general ones.

The embedded model runs every task of the ``neurips26`` group on its whole test split, as each protocol says
(no ``--limit``, zero-shot, chat template on), and the run is submitted with ``neurips26 submit``: the track's
overall board (``group=neurips26``) ranks it. A run of the same model missing one task of the overall (its
answers read from the first run's lm-eval cache, ``use_cache``) is stored but on no overall board.

Measured on this project's 2-core machine, quiet: 2 min 03 s wall, 3.5 CPU-minutes, peak RSS 5.6 GiB
(``pytest tests/test_text_track_board.py --durations=5``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

CODES = [("arcade", "City of Arcade", "city", "Jackson County"),
         ("athens-clarke", "Athens-Clarke County", "consolidated", "Clarke County"),
         ("fairmount", "City of Fairmount", "city", "Gordon County"),
         ("edison", "City of Edison", "city", "Calhoun County")]
ROLEBENCH_FILE = Path("rolebench-eng/role-generalization/role_specific/test.jsonl")
ROLES, RECORDS_PER_ROLE = 3, 10
MISSING = "locus_catchline"
TEST_CODES, TEST_EVERY = ("arcade", "athens-clarke"), 6


def code_excerpt(source: Path, every: int) -> str:
    """One real code file with every ``every``-th section kept (these files hold a section per ``Sec.`` line) and
    every other line (titles, chapters, articles, reserved ranges) kept: whole lines of the release, unchanged."""
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    sections = [i for i, line in enumerate(lines) if line.startswith("Sec. ")]
    dropped = {i for k, i in enumerate(sections) if k % every}
    return "".join(line for i, line in enumerate(lines) if i not in dropped)


def locus_raw(shared: Path, root: Path) -> Path:
    """A raw folder of four real Georgia codes with its jurisdictions.csv.

    The two codes the split puts in test keep every ``TEST_EVERY``-th section, spread over all their chapters (whole
    lines, so the excerpt is the release's own text); the train and validation codes are linked whole, since no
    task evaluates them.
    """
    root.mkdir(parents=True)
    lines = ["jurisdiction_id,name,kind,state,counties,source"]
    for place, name, kind, county in CODES:
        source = shared / "locus" / "georgia" / place
        folder = root / f"{place}-georgia"
        if place in TEST_CODES:
            folder.mkdir()
            for file in sorted(source.iterdir()):
                (folder / file.name).write_text(code_excerpt(file, TEST_EVERY), encoding="utf-8")
        else:
            folder.symlink_to(source, target_is_directory=True)
        lines.append(f"{place}-georgia,{name},{kind},GA,{county},shared/data/locus/georgia/{place}")
    (root / "jurisdictions.csv").write_text("\n".join(lines) + "\n")
    return root


def rolebench_raw(shared: Path, root: Path) -> Path:
    """RoleBench's layout holding the first records of the first roles of one real file, lines unchanged."""
    kept: dict[str, int] = {}
    lines = []
    for line in (shared / "rolebench" / ROLEBENCH_FILE).read_text(encoding="utf-8").splitlines(keepends=True):
        role = json.loads(line)["role"]
        if role in kept or len(kept) < ROLES:
            kept[role] = kept.get(role, 0) + 1
            if kept[role] <= RECORDS_PER_ROLE:
                lines.append(line)
    (root / ROLEBENCH_FILE).parent.mkdir(parents=True)
    (root / ROLEBENCH_FILE).write_text("".join(lines), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def runs(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The real builds, the complete run and the run missing one task (results files), and the store folder."""
    from neurips26.corpora import RESOURCES
    from neurips26.tasks import evaluation

    root = tmp_path_factory.mktemp("text-track")
    data = root / "data"
    RESOURCES.get("locus")(raw=locus_raw(shared_data, root / "locus-raw"), out=data / "locus")
    RESOURCES.get("rolebench_unlearn")(raw=rolebench_raw(shared_data, root / "rolebench-raw"),
                                       out=data / "rolebench_unlearn")
    cache = root / "lm-cache"
    complete = evaluation.run(["neurips26"], batch_size=16, data=data, output=root / "complete", use_cache=cache)
    tasks = [t for t in evaluation.leaf_tasks(["neurips26"]) if t != MISSING]
    partial = evaluation.run(tasks, batch_size=16, data=data, output=root / "partial", use_cache=cache)
    assert complete.results_file is not None and partial.results_file is not None
    return {"data": data, "store": root / "store", "complete": complete.results_file, "partial": partial.results_file}


def submit(runs: dict[str, Path], which: str) -> str:
    """``neurips26 submit`` of one run's results and samples (the embedded model's id and revision); its output."""
    from neurips26 import models
    from neurips26.cli import app

    results = runs[which]
    result = CliRunner().invoke(app, [
        "submit", str(results), "--samples", str(results.parent), "--model", models.DEFAULT_MODEL_ID,
        "--revision", models.default_model_revision(), "--license", models.DEFAULT_MODEL_LICENSE,
        "--model-type", "instruction-tuned", "--submitter", "ci", "--store", str(runs["store"]),
        "--data", str(runs["data"])])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_text_track_overall_ranks_a_complete_run_of_the_embedded_model(runs: dict[str, Path]) -> None:
    from neurips26.leaderboard.ranking import leaderboard, overall_tasks, scope
    from neurips26.leaderboard.store import Store
    from neurips26.leaderboard.tracks import tracks

    manifests = [json.loads((runs["data"] / r / "manifest.json").read_text()) for r in ("locus", "rolebench_unlearn")]
    assert [m["demo"] for m in manifests] == [False, False]  # built from real releases
    out = submit(runs, "complete")
    assert "VALID submission #1" in out, out
    board = Store(runs["store"])
    text = next(t for t in tracks(board.tasks, board.groups) if t.name == "text")
    ranked = overall_tasks(board.tasks, scope(board.tasks, group=text.group, groups=board.groups), text.group)
    assert MISSING in ranked and len(ranked) >= 2
    rows = leaderboard(board, group=text.group).to_pylist()
    assert [(r["submission_id"], r["rank"], r["n_tasks"]) for r in rows] == [(1, 1, len(ranked))]
    assert rows[0]["model_id"] == "HuggingFaceTB/SmolLM2-135M-Instruct" and 0 <= rows[0]["score"] <= 1

    out = submit(runs, "partial")  # the same model, one task of the overall left out
    assert "submission #2" in out, out
    rows = leaderboard(board, group=text.group).to_pylist()
    assert [r["submission_id"] for r in rows] == [1]  # the incomplete run is not ranked
    assert 2 in {r["submission_id"] for r in leaderboard(board, task="locus_domain").to_pylist()}
