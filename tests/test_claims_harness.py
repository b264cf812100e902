"""The claims harness: verdicts on planted claims, equal compute, reproducible runs, the CLI and the generated docs.

Planted claims are tiny functions registered here under unique names (``_planted_...``); they run through
``run_claim`` as a real claim does. The documents test regenerates ``docs/claims.md`` and the README's claims
block from the committed ``bench/results/*.json`` into a temporary copy and compares the text, so any figure
typed or left stale in them fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from claims import report  # noqa: E402
from claims.core import CLAIMS, Arm, ClaimRefused, Outcome, run_claim  # noqa: E402

RUN = [sys.executable, str(ROOT / "bench" / "claims" / "run.py")]
ITEMS = 40


def _plant(name: str, shift: float, direction: str, items: bool, steps: tuple[int, int] = (100, 100),
           untestable: str | None = None) -> str:
    """Register a claim whose method arm is the baseline moved by ``shift`` (plus paired noise)."""
    if name in CLAIMS:
        return name

    @CLAIMS.register(name, method="Planted", claim=f"a planted shift of {shift}", metric="score",
                     direction=direction, baseline="the same scores unshifted", method_arm="m", baseline_arm="b")
    def planted(scale: str, seeds: list[int]) -> Outcome:
        """A planted claim: baseline scores, and the method's the same scores moved by a fixed shift."""
        base, meth = [], []
        for seed in seeds:
            rng = np.random.default_rng(seed)
            b = rng.normal(0.5, 0.1, ITEMS)
            base.append(list(b))
            meth.append(list(b + shift + rng.normal(0, 0.01, ITEMS)))
        arms = {"m": Arm([float(np.mean(x)) for x in meth], {"train_steps": steps[0]}, meth if items else None),
                "b": Arm([float(np.mean(x)) for x in base], {"train_steps": steps[1]}, base if items else None)}
        return Outcome(arms=arms, untestable=untestable, extra={"planted_shift": shift})

    return name


CASES = [  # (shift, direction, verdict): a gain, a null and a loss in each direction
    (+0.2, "higher", "reproduced"), (0.0, "higher", "not reproduced"), (-0.2, "higher", "not reproduced"),
    (-0.2, "lower", "reproduced"), (0.0, "lower", "not reproduced"), (+0.2, "lower", "not reproduced"),
]


@pytest.mark.parametrize("items", [True, False], ids=["bootstrap over items", "t over seeds"])
@pytest.mark.parametrize(("shift", "direction", "expected"), CASES)
def test_planted_gain_null_and_loss_get_their_verdicts(tmp_path, shift, direction, expected, items):
    name = _plant(f"_planted_{direction}_{shift:+.1f}_{items}".replace(".", "p"), shift, direction, items)
    res = run_claim(name, scale="tiny", seeds=3, out=tmp_path)
    assert res["verdict"] == expected
    lo, hi = res["ci95"]
    assert lo <= res["effect"] <= hi
    if shift:
        assert np.sign(res["effect"]) == np.sign(shift) and abs(res["effect"] - shift) < 0.02
        assert (lo > 0) if shift > 0 else (hi < 0)  # a planted loss is excluded the other way round
    else:
        assert lo < 0 < hi
    written = json.loads((tmp_path / f"{name}.json").read_text())
    assert written == json.loads(json.dumps(res)) and written["planted_shift"] == shift
    assert written["arms"]["m"].get("n_items") == ([ITEMS] * 3 if items else None)


def test_unequal_train_steps_are_refused_and_nothing_is_written(tmp_path):
    name = _plant("_planted_unequal_steps", 0.2, "higher", True, steps=(300, 100))
    with pytest.raises(ClaimRefused, match="unequal compute"):
        run_claim(name, scale="tiny", seeds=3, out=tmp_path)
    assert not list(tmp_path.iterdir())


def test_too_few_seeds_and_unknown_scales_are_refused(tmp_path):
    name = _plant("_planted_seeds", 0.2, "higher", True)
    with pytest.raises(ClaimRefused, match="at least 3 seeds"):
        run_claim(name, scale="tiny", seeds=2, out=tmp_path)
    with pytest.raises(ClaimRefused, match="unknown scale"):
        run_claim(name, scale="huge", seeds=3, out=tmp_path)


def test_an_untestable_claim_is_reported_as_such_with_what_it_needs(tmp_path):
    name = _plant("_planted_untestable", 0.2, "higher", True, untestable="needs a pretrained 7B VLM")
    run_claim(name, scale="tiny", seeds=3, out=tmp_path / "results")
    readme = tmp_path / "README.md"
    readme.write_text("# project\n\nintro\n\n## Usage\n\ntext\n")
    report.write_report(tmp_path / "results", tmp_path / "docs" / "claims.md", readme)
    doc = (tmp_path / "docs" / "claims.md").read_text()
    assert "| verdict | **untestable here** |" in doc and "| needs | needs a pretrained 7B VLM |" in doc
    text = readme.read_text()
    assert text.index(report.BEGIN) < text.index("## Usage") and "[_planted_untestable.json](results/" in text
    assert f"(docs/claims.md#{name})" in text and "**untestable here**" in text
    report.write_report(tmp_path / "results", tmp_path / "docs" / "claims.md", readme)
    assert readme.read_text() == text  # the block is replaced in place, not added again


def test_the_same_seeds_give_the_same_numbers(tmp_path):
    import claims.labelshift  # noqa: F401  (registers the real claim)

    a, b = (run_claim("labelshift", scale="tiny", seeds=3, out=tmp_path / out) for out in ("a", "b"))
    assert a.pop("seconds") > 0 and b.pop("seconds") > 0
    assert a == b and a["arms"]["lp"]["values"] != a["arms"]["ge"]["values"]
    files = [json.loads((tmp_path / out / "labelshift.json").read_text()) for out in ("a", "b")]
    assert [{k: v for k, v in f.items() if k != "seconds"} for f in files] == [json.loads(json.dumps(a))] * 2


def test_list_prints_one_registered_claim_per_line():
    run = subprocess.run([*RUN, "--list"], capture_output=True, text=True, timeout=120, check=True)
    names = run.stdout.splitlines()
    assert "labelshift" in names and names == sorted(set(names)) and all(n and " " not in n for n in names)


def test_a_bad_name_gives_one_line_with_the_known_claims_and_exit_2():
    run = subprocess.run([*RUN, "no_such_claim"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1 and "no_such_claim" in run.stderr and "labelshift" in run.stderr


def _regenerate(tmp_path: Path) -> tuple[Path, Path]:
    """``--report`` run on a copy of the committed results files, README and claims page."""
    (tmp_path / "bench").mkdir()
    shutil.copytree(ROOT / "bench" / "results", tmp_path / "bench" / "results")
    (tmp_path / "docs").mkdir()
    doc, readme = tmp_path / "docs" / "claims.md", tmp_path / "README.md"
    shutil.copy(ROOT / "README.md", readme)
    subprocess.run([*RUN, "--report", "--out", str(tmp_path / "bench" / "results"), "--docs", str(doc),
                    "--readme", str(readme)], check=True, capture_output=True, text=True, timeout=120)
    return doc, readme


def test_docs_and_readme_hold_exactly_what_report_generates_from_the_results_files(tmp_path):
    doc, readme = _regenerate(tmp_path)
    assert (ROOT / "docs" / "claims.md").read_text() == doc.read_text(), \
        "docs/claims.md differs from the results files: run python bench/claims/run.py --report"
    ours, generated = (ROOT / "README.md").read_text(), readme.read_text()
    assert ours.count(report.BEGIN) == 1 and ours.count(report.END) == 1
    block = slice(ours.index(report.BEGIN), ours.index(report.END))
    assert ours[block] == generated[block] and ours == generated, \
        "README's claims block differs from the results files: run python bench/claims/run.py --report"
    for res in report.load_results(ROOT / "bench" / "results"):
        assert f"## {res['name']}\n" in doc.read_text() and f"{res['name']}.json" in ours[block]


def test_report_is_byte_identical_from_the_same_results(tmp_path):
    texts = []
    for copy in ("one", "two"):
        (tmp_path / copy / "docs").mkdir(parents=True)
        shutil.copy(ROOT / "README.md", tmp_path / copy / "README.md")
        report.write_report(ROOT / "bench" / "results", tmp_path / copy / "docs" / "claims.md",
                            tmp_path / copy / "README.md")
        texts.append([(tmp_path / copy / f).read_bytes() for f in ("docs/claims.md", "README.md")])
    assert texts[0] == texts[1]
