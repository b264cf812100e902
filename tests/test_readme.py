"""The README and the docs pages run: every command in their ```bash blocks (the README's first, then those of
docs/*.md and docs/**/*.md in path order), in order, in one working folder, against the embedded samples (or the
generators' small releases), with its documented effect checked.

Commands are collected generically, so a new README section is covered without editing this file. What cannot
run here is in :data:`SKIP` (a GPU, the Hub, or a long run that a named test covers), matched by prefix and
kept short; placeholders a user replaces (``DIR``, ``pop.csv``) get values in :data:`STAND_INS`. A command
with no entry in :data:`EFFECTS` must exit 0 and print something.

Then every ```python block that starts a line (the snippets a user pastes; the indented templates of
docs/adding.md are skeletons to fill in) runs as a script in the same folder, after the commands built what it
reads; names a snippet leaves to the user (``pred_xyz``) are defined by :data:`PYTHON_STAND_INS`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SAMPLE = ROOT / "corpora" / "locus" / "sample"
BIN = Path(sys.executable).parent

# Commands that do not run here, by prefix, with the reason.
SKIP: dict[str, str] = {
    "scripts/demo": "sets up .venv and runs every part: CI runs scripts/test, the parts run below",
    "scripts/test": "is how CI runs this very test suite",
    ". .venv/bin/activate": "shell setup: commands here run from the test's own environment",
    "pip install": "installs packages (the GPU extra)",
    "neurips26 eval --model vllm": "needs a GPU (vLLM)",
    "lm_eval run": "a user's model (pretrained=..., a VLM on a GPU); tests/test_tasks.py runs lm_eval on our tasks",
    "neurips26 eval --model hf --model-args pretrained=ORG/NAME": "a model from the Hub",
    "neurips26 eval --tasks neurips26_video --model hf-multimodal": "a VLM from the Hub",
    "neurips26 frameselect replay frameselect --model hf:": "a VLM from the Hub",
    "neurips26 build locus --from-locus-v1": "the released LOCUS-v1 Parquet files (the Hub)",
    "neurips26 score locus --backend modernbert": "the released ModernBERT models (the Hub)",
    "neurips26 serve": "serves until stopped: tests/test_space_browser.py starts and checks it",
    "neurips26 eval --limit 8": "long (the embedded model on every task): tests/test_tasks.py runs it on one",
    "neurips26 submit": "needs a run's results files: tests/test_leaderboard.py submits real ones",
    "neurips26 frameselect run --benchmark tar,clovr": "long (4 budgets x every selector): test_frameselect_eval.py",
    "neurips26 frameselect run --benchmark clovr": "long: tests/test_frameselect_router.py runs the router",
    "neurips26 build frameselect": "long (every selector on every question): tests/test_frameselect_resource.py",
    "neurips26 frameselect replay": "needs `neurips26 build frameselect` (long): tests/test_frameselect_resource.py",
    "neurips26 rediff": "long (minutes of training): tests/test_rediff.py trains a tiny model",
    "python bench/": "benchmarks take minutes; they print the tables the docs pages describe",
    "neurips26 score locus": "long on 2 cores (MiniLM over every section): tests/test_locus_analysis.py",
    "neurips26 query \"SELECT topic, avg(opacity)": "reads the scores config `neurips26 score locus` writes (skipped)",
    "neurips26 score gold": "reads the LOCUS gold set in ../shared/data: tests/test_locus_analysis.py",
    "neurips26 generate clovr --out clovr-train-raw": "bgrpo's training release: tests/test_bgrpo.py builds one",
    "neurips26 frameselect train-bgrpo": "long (GRPO training): tests/test_bgrpo.py trains on a small release",
    "neurips26 holmes run --perception vlm": "a VLM from the Hub",
    "neurips26 holmes run": "long (every question at three budgets): tests/test_holmes.py runs the CLI",
    "neurips26 diagnose": "reads a run's results (RESULTS_DIR): tests/test_diagnostics_signatures.py runs the CLI",
    "neurips26 probe": "long (a model over many sections or images): tests/test_diagnostics_probing.py, _gfm.py",
    "neurips26 gfm train": "long (relay training): tests/test_diagnostics_gfm.py trains a step",
    "neurips26 geometry eval": "a user's own files (pred/truth): tests/test_geometry.py runs the CLI on generated ones",
    "neurips26 geometry bench": "long (every baseline): tests/test_geometry_bench.py runs a small bench",
    "neurips26 build geometry": "reads ../shared/data (ECG, meshes): tests/test_geometry_build.py builds it",
    "neurips26 build pusht": "the real demonstrations in ../shared/data (6 min): tests/test_pusht.py builds episodes",
    "neurips26 actions": "needs the PushT folder (long): tests/test_actions.py and tests/test_pusht.py",
    "neurips26 build fic": "reads ../shared/data/lost-in-conversation: tests/test_fic_build.py builds it",
    "neurips26 fic": "long (generation with the model; vllm: a GPU): tests/test_fic_pipeline.py on a tiny model",
    "neurips26 build rolebench_unlearn --raw DIR": "the RoleBench release (DIR): tests/test_rolebench_build.py",
    "neurips26 unlearn": "long (training): tests/test_unlearn_methods.py and tests/test_unlearn_rolemoe.py",
    "neurips26 build locus --raw DIR --workers 8": "a whole-state scrape (DIR): tests/test_locus_scale.py",
    "neurips26 build locus --raw DIR --engine ray": "a whole-state scrape (DIR): tests/test_locus_ray.py on Ray",
    "ray start --head": "starts a Ray cluster's head node (the cluster recipe)",
    "neurips26 build locus --raw /shared/DIR --engine ray --address": "a Ray cluster: tests/test_locus_ray.py",
}

# Placeholders a user replaces, as the test fills them in (keyed by the README's command).
STAND_INS: dict[str, str] = {
    "neurips26 build tar --raw DIR --no-embed-videos":
        "neurips26 build tar --raw tar-raw --out tar-files --no-embed-videos",
    "neurips26 build locus --raw DIR --population pop.csv":
        f"neurips26 build locus --raw {SAMPLE} --population pop.csv --out locus-pop",
    "neurips26 leaderboard [--task locus_domain]": "neurips26 leaderboard --task locus_domain",
}


def command_lines(text: str) -> list[str]:
    """Every command of the ```bash blocks: continuation lines joined, comments and blank lines dropped."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                out.append(line.split(" #")[0].strip() if " #" in line else line.strip())
    return out


PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]  # the README first, then docs/*.md and docs/**/*.md
COMMANDS = [command for page in PAGES for command in command_lines(page.read_text(encoding="utf-8"))]

# Values for names a python snippet leaves to the user, defined before it runs (keyed by the snippet's page).
PYTHON_STAND_INS: dict[str, str] = {
    "docs/methods/geometry.md": "import numpy as np\n"
                                "truth_xyz = np.random.default_rng(0).uniform(-1, 1, (500, 3))\n"
                                "pred_xyz = truth_xyz + 0.002\n",
}


def python_snippets() -> list[tuple[str, str]]:
    """(page relative to the repo, code) of every ```python block that starts a line, in page order."""
    return [(str(page.relative_to(ROOT)), code) for page in PAGES
            for code in re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.S | re.M)]


SNIPPETS = python_snippets()


def skip_reason(command: str) -> str | None:
    return next((reason for prefix, reason in SKIP.items() if command.startswith(prefix)), None)


def rows(out: str) -> list[dict]:
    return json.loads(out)


def has(*words: str) -> Callable[[Path, str], None]:
    def check(cwd: Path, out: str) -> None:
        for word in words:
            assert word in out, f"{word!r} not in the output"
    return check


def folder_built(name: str, config: str) -> Callable[[Path, str], None]:
    def check(cwd: Path, out: str) -> None:
        manifest = json.loads((cwd / name / "manifest.json").read_text())
        assert sum(s["rows"] for shards in manifest["configs"][config].values() for s in shards) > 0
        assert "reconciles" in out
    return check


def first_hit_number(number: str) -> Callable[[Path, str], None]:
    def check(cwd: Path, out: str) -> None:
        assert "(1 hits)" in out or "hits)" in out
        assert re.search(rf"│ {re.escape(number)}\s+│", out), f"no hit with section number {number}"
    return check


def hits_in_state(state: str, n: int) -> Callable[[Path, str], None]:
    def check(cwd: Path, out: str) -> None:
        assert f"({n} hits)" in out
        assert len(re.findall(rf"│ {state}\s+│", out)) == n
    return check


def video_files(cwd: Path, out: str) -> None:
    assert "reconciles" in out and any((cwd / "tar-files" / "videos").glob("*.mp4"))


def labelshift_effect(cwd: Path, out: str) -> None:
    for word in ("BBSE", "RLLS", "LP interval", "GE interval", "pac-lp: mean set size", "conformal: mean set size"):
        assert word in out, f"{word!r} not in the output"


# The documented effect of a command (by prefix): stdout (and the files it wrote) checked.
EFFECTS: dict[str, Callable[[Path, str], None]] = {
    "neurips26 build locus --raw DIR --population": folder_built("locus-pop", "county_representatives"),
    "neurips26 sample-path locus": lambda cwd, out: (Path(out.strip()) / "jurisdictions.csv").is_file()
    or pytest.fail(f"not the sample's raw folder: {out}"),
    "neurips26 build locus --raw": folder_built("locus-copy", "sections"),
    "neurips26 build locus": folder_built("locus", "sections"),
    "neurips26 build rolebench_unlearn": folder_built("rolebench_unlearn", "records"),
    "neurips26 query \"SELECT state, count(*)": has("GA", "UT", "WI"),
    "neurips26 query \"SELECT count(*) FROM locus.sections WHERE state = 'GA'\"": has("[1] SELECT", "[2] SELECT"),
    "echo \"SELECT number, heading FROM locus.sections": lambda cwd, out: len(json.loads(out)) == 3 or pytest.fail(out),
    "neurips26 search locus \"dogs running at large\"": hits_in_state("GA", 5),
    "neurips26 search locus \"6-21\"": first_hit_number("6-21"),
    "neurips26 search locus \"meetings\" --county": has("putnam-county-ga", "hits)"),
    "neurips26 push locus --repo ORG/locus --dry-run": has("data/sections/train-00000-of-00001.parquet",
                                                           "manifest sha256", "nothing uploaded"),
    "neurips26 tasks": has("neurips26", "locus_domain"),
    "neurips26 generate tar": lambda cwd, out: (cwd / "tar-raw" / "annotations").is_dir() or pytest.fail("no raw"),
    "neurips26 build tar --raw DIR --no-embed-videos": video_files,
    "neurips26 build tar": folder_built("tar", "annotations"),
    "neurips26 build clovr": folder_built("clovr", "questions"),
    "neurips26 query \"SELECT task_type, count(*) FROM tar.annotations": has("bcq", "mcq"),
    "neurips26 frameselect list": has("uniform", "mmr", "framerouter"),
    "neurips26 leaderboard --demo": lambda cwd, out: (has("DEMO RUNS, NOT RANKED: Text LM overall",
                                                          "no unranked runs yet")(cwd, out),
                                                      "DEMO RUNS, NOT RANKED: fic" not in out or pytest.fail(out)),
    "neurips26 leaderboard": has("protocol: split test", "no ranked submissions yet"),  # an empty store
    "neurips26 labelshift": labelshift_effect,
    "neurips26 query \"SELECT function, count(*) FROM locus.locus_v1": has("count"),
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's working folder: empty but for the inputs README placeholders name."""
    cwd = tmp_path_factory.mktemp("readme")
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, 600)
    source = rng.dirichlet(np.ones(3), 600)
    source[np.arange(600), labels] += 1.5  # a classifier that is mostly right
    np.save(cwd / "source_labels.npy", labels)
    np.save(cwd / "source_preds.npy", source / source.sum(axis=1, keepdims=True))
    np.save(cwd / "target_preds.npy", rng.dirichlet([6, 3, 1], 600))  # the target's labels have shifted
    np.save(cwd / "test_probs.npy", rng.dirichlet(np.ones(3), 50))
    (cwd / "pop.csv").write_text("jurisdiction_id,population\nharrow-mill-ga,1200\nputnam-county-ga,22000\n")
    return cwd


def environment(cwd: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEURIPS26_")}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", NEURIPS26_CACHE=str(cwd / ".cache"),
               HF_HUB_OFFLINE="1", NEURIPS26_LEADERBOARD=str(cwd / ".leaderboard"), COLUMNS="250",
               HF_DATASETS_CACHE=str(cwd / ".hf-datasets"))  # nothing read from another run's cache
    return env


def test_the_readme_has_commands() -> None:
    assert len(COMMANDS) > 20 and any(c.startswith("neurips26 build locus") for c in COMMANDS)
    for prefix in STAND_INS:
        assert prefix in COMMANDS, f"STAND_INS names a command the README no longer has: {prefix}"


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command(command: str, workdir: Path) -> None:
    reason = skip_reason(command)
    if reason:
        pytest.skip(reason)
    line = STAND_INS.get(command, command)
    result = subprocess.run(["bash", "-c", line], cwd=workdir, env=environment(workdir), capture_output=True,
                            text=True, check=False, timeout=600)
    assert result.returncode == 0, f"{line}\n{result.stderr[-2000:]}"
    effect = next((check for prefix, check in EFFECTS.items() if command.startswith(prefix)), None)
    if effect is None:
        assert result.stdout.strip() or result.stderr.strip(), f"{line}: printed nothing"
    else:
        effect(workdir, result.stdout)


def test_the_docs_have_python_snippets() -> None:
    pages = {page for page, _ in SNIPPETS}
    assert {"README.md", "docs/video.md", "docs/methods/frameselect.md"} <= pages
    assert set(PYTHON_STAND_INS) <= pages, "PYTHON_STAND_INS names a page with no python snippet"


@pytest.mark.parametrize(("page", "code"), SNIPPETS, ids=[f"{p}:{i}" for i, (p, _) in enumerate(SNIPPETS)])
def test_python_snippet(page: str, code: str, workdir: Path) -> None:
    script = PYTHON_STAND_INS.get(page, "") + code
    result = subprocess.run([sys.executable, "-c", script], cwd=workdir, env=environment(workdir),
                            capture_output=True, text=True, check=False, timeout=600)
    assert result.returncode == 0, f"{page}:\n{code}\n{result.stderr[-2000:]}"
