"""The neurips26 command line as a user runs it: help, one-line errors, output formats, push --dry-run, the wheel."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from neurips26.corpora import RESOURCES

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "neurips26.cli"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


@pytest.mark.parametrize("command", [[], ["build"], ["build", "rolebench_unlearn"], ["query"], ["search"], ["push"]])
def test_help_everywhere(command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage" in result.stdout


def test_build_help_lists_resources_and_only_their_own_options() -> None:
    listing = run("build", "--help").stdout
    assert all(name in listing for name in ("locus", "rolebench_unlearn"))
    locus, rolebench = run("build", "locus", "--help").stdout, run("build", "rolebench_unlearn", "--help").stdout
    for common in ("--raw", "--out", "--workers"):
        assert common in locus and common in rolebench
    assert "--population" in locus and "--population" not in rolebench


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    result = run("build", "locus", "--workers", "2", cwd=root)  # default --out is ./locus
    assert result.returncode == 0, result.stderr
    assert "reconciles" in result.stdout
    assert re.search(r"^building locus: (\d+)/\1 \(\d+ s\)$", result.stderr, re.M)  # progress lines, no terminal
    assert (root / "locus" / "manifest.json").is_file()
    return root


def test_query_and_search_commands(built: Path) -> None:
    result = run("query", "SELECT count(*) AS n FROM locus.sections", cwd=built)
    assert result.returncode == 0, result.stderr
    assert any(ch.isdigit() for ch in result.stdout)
    result = run("search", "locus", "animal", "--limit", "3", cwd=built)
    assert result.returncode == 0, result.stderr
    assert "hits" in result.stdout


def test_query_and_search_formats_for_programs(built: Path) -> None:
    sql = "SELECT section_id, number FROM locus.sections ORDER BY section_id LIMIT 3"
    rows = json.loads(run("query", sql, "--format", "json", cwd=built).stdout)
    assert len(rows) == 3 and set(rows[0]) == {"section_id", "number"}
    table = list(csv.DictReader(io.StringIO(run("query", sql, "--format", "csv", cwd=built).stdout)))
    assert [r["section_id"] for r in table] == [r["section_id"] for r in rows]
    hits = json.loads(run("search", "locus", "animal", "--limit", "3", "--format", "json", cwd=built).stdout)
    assert 0 < len(hits) <= 3 and {"section_id", "heading", "score"} <= set(hits[0])


def test_push_dry_run_lists_the_folder(built: Path) -> None:
    result = run("push", "locus", "--repo", "someorg/locus", "--dry-run", cwd=built)
    assert result.returncode == 0, result.stderr
    for name in ("README.md", "croissant.json", "manifest.json", "data/sections/train-00000-of-00001.parquet"):
        assert name in result.stdout
    assert "nothing uploaded" in result.stdout


@pytest.mark.parametrize("args, message", [
    (["build", "nosuch"], "unknown resource 'nosuch'"),
    (["build", "locus", "--raw", "/nonexistent/raw"], "raw folder not found"),
    (["build", "locus", "--workers", "0"], "Invalid value for '--workers'"),
    (["build", "rolebench_unlearn", "--population", "x.csv"], "--population applies to locus, not rolebench_unlearn"),
    (["search", "nosuch", "x"], "unknown resource 'nosuch'; resources: " + ", ".join(RESOURCES.names())),
    (["search", "tar", "x"], "no built tar folder under"),
    (["search", "locus", "x", "--state", "XX"], "--state 'XX': not a USPS state code"),
    (["search", "locus", "x", "--state", "TX"], "states present: GA, UT, WI"),
    (["search", "locus", "x", "--county", "1305"], "not a five-digit county FIPS code"),
    (["query", "SELECT 1", "--format", "xml"], "Invalid value for '--format'"),
    (["eval", "--tasks", "nosuch"], "unknown task(s) nosuch"),
    (["eval", "--tasks", "locus_domain", "--model-args", "pretrained=/nonexistent/model"],
     "model '/nonexistent/model': no such folder"),
    (["unlearn", "--method", "nope"], "unknown unlearning method 'nope'"),
    (["query", "DROP TABLE locus.sections"], "only SELECT"),
    (["search", "locus", "x", "--county", "13059"], "--county 13059: no code in locus applies in that county; "
                                                    "counties with codes: 13237"),
    (["push", "locus", "--repo", "no-slash", "--dry-run"], "ORG/NAME"),
    (["eval", "--model", "nosuch"], "unknown model type 'nosuch' (--model); known: "),
    (["eval", "--tasks", "locus_domain", "--model-args", "pretrained=someorg/somemodel"],
     "model 'someorg/somemodel' is not in the local Hugging Face cache"),
    (["eval", "--limit", "-1"], "--limit -1.0: a count of examples"),
    (["eval", "--revision", "abc"], "--revision goes with --submit"),
    (["eval", "--output", "locus/manifest.json"], "is a file, not a folder"),
    (["unlearn", "--split", "nosuch"], "Invalid value for '--split'"),
    (["gfm", "train", "--images", "-1"], "Invalid value for '--images'"),
    (["build", "locus", "--out", "locus/manifest.json/sub"], "manifest.json is a file, not a folder"),
    (["sample-path", "tar"], "tar has no embedded sample; resources with one: locus, rolebench_unlearn"),
])
def test_bad_arguments_give_one_line_without_traceback(built: Path, args: list[str], message: str) -> None:
    result = run(*args, cwd=built)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_eval_vllm_without_vllm_is_one_line(built: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here")
    result = run("eval", "--model", "vllm", "--model-args", "pretrained=someorg/somemodel", cwd=built)
    assert result.returncode == 2 and "--model vllm needs the Python package vllm" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_sample_path_is_what_build_reads_without_raw() -> None:
    from neurips26.corpora.locus.build import SAMPLE_DIR

    result = run("sample-path", "locus")
    assert result.returncode == 0 and Path(result.stdout.strip()) == SAMPLE_DIR
    assert str(SAMPLE_DIR) in run("build", "locus", "--help").stdout  # --raw's help names it


def test_wheel_ships_every_subpackage_and_data(tmp_path: Path) -> None:
    import setuptools

    if int(setuptools.__version__.split(".")[0]) < 77:  # built without isolation: the installed backend is used
        pytest.skip(f"setuptools {setuptools.__version__} cannot build this project (pyproject needs >= 77)")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=600)
    wheel = next(tmp_path.glob("neurips26-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in ("neurips26/cli/__init__.py", "neurips26/cli/__main__.py", "neurips26/hubfolder/__init__.py",
                     "neurips26/corpora/locus/build.py", "neurips26/cards/locus.md",
                     "neurips26/corpora/locus/sample/jurisdictions.csv", "neurips26/tasks/locus/locus_domain.yaml",
                     "neurips26/tasks/locus/utils.py", "neurips26/tasks/_neurips26.yaml", "neurips26/tasks/__init__.py",
                     "neurips26/methods/__init__.py", "neurips26/leaderboard/__init__.py"):
        assert required in names, required
    mapped = {"neurips26": "neurips26", "corpora": "neurips26/corpora", "tasks": "neurips26/tasks",
              "methods": "neurips26/methods", "leaderboard": "neurips26/leaderboard", "space": "neurips26/space",
              "cards": "neurips26/cards"}
    missing = [str(source) for folder, target in mapped.items() for source in (ROOT / folder).rglob("*.py")
               if f"{target}/{source.relative_to(ROOT / folder).as_posix()}" not in names]
    assert not missing, f"modules left out of the wheel (add their package to pyproject.toml): {missing}"
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    code = "import neurips26.cli, neurips26.corpora.locus.build as b, neurips26.cards; print(b.SAMPLE_DIR)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(unpacked)}, check=True).stdout
    assert str(unpacked) in out


def test_eval_metadata_must_be_a_json_object() -> None:
    for bad, message in [("{num_frames: 4}", "--metadata: not JSON"), ("[4]", "expected a JSON object")]:
        result = run("eval", "--tasks", "locus_domain", "--metadata", bad)
        assert result.returncode == 2 and message in result.stderr + result.stdout, result.stderr


def test_device_cuda_without_cuda_is_one_line() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = run("eval", "--tasks", "locus_domain", "--device", "cuda")
    assert result.returncode == 2 and "CUDA is not available" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_eval_builds_nothing_and_names_the_command(tmp_path: Path) -> None:
    empty = tmp_path / "data"
    empty.mkdir()
    result = run("eval", "--tasks", "rolebench_unlearn_general", "--limit", "1", "--data", str(empty),
                 "--output", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "no built rolebench_unlearn folder under" in result.stderr
    assert "run `neurips26 build rolebench_unlearn`" in result.stderr and "Traceback" not in result.stderr
    assert list(empty.iterdir()) == []  # nothing was built


def test_every_sub_app_is_guarded() -> None:
    """A UserError raised by any command, including those of sub-apps, is one line and exit code 2."""
    import typer
    from typer.testing import CliRunner

    from neurips26.cli import app
    from neurips26.errors import UnknownNameError

    probe = typer.Typer()

    @probe.command("fail")
    def fail() -> None:
        """Raise the error a registry lookup raises."""
        raise UnknownNameError("unknown benchmark 'nosuch'; known: clovr, tar")

    @probe.command("other")
    def other() -> None:
        """A second command, so the probe is a group."""

    app.add_typer(probe, name="probe")
    try:
        result = CliRunner().invoke(app, ["probe", "fail"])
    finally:
        app.registered_groups.pop()
    assert result.exit_code == 2 and result.output.strip() == "error: unknown benchmark 'nosuch'; known: clovr, tar"
