"""Components from another installed distribution: a toy package, installed beside ours without an edit to this
repository, adds a frame selector, a resource and a board metric through our entry-point groups."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

DIST = "neurips26-toy-plugin"

PYPROJECT = f"""
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{DIST}"
version = "0.1.0"

[project.entry-points."neurips26.selectors"]
toy_last = "toy_plugin.selectors:last_frames"

[project.entry-points."neurips26.resources"]
toy_plugin = "toy_plugin.build"

[project.entry-points."neurips26.metrics"]
toy_plugin = "toy_plugin.metrics"

[project.entry-points."neurips26.action_codecs"]
broken = "toy_plugin.not_there"

[tool.setuptools]
packages = ["toy_plugin"]
"""

MODULES = {
    "__init__.py": '"""A toy plugin of neurips26."""\n',
    "selectors.py": '''
        import numpy as np
        from neurips26.corpora.video.selection import Selection

        def last_frames(pool, budget, rng):
            """The last ``budget`` candidates."""
            return Selection.of(np.arange(pool.n - budget, pool.n))
        ''',
    "build.py": '''
        from pathlib import Path
        from neurips26.corpora import RESOURCES

        @RESOURCES.register("toy_corpus")
        def build(raw=None, out=Path("toy_corpus"), workers=1, progress=None):
            """Write the toy corpus: one line."""
            out.mkdir(parents=True, exist_ok=True)
            (out / "toy.txt").write_text("toy\\n")
            return out
        ''',
    "metrics.py": '''
        from neurips26.metric import METRICS, recorded

        @METRICS.register("toy_metric", range=(0.0, 1.0), higher_is_better=True, binary=False)
        def toy_metric(sample, config, metric="toy_metric"):
            """The value the toy task recorded."""
            return recorded(sample, config, metric)
        ''',
}

USE = """
import sys
from pathlib import Path
import numpy as np
from neurips26.corpora import RESOURCES
from neurips26.corpora.video.selection import SELECTORS, Pool, select
from neurips26.metric import METRICS
from neurips26.methods.actions.codecs import CODECS
from neurips26.registry import PluginError

picked = select("toy_last", Pool(times=np.arange(10.0), duration=10.0), 3)
print("selected", picked.indices.tolist())
RESOURCES.get("toy_corpus")(out=Path(sys.argv[1]))
print("metric", METRICS.info("toy_metric")["range"], "uniform" in SELECTORS)
for _ in range(2):  # the same refusal each time, not a registry that is silently short of a component
    try:
        CODECS.names()
    except PluginError as exc:
        print("refused", exc)
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy distribution, built from its source folder and installed into a folder of its own (no network)."""
    source = tmp_path_factory.mktemp("toy")
    (source / "pyproject.toml").write_text(PYPROJECT)
    (source / "toy_plugin").mkdir()
    for name, text in MODULES.items():
        (source / "toy_plugin" / name).write_text(textwrap.dedent(text).lstrip())
    target = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                          "--disable-pip-version-check", "-q", "--target", str(target), str(source)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return target


def python(target: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(target), "COLUMNS": "200", "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def test_plugins_lists_another_distributions_components(installed: Path, tmp_path: Path) -> None:
    result = python(installed, tmp_path, "-m", "neurips26.cli", "plugins", "--kind", "selector", "--kind",
                    "resource", "--kind", "metric", "--format", "json")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {(r["kind"], r["name"]): r for r in json.loads(result.stdout)}
    for key, module in ((("selector", "toy_last"), "toy_plugin.selectors"),
                        (("resource", "toy_corpus"), "toy_plugin.build"),
                        (("metric", "toy_metric"), "toy_plugin.metrics")):
        assert rows[key]["distribution"] == DIST and rows[key]["module"] == module, rows[key]
    ours = [r for r in rows.values() if r["distribution"] != DIST]
    assert ours and {r["distribution"] for r in ours} == {"neurips26"}
    assert {("selector", "uniform"), ("resource", "locus"), ("metric", "acc"), ("metric", "max_coverage")} <= set(rows)
    assert {r["kind"] for r in rows.values()} == {"selector", "resource", "metric"}


def test_another_distributions_components_work_and_a_broken_entry_is_named(installed: Path, tmp_path: Path) -> None:
    result = python(installed, tmp_path, "-c", USE, str(tmp_path / "built"))
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0] == "selected [7, 8, 9]"  # the toy selector's pick, not uniform's
    assert (tmp_path / "built" / "toy.txt").read_text() == "toy\n"
    assert lines[1] == "metric (0.0, 1.0) True"
    assert lines[2].startswith("refused action codec entry point broken = 'toy_plugin.not_there'")
    assert DIST in lines[2] and "ModuleNotFoundError" in lines[2] and lines[3] == lines[2] and len(lines) == 4


def test_without_the_toy_package_its_components_are_unknown(tmp_path: Path) -> None:
    result = python(tmp_path, tmp_path, "-m", "neurips26.cli", "plugins", "--kind", "selector", "--format", "json")
    assert result.returncode == 0, result.stderr[-3000:]
    names = {r["name"] for r in json.loads(result.stdout)}
    assert "uniform" in names and "toy_last" not in names
