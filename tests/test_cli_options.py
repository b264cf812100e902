"""The command line's shared options (:mod:`neurips26.options`): ``--data`` is declared once and every command
resolves it by the one rule (``--data``, then ``$NEURIPS26_DATA``, then ``.``, then the cache); ``submit
--samples`` takes a folder or a glob; the one progress display off a terminal."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
import typer.main
from neurips26.corpora.locus.build import build as build_locus
from neurips26.leaderboard.cli import samples_files
from typer._click import Context
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.options import DataOpt, resource_folder
from neurips26.output import progress

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("locus_domain", "locus_catchline")


def leaf_commands(group, words=()):
    ctx = Context(group)
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        yield from leaf_commands(sub, (*words, name)) if hasattr(sub, "list_commands") else [((*words, name), sub)]


def source_files() -> list[Path]:
    """Every Python file of the installed packages (``package-dir`` in pyproject.toml)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    folders = {ROOT / folder for folder in config["tool"]["setuptools"]["package-dir"].values()}
    return sorted({path for folder in folders for path in folder.rglob("*.py")})


def test_data_is_declared_once_and_every_command_uses_it() -> None:
    declared = [path.relative_to(ROOT) for path in source_files()
                for _ in re.finditer(r"Option\(\s*\"--data\"", path.read_text(encoding="utf-8"))]
    assert declared == [Path("neurips26/options.py")]
    help_text = DataOpt.__metadata__[0].help
    takers = {" ".join(words): param for words, command in leaf_commands(typer.main.get_command(app))
              for param in command.params if "--data" in param.opts}
    assert {"query", "eval", "submit", "score locus", "probe text", "fic eval", "holmes run"} <= set(takers)
    assert {name for name, param in takers.items() if param.help != help_text} == set()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A data folder built from the embedded LOCUS sample, and a two-task lm-eval run on it (one samples file per
    task), made with the reference answerer ``constant`` (no weights)."""
    root = tmp_path_factory.mktemp("options")
    build_locus(out=root / "data" / "locus")
    (root / "empty").mkdir()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NEURIPS26_DATA", str(root / "data"))
        env.setenv("HF_HUB_OFFLINE", "1")
        env.chdir(root / "empty")
        result = CliRunner().invoke(app, ["eval", "--tasks", ",".join(TASKS), "--model", "constant", "--output",
                                          str(root / "results")])
    assert result.exit_code == 0, result.output
    return {"root": root, "data": root / "data", "empty": root / "empty",
            "results": next((root / "results").rglob("results_*.json"))}


def invoke(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch, data: Path | None):
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("COLUMNS", "200")
    if data is None:
        monkeypatch.delenv("NEURIPS26_DATA", raising=False)
    else:
        monkeypatch.setenv("NEURIPS26_DATA", str(data))
    return CliRunner().invoke(app, args)


def test_score_locus_resolves_data_by_the_rule(run: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Where ``score locus`` looks: a found folder gets as far as the backend check (``bert`` is no backend, so
    nothing is scored: scoring the sample embeds every section), a missing one is named."""
    found = "backend 'bert' is not one of default, modernbert"
    result = invoke(["score", "locus", "--backend", "bert"], run["empty"], monkeypatch, data=run["data"])
    assert result.exit_code == 2 and found in result.output  # $NEURIPS26_DATA (the default was "." once)
    result = invoke(["score", "locus", "--backend", "bert", "--data", str(run["empty"])], run["empty"], monkeypatch,
                    data=run["data"])
    assert result.exit_code == 2 and f"no built locus folder under {run['empty']}" in result.output  # --data first
    result = invoke(["score", "locus", "--backend", "bert"], run["root"], monkeypatch, data=run["empty"])
    assert result.exit_code == 2 and f"no built locus folder under {run['empty']}" in result.output
    result = invoke(["score", "locus", "--backend", "bert"], run["data"], monkeypatch, data=None)
    assert result.exit_code == 2 and found in result.output  # no --data or $NEURIPS26_DATA: "." holds built folders
    result = invoke(["score", "locus", "--backend", "bert", "--data", str(run["data"] / "locus")], run["empty"],
                    monkeypatch, data=None)
    assert result.exit_code == 2 and found in result.output  # the built folder itself


def tampered(run: dict[str, Path]) -> Path:
    """The run's results file with one more original document for a task than the built split holds."""
    data = json.loads(run["results"].read_text())
    data["n-samples"]["locus_domain"]["original"] += 1
    path = run["root"] / "tampered" / run["results"].name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_submit_resolves_data_by_the_rule(run: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    """The board checks a run's document counts against the built folder it read, found by the data rule; the
    samples come from the folder lm-eval wrote (one file per task)."""
    def submit(results: Path, store: str, *extra: str):
        return invoke(["submit", str(results), "--samples", str(run["results"].parent), "--model", "org/model",
                       "--revision", "abcdef0", "--precision", "float32", "--params", "1", "--store",
                       str(tmp_path / store), *extra], run["empty"], monkeypatch, data=run["data"])

    counted = r"locus_domain\.original: \d+, but the test split of the data the run says it read has \d+ documents"
    result = submit(tampered(run), "a")  # $NEURIPS26_DATA: the built folder the run read is there
    assert result.exit_code == 2 and re.search(counted, " ".join(result.output.split())), result.output
    result = submit(tampered(run), "b", "--data", str(run["empty"]))  # --data first: no built folder to count
    assert result.exit_code == 0 and not re.search(counted, " ".join(result.output.split())), result.output
    result = submit(run["results"], "c")
    assert result.exit_code == 0 and re.search(r"(VALID|UNRANKED) submission #1", result.output), result.output


def test_samples_folder_and_glob_give_the_run_files(run: dict[str, Path], tmp_path: Path) -> None:
    folder, results = run["results"].parent, run["results"]
    written = sorted(folder.glob("samples_*.jsonl"))
    assert len(written) == len(TASKS)
    older = folder / "samples_locus_domain_2000-01-01T00-00-00.000000.jsonl"  # an earlier run in the same folder
    older.write_text("")
    try:
        assert samples_files([folder], results) == written
        assert samples_files([folder / "samples_locus_*.jsonl"], results) == sorted([*written, older])
        assert samples_files([written[0], folder], results) == [written[0], written[1]]
    finally:
        older.unlink()
    with pytest.raises(ValueError, match="no samples_<task>_<date>.jsonl files"):
        samples_files([tmp_path], results)
    with pytest.raises(ValueError, match="no file matches"):
        samples_files([tmp_path / "samples_*.jsonl"], results)


def test_resource_folder_takes_the_root_or_the_built_folder(run: dict[str, Path]) -> None:
    assert resource_folder(run["data"], "locus") == run["data"] / "locus"
    assert resource_folder(run["data"] / "locus", "locus") == run["data"] / "locus"
    with pytest.raises(ValueError, match="no built fic folder under"):
        resource_folder(run["data"] / "locus", "fic")  # a built folder of another resource is a root


def test_progress_off_a_terminal_is_lines_or_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with progress(lines=True) as bars:
        track, step = bars.track("work"), bars.steps("steps", 4)
        for done in range(1, 101):
            track(done, 100)
        for _ in range(4):
            step()
    shown = [re.sub(r" \(\d+ s\)$", "", line) for line in capsys.readouterr().err.splitlines()]
    assert shown == ["work: 1/100", *[f"work: {n}/100" for n in range(10, 101, 10)],
                     *[f"steps: {n}/4" for n in range(1, 5)]]
    with progress() as bars:
        bars.track("quiet")(1, 1)
    assert capsys.readouterr().err == ""
