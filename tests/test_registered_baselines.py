"""Baselines of the evaluators outside lm-eval are measured, not declared: each registered protocol's baseline is
the best of answerers that know nothing, recomputed here from its data.

ReDiff, the contours and motion protocols and FiC (built from the real shared data) are recomputed in full and
must give the recorded scores. Segmentation (half a minute to generate), surfaces (minutes of alignments) and
PushT (minutes of rollouts) are rerun on a slice of their standard set, and their recorded measurement must name
the whole set.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from neurips26.corpora.fic.build import build as build_fic
from neurips26.tasks import measure
from neurips26.tasks.protocol import baseline_value, read_protocols

from neurips26 import knownothing
from neurips26.protocol import PROTOCOLS, MeasuredBaseline

REGISTERED = sorted(t for t, p in read_protocols(strict=True)[0].items() if p.source == "registered")
FULL = ["rediff_arithmetic", "geometry_contours", "geometry_motion", "fic_translation", "fic_code", "fic_arithmetic"]
NEEDS_SHARED = {"geometry_motion", "fic_translation", "fic_code", "fic_arithmetic"}


@pytest.fixture(scope="module")
def fic_data(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fic folder built from the real Lost-in-Conversation translations (and HumanEval, the generator)."""
    root = tmp_path_factory.mktemp("fic-data")
    build_fic(raw=shared_data / "lost-in-conversation", out=root / "fic")
    return root


def test_every_registered_protocol_records_a_measured_baseline_on_its_whole_set() -> None:
    assert {"rediff_arithmetic", "pusht_rollout", "fic_code", "geometry_surfaces"} <= set(REGISTERED)
    for task in REGISTERED:
        protocol = PROTOCOLS.get(task)
        measured = protocol.baseline_from
        assert measured is not None, f"{task}: its baseline is declared, not measured"
        assert {"constant", "random"} <= set(measured.scores) and measured.seeds == knownothing.SEEDS, task
        best = (max if protocol.higher_is_better else min)(measured.scores.values())
        assert protocol.baseline == measured.value == best, task
        assert measured.n == protocol.size, f"{task}: measured on {measured.n} documents, not {protocol.size}"
        module = measure.protocol_module(task)
        package = module.__name__.split(".")[2]
        assert module.MEASURED[task] is measured and measured.how == f"methods/{package}/baselines.py", task


@pytest.mark.parametrize("task", FULL)
def test_recorded_baselines_are_recomputed_from_the_data(task: str, request: pytest.FixtureRequest,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if task in NEEDS_SHARED:
        request.getfixturevalue("shared_data")
    if task.startswith("fic_"):
        monkeypatch.setenv("NEURIPS26_DATA", str(request.getfixturevalue("fic_data")))
    recorded, measured = PROTOCOLS.get(task).baseline_from, measure.measure_registered(task)
    assert measured.scores == pytest.approx(recorded.scores, abs=1e-4), task
    assert (measured.answerer, measured.answer, measured.n) == (recorded.answerer, recorded.answer, recorded.n)


def test_what_knowing_nothing_scores_is_not_zero_where_the_data_repeat() -> None:
    """Sums with a full carry chain repeat (0999999) and single-digit arithmetic answers repeat: a constant answer
    scores above 0 there, and the recorded baseline says so."""
    rediff = PROTOCOLS.get("rediff_arithmetic").baseline_from
    assert rediff.answerer == "constant" and rediff.answer == "0999999" and rediff.value > 0.01
    arithmetic = PROTOCOLS.get("fic_arithmetic").baseline_from
    assert arithmetic.value > arithmetic.scores["random"] > 0
    motion = PROTOCOLS.get("geometry_motion").baseline_from
    assert motion.answer == "training mean" and motion.value == 0.0 > motion.scores["random"]


def test_segmentation_answerers_on_two_shapes() -> None:
    from neurips26.methods.geometry.baselines import measure as measure_geometry
    from neurips26.methods.geometry.protocol import SEGMENTATION

    sliced = measure_geometry("geometry_segmentation", limit=2)
    assert sliced.n == 2 * len(SEGMENTATION["scales"]) and sliced.scores["empty"] == 0.0
    assert 0 < sliced.scores["random"] < 1 and 0 < sliced.scores["constant"] < 1
    recorded = PROTOCOLS.get("geometry_segmentation").baseline_from
    assert f"{SEGMENTATION['shapes']} generated shapes" in recorded.data and recorded.n == 36
    assert recorded.answer in ("mean shape", "all foreground") and recorded.how == sliced.how


def test_surface_answerers_on_two_meshes(shared_data: Path) -> None:
    from neurips26.methods.geometry.baselines import surfaces_baseline
    from neurips26.methods.geometry.protocol import SURFACES

    sliced = surfaces_baseline(limit=4, mesh_dir=shared_data / "meshes", samples=1500)
    assert sliced.n == 4 and all(0 <= v <= 1 for v in sliced.scores.values()) and sliced.answer in ("sphere", "cube")
    recorded = PROTOCOLS.get("geometry_surfaces").baseline_from
    assert f"{len(SURFACES['kinds'])} inputs, {SURFACES['samples']} points" in recorded.data
    assert recorded.data.split("sha256 ")[1] and recorded.n == 16


def test_pusht_answerers_on_short_rollouts() -> None:
    """The still policy scores the initial coverage of a seed whose agent starts clear of the block."""
    from neurips26.corpora.pusht import sim
    from neurips26.methods.actions.baselines import measure as measure_pusht
    from neurips26.methods.actions.evaluate import seeds
    from neurips26.methods.actions.protocol import STANDARD

    sliced = measure_pusht(limit=1, max_seconds=3.0)
    env = sim.make_env()
    env.reset(seed=seeds(1)[0])
    assert sliced.scores["empty"] == pytest.approx(sim.coverage(env), abs=5e-5)  # recorded to 4 decimals
    assert sliced.n == 1 and all(0 <= v <= 1 for v in sliced.scores.values())
    recorded = PROTOCOLS.get("pusht_rollout").baseline_from
    assert recorded.n == STANDARD["episodes"] and f"{STANDARD['max_seconds']:g} s each" in recorded.data


def test_the_measured_blocks_are_the_recorders_output() -> None:
    """Each protocol module's MEASURED block is exactly what ``--record`` writes (nothing typed by hand), and what
    it writes reads back as the same measurement, within the line length."""
    import inspect

    for module in {measure.protocol_module(task) for task in REGISTERED}:
        text = Path(inspect.getsourcefile(module)).read_text(encoding="utf-8")
        block = "MEASURED = {\n" + "\n".join(measure.python_entry(k, v) for k, v in module.MEASURED.items()) + "\n}\n"
        assert block in text, module.__name__
    long = MeasuredBaseline(answerer="random", scores={"constant": 0.1, "random": 0.2}, answer="x\n\"y\"" * 40, n=3,
                            data="a long provenance " * 12, how="h" * 150)
    entry = measure.python_entry("task", long)
    assert max(len(line) for line in entry.splitlines()) <= measure.WIDTH
    assert eval("{" + entry + "}", {"MeasuredBaseline": MeasuredBaseline}) == {"task": long}  # noqa: S307


def test_knownothing_answerers_leave_out_the_source_group() -> None:
    golds = ["a", "a", "b", "c"]

    def exact(i: int, answer: str) -> float:
        return float(golds[i] == answer)

    assert knownothing.constant_gold(golds, exact) == (1 / 3, "a")  # "a" from doc 0, scored on docs 1-3
    assert knownothing.constant_gold(golds, exact, groups=[0, 0, 1, 2]) == (0.0, "a")
    assert knownothing.random_gold(golds, exact, groups=[0, 0, 1, 2]) == 0.0  # doc 0 never draws doc 1
    assert 0 < knownothing.random_gold(golds, exact, seeds=50) < 0.5


def test_the_board_normalises_by_the_measured_baseline(tmp_path: Path) -> None:
    """A ReDiff run that answers the recorded constant for every problem scores about the baseline (its own 8
    problems count here, not in the measurement), and the board normalises it by the recorded baseline."""
    from neurips26.leaderboard.ranking import leaderboard
    from neurips26.leaderboard.store import Store
    from neurips26.methods.rediff import cascade
    from neurips26.methods.rediff.data import VOCAB, evaluation_set
    from neurips26.methods.rediff.decoding import decode
    from neurips26.methods.rediff.protocol import PROTOCOL, STANDARD_DIGITS, STANDARD_TOKENS_PER_STEP, TASK
    from neurips26.methods.rediff.report import write_run

    problems = evaluation_set(STANDARD_DIGITS, PROTOCOL.size)
    answer = np.array([VOCAB.index(c) for c in PROTOCOL.baseline_from.answer])

    class Constant:
        revises = False

        def propose(self, prompts: np.ndarray, canvas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return np.broadcast_to(answer, canvas.shape).copy(), np.ones(canvas.shape)

    trace = decode(Constant(), problems.prompts, problems.answer_length, STANDARD_TOKENS_PER_STEP)
    results = write_run(tmp_path / "run", problems, trace, cascade.summarise(trace, problems.targets), "constant", {})
    meta = {"model_id": "org/constant", "revision": "0" * 40, "precision": "float32", "params": 1,
            "license": "apache-2.0", "model_type": "pretrained", "submitter": "alice"}
    store = Store(tmp_path / "lb")
    entry = store.submit(results, meta, sorted((tmp_path / "run").glob("samples_*.jsonl")))
    assert entry.status == "VALID", entry.reason
    score = leaderboard(store, task=TASK).to_pylist()[0]["score"]
    assert score == pytest.approx(float((problems.targets == answer).all(axis=1).mean()))
    baseline = PROTOCOL.baseline_from.value
    assert store.scores().column("baseline").to_pylist()[0] == baseline
    norm = leaderboard(store, group="rediff").to_pylist()[0]["score"]  # the board's mean of normalised scores
    assert norm == pytest.approx((score - baseline) / (1 - baseline)) and 0 < norm < 0.01
    assert baseline_value(PROTOCOL, None) == PROTOCOL.baseline_from.value
