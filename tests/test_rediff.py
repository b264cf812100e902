"""ReDiff: the cascade evaluator, the decoding loop, the refiner and the lm-eval-shaped results.

The decoders with planted behaviour are plain numpy :class:`Denoiser` s that know the targets: one whose errors
are independent of everything by construction (cascade lift 0), one that copies a wrong neighbour committed
before (lift positive). The refiner is the real small masked-diffusion LM, trained for a few hundred steps on
2-digit addition on the CPU.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from neurips26.methods.rediff import cascade
from neurips26.methods.rediff.data import MASK, evaluation_set, generate
from neurips26.methods.rediff.decoding import LogitsDenoiser, decode
from neurips26.methods.rediff.model import MaskedDiffusionLM, TorchDenoiser, load, save
from neurips26.methods.rediff.protocol import PROTOCOL, STANDARD_DIGITS, STANDARD_TOKENS_PER_STEP, TASK
from neurips26.methods.rediff.report import write_run
from neurips26.methods.rediff.train import train_base, train_stage1, train_stage2
from neurips26.tasks.protocol import deviations, read_protocols
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.protocol import PROTOCOLS
from neurips26.results import parse_run, read_run


class Oracle:
    """Knows the targets; ``wrong(i, canvas, rng)`` says which positions it proposes wrong; random confidences."""

    revises = False

    def __init__(self, targets: np.ndarray, seed: int = 0) -> None:
        self.targets = targets
        self.rng = np.random.default_rng(seed)

    def wrong(self, canvas: np.ndarray) -> np.ndarray:
        return np.zeros(canvas.shape, dtype=bool)

    def propose(self, prompts: np.ndarray, canvas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        bad = self.wrong(canvas)
        tokens = np.where(bad, (self.targets + 1 + self.rng.integers(0, 9, self.targets.shape)) % 10, self.targets)
        return tokens, self.rng.random(canvas.shape)


class Independent(Oracle):
    """Each proposal is wrong with probability ``p``, whatever the canvas holds."""

    def wrong(self, canvas: np.ndarray) -> np.ndarray:
        return self.rng.random(canvas.shape) < 0.2


class Copier(Independent):
    """Wrong with probability 0.1, and always wrong next to a committed wrong token (it copies its error)."""

    def wrong(self, canvas: np.ndarray) -> np.ndarray:
        bad_committed = (canvas != MASK) & (canvas != self.targets)
        near = np.zeros(canvas.shape, dtype=bool)
        near[:, 1:] |= bad_committed[:, :-1]
        near[:, :-1] |= bad_committed[:, 1:]
        return near | (self.rng.random(canvas.shape) < 0.1)


def test_decoding_with_k_tokens_per_step_commits_exactly_k() -> None:
    problems = generate(64, 7, seed=5)  # answers of 8 tokens
    untrained = TorchDenoiser(MaskedDiffusionLM(7, dim=16, layers=1))
    for denoiser in (Independent(problems.targets), untrained):
        for k in (1, 2, 3, 4, 8):
            trace = decode(denoiser, problems.prompts, 8, k)
            steps = -(-8 // k)
            assert trace.steps == steps and trace.drafts.shape == (64, steps + 1, 8)
            newly = np.diff((trace.drafts != MASK).sum(axis=2), axis=1)  # positions committed at each step
            expected = [min(k, 8 - k * s) for s in range(steps)]
            assert (newly == expected).all(), (k, newly[0])
            for step, count in enumerate(expected, 1):
                assert ((trace.commit_step == step).sum(axis=1) == count).all()
            assert (trace.final != MASK).all() and not trace.revisions.any()


def test_cascade_lift_is_zero_for_independent_errors_and_positive_for_copied_ones() -> None:
    problems = generate(3000, 7, seed=6)
    independent = cascade.summarise(decode(Independent(problems.targets, 1), problems.prompts, 8, 1),
                                    problems.targets, window=2)
    assert independent["commit_error_rate"] == pytest.approx(0.2, abs=0.01)
    assert independent["cascade_conditioned"] > 5000
    assert abs(independent["cascade_lift"]) < 0.015
    copier = cascade.summarise(decode(Copier(problems.targets, 2), problems.prompts, 8, 1), problems.targets, 2)
    assert copier["cascade_lift"] > 0.3
    # all at once: nothing is committed before anything else, so there is no cascade to measure
    at_once = cascade.summarise(decode(Copier(problems.targets, 3), problems.prompts, 8, 8), problems.targets)
    assert at_once["cascade_conditioned"] == 0 and at_once["cascade_lift"] == 0.0
    assert at_once["commit_error_rate"] == pytest.approx(0.1, abs=0.01)


def test_cascade_lift_counts_only_earlier_errors_within_the_window() -> None:
    commit_step = np.array([[1, 2, 3, 4, 5]])
    wrong = np.array([[True, True, False, False, True]])
    nearby = cascade.earlier_error_nearby(commit_step, wrong, window=1)
    assert nearby.tolist() == [[False, True, True, False, False]]
    lift = cascade.cascade_lift(commit_step, wrong, window=1)
    assert lift["p_error_after_error"] == 0.5 and lift["lift"] == pytest.approx(0.5 - 0.6)


def test_repetition_and_correction_metrics() -> None:
    assert cascade.distinct_n([1, 1, 1, 1]) == pytest.approx(1 / 3) and cascade.distinct_n([1, 2, 3]) == 1.0
    assert cascade.longest_repeat([1, 2, 3, 1, 2, 3]) == 3 and cascade.longest_repeat([1, 2, 3]) == 0
    assert cascade.longest_repeat([7, 7, 7, 7]) == 3
    assert cascade.speeds(8) == [1, 2, 4, 8] and cascade.speeds(6) == [1, 2, 4, 6]

    class FixesLater(Oracle):
        """Commits position 0 wrong, then proposes the target everywhere: a revising decoder corrects it."""

        revises = True

        def wrong(self, canvas: np.ndarray) -> np.ndarray:
            bad = np.zeros(canvas.shape, dtype=bool)
            bad[:, 0] = (canvas == MASK).all(axis=1)
            return bad

        def propose(self, prompts, canvas):
            tokens, _ = super().propose(prompts, canvas)
            confidence = np.zeros(canvas.shape)
            confidence[:, 0] = 1.0  # position 0 first
            return tokens, confidence

    problems = generate(10, 3, seed=7)
    summary = cascade.summarise(decode(FixesLater(problems.targets), problems.prompts, 4, 1), problems.targets)
    assert summary["commit_error_rate"] == 0.25 and summary["correction_rate"] == 1.0
    assert summary["exact_match"] == 1.0 and summary["broken_rate"] == 0.0
    kept = cascade.summarise(decode(FixesLater(problems.targets), problems.prompts, 4, 1, revise=False),
                             problems.targets)
    assert kept["correction_rate"] == 0.0 and kept["exact_match"] == 0.0


class OneCorruption:
    """Commits a wrong digit first at ``where``, then proposes what ``refiner`` proposes."""

    revises = True

    def __init__(self, refiner: TorchDenoiser, targets: np.ndarray, where: np.ndarray) -> None:
        self.refiner, self.targets, self.where = refiner, targets, where

    def propose(self, prompts: np.ndarray, canvas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tokens, confidence = self.refiner.propose(prompts, canvas)
        first = (canvas == MASK).all(axis=1)
        tokens[first, self.where[first]] = (self.targets[first, self.where[first]] + 1) % 10
        confidence[first, self.where[first]] = 2.0
        return tokens, confidence


def test_logits_denoiser_wraps_any_logits_function() -> None:
    problems = generate(5, 3, seed=8)
    denoiser = LogitsDenoiser(lambda prompts, canvas: np.eye(12)[problems.targets] * 5.0)
    trace = decode(denoiser, problems.prompts, 4, 2)
    assert (trace.final == problems.targets).all()


@pytest.fixture(scope="module")
def trained() -> tuple[MaskedDiffusionLM, MaskedDiffusionLM]:
    """(base, stage-1 refiner) on 1-digit addition (one thread: the cores are shared)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(0)
        base = MaskedDiffusionLM(1, dim=64, layers=2)
        train_base(base, steps=300, batch_size=128, lr=3e-3, seed=1)
        refiner = copy.deepcopy(base)
        train_stage1(refiner, steps=400, batch_size=128, lr=1e-3, seed=2, corruption=0.3)
    finally:
        torch.set_num_threads(threads)
    return base, refiner


def test_the_stage1_refiner_fixes_a_planted_single_token_corruption(trained) -> None:
    base, refiner = trained
    problems = evaluation_set(1, 300)
    rng = np.random.default_rng(9)
    rows, where = np.arange(len(problems)), rng.integers(0, 2, size=len(problems))
    planted = problems.targets.copy()
    planted[rows, where] = (planted[rows, where] + rng.integers(1, 10, len(problems))) % 10
    refine = TorchDenoiser(refiner, revises=True)
    tokens, _ = refine.propose(problems.prompts, planted)
    fixed = (tokens == problems.targets).all(axis=1).mean()
    assert fixed >= 0.95
    kept, _ = refine.propose(problems.prompts, problems.targets)  # a right answer is left as it is
    assert (kept == problems.targets).all(axis=1).mean() >= 0.95
    # the base model, trained to fill masks only, was never taught to judge a committed token
    tokens, _ = TorchDenoiser(base, revises=True).propose(problems.prompts, planted)
    assert (tokens == problems.targets).all(axis=1).mean() < fixed
    # through the decoding loop: a revising decoder whose first commit is the planted error ends up right
    trace = decode(OneCorruption(refine, problems.targets, where), problems.prompts, 2, 1)
    assert (trace.committed != problems.targets).sum(axis=1).tolist() == [1] * len(problems)
    assert (trace.final == problems.targets).all(axis=1).mean() >= 0.95


def test_stage2_trains_on_its_own_drafts_and_the_model_round_trips(trained, tmp_path: Path) -> None:
    _, refiner = trained
    refiner = copy.deepcopy(refiner)
    cost = train_stage2(refiner, steps=5, batch_size=32, seed=3)
    assert cost.stage == "rediff-stage2" and cost.steps == 5 and cost.seconds >= 0 and cost.peak_memory_mb > 0
    save(refiner, tmp_path / "r.pt", "rediff-stage2", {"costs": [cost.as_dict()]})
    loaded, stage, info = load(tmp_path / "r.pt", "cpu")
    assert stage == "rediff-stage2" and info["costs"][0]["steps"] == 5
    problems = evaluation_set(1, 20)
    assert (TorchDenoiser(loaded).propose(problems.prompts, problems.targets)[0]
            == TorchDenoiser(refiner).propose(problems.prompts, problems.targets)[0]).all()


def test_runs_are_written_in_the_lm_eval_format_and_read_back(tmp_path: Path) -> None:
    problems = evaluation_set(STANDARD_DIGITS, PROTOCOL.size)
    oracle = Independent(problems.targets, 4)
    for k in (STANDARD_TOKENS_PER_STEP, 1):
        trace = decode(oracle, problems.prompts, problems.answer_length, k)
        summary = cascade.summarise(trace, problems.targets)
        write_run(tmp_path / f"k{k}", problems, trace, summary, "oracle", {"p": 0.2})
    run = read_run(tmp_path / f"k{STANDARD_TOKENS_PER_STEP}")
    task = run.tasks[TASK]
    assert task.value("exact_match") == pytest.approx(summary_of(run)["exact_match"])
    assert task.n_original == task.n_effective == PROTOCOL.size and len(task.samples) == PROTOCOL.size
    assert task.protocol == PROTOCOL.model_dump(mode="json") and task.data["demo"] is False
    sample = task.samples[0]
    assert sample.values["exact_match"] in (0.0, 1.0) and len(sample.values["drafts"]) == \
        -(-problems.answer_length // STANDARD_TOKENS_PER_STEP) + 1
    assert np.mean([s.values["exact_match"] for s in task.samples]) == pytest.approx(task.value("exact_match"))
    assert deviations(run, task, PROTOCOL) == []
    other = read_run(tmp_path / "k1")
    assert deviations(other, other.tasks[TASK], PROTOCOL) == [
        f"task setting tokens_per_step=1 (standard: {STANDARD_TOKENS_PER_STEP})"]
    assert parse_run(json.loads(next((tmp_path / "k1").glob("results_*.json")).read_text())).tasks[TASK].samples \
        is None


def summary_of(run) -> dict:
    return run.raw["rediff"]["cascade"]


def test_the_protocol_is_registered_where_the_leaderboard_finds_it() -> None:
    assert PROTOCOLS.get(TASK) is PROTOCOL and PROTOCOLS.info(TASK)["group"] == "rediff"
    found = read_protocols()[0][TASK]
    assert found.source == "registered" and found.protocol.metric == "exact_match"


def test_cli_train_and_eval_write_models_runs_and_the_plot(tmp_path: Path) -> None:
    runner = CliRunner()
    assert "train" in runner.invoke(app, ["rediff", "--help"]).output
    for command in ("train", "eval"):
        assert runner.invoke(app, ["rediff", command, "--help"]).exit_code == 0
    result = runner.invoke(app, ["rediff", "train", "--out", str(tmp_path / "m"), "--digits", "2", "--steps", "4",
                                 "--stage1-steps", "3", "--stage2-steps", "2", "--batch-size", "16", "--dim", "16",
                                 "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert {p.name for p in (tmp_path / "m").iterdir()} == {"base.pt", "rediff-stage1.pt", "rediff.pt",
                                                             "training.json"}
    result = runner.invoke(app, ["rediff", "eval", "--models", str(tmp_path / "m"), "--out", str(tmp_path / "e"),
                                 "--problems", "30", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    assert "cascade lift" in result.output and (tmp_path / "e" / "speed_quality.png").stat().st_size > 1000
    curves = json.loads((tmp_path / "e" / "curves.json").read_text())
    assert [r["tokens_per_step"] for r in curves["rediff"]] == [1, 2, 3]
    assert [c["stage"] for c in curves["training"]["base"]] == ["base", "base-more-1", "base-more-2"]
    assert [c["stage"] for c in curves["training"]["rediff"]] == ["base", "rediff-stage1", "rediff-stage2"]
    training = json.loads((tmp_path / "m" / "training.json").read_text())
    assert training["train_steps"] == {"base": 9, "rediff": 9}  # equal compute: 4 + 3 + 2 steps each
    assert read_run(tmp_path / "e" / "base" / "k2").tasks[TASK].n_original == 30
    bad = runner.invoke(app, ["rediff", "eval", "--models", str(tmp_path / "none")])
    assert bad.exit_code == 2 and "rediff train" in bad.output
    bad = runner.invoke(app, ["rediff", "eval", "--models", str(tmp_path / "m"), "--tokens-per-step", "9"])
    assert bad.exit_code == 2 and "answer length" in bad.output


def test_a_run_is_ranked_on_its_own_board_and_a_changed_one_is_not(tmp_path: Path) -> None:
    """The leaderboard accepts a registered evaluator's runs (written by neurips26.runfiles) like an lm-eval task's:
    scores recomputed from the samples, the standard run VALID, another setting UNRANKED with the reason."""
    from neurips26.leaderboard.store import Store

    problems = evaluation_set(STANDARD_DIGITS, PROTOCOL.size)
    oracle = Independent(problems.targets, 4)
    store = Store(tmp_path / "lb")
    assert store.tasks[TASK].source == "registered" and store.tasks[TASK].group == "rediff"
    entries = {}
    for k in (STANDARD_TOKENS_PER_STEP, 1):
        trace = decode(oracle, problems.prompts, problems.answer_length, k)
        results = write_run(tmp_path / f"k{k}", problems, trace, cascade.summarise(trace, problems.targets),
                            f"oracle-k{k}", {"p": 0.2})
        meta = {"model_id": f"org/oracle-k{k}", "revision": "0" * 40, "precision": "float32", "params": 1,
                "license": "apache-2.0", "model_type": "pretrained", "submitter": "alice"}
        entries[k] = store.submit(results, meta, sorted((tmp_path / f"k{k}").glob("samples_*.jsonl")))
    assert entries[STANDARD_TOKENS_PER_STEP].status == "VALID", entries[STANDARD_TOKENS_PER_STEP].reason
    assert entries[1].status == "UNRANKED" and "tokens_per_step=1" in entries[1].reason
    row = next(r for r in store.scores().to_pylist() if r["submission_id"] == entries[STANDARD_TOKENS_PER_STEP].id)
    recorded = json.loads(next((tmp_path / f"k{STANDARD_TOKENS_PER_STEP}").glob("results_*.json")).read_text())
    assert row["task"] == TASK and row["n"] == PROTOCOL.size
    assert row["value"] == pytest.approx(recorded["results"][TASK]["exact_match,none"])
