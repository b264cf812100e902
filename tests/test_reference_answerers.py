"""Scores mean something: answerers that know nothing score at their task's baseline, through lm-eval itself.

Every task (LOCUS, RoleBench-Unlearn, TAR, CLoVR; the gold LOCUS tasks when the gold folder is there) is run in
full by the ``constant`` answerer (first choice, majority label, empty answer) and the ``random`` answerer with
real ``lm_eval.simple_evaluate`` over our tasks folder, on folders built once per session. Each score must stay
within the baseline's 95% interval for the split's size (the baseline of the task's ``metadata.protocol``, or
one inferred while a task declares none), and that interval must stay below the top of the metric's range.

RoleBench-Unlearn scores every answer under the original model (about two seconds per answer on a CPU); the
random answerer's words are scored on the forget task only (two answers), the constant answers (all empty
there) on all three.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from lm_eval.api.instance import Instance
from lm_eval.tasks import TaskManager
from neurips26.corpora import RESOURCES
from neurips26.corpora.clovr import build as clovr_build
from neurips26.corpora.clovr import generate as clovr_generate
from neurips26.corpora.tar import build as tar_build
from neurips26.corpora.tar import generate as tar_generate
from neurips26.tasks import TASKS_DIR, baselines
from neurips26.tasks.answerers import ConstantLM, RandomLM, listed_options, majority_label
from neurips26.tasks.protocol import Protocol, read_protocols

from neurips26 import settings
from neurips26.errors import UserError

pytest.importorskip("av")

GOLD = (settings.locus_gold_dir() / "dev.jsonl").is_file()
PROTOCOLS = read_protocols(strict=True)[0]
# lm-eval tasks only: a protocol registered by an evaluator outside lm-eval (rediff_arithmetic) has no task YAML
TASKS = [t for t in sorted(PROTOCOLS) if PROTOCOLS[t].source != "registered" and (GOLD or not t.endswith("_gold"))]


@pytest.fixture(scope="session")
def reference_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """LOCUS and RoleBench-Unlearn from their embedded samples; TAR (6 test clips) and CLoVR (3 sets of 3 clips)
    generated releases: enough questions per task for a baseline interval below the top of the range."""
    root = tmp_path_factory.mktemp("reference-data")
    RESOURCES.get("locus")(out=root / "locus", gold=settings.locus_gold_dir() if GOLD else None)
    RESOURCES.get("rolebench_unlearn")(out=root / "rolebench_unlearn")
    tar_generate.generate(root / "raw" / "tar", seed=0, n_videos=6, test_videos=6, duration=8.0)
    clovr_generate.generate(root / "raw" / "clovr", seed=0, n_sets=3, videos_per_set=3, duration=20.0)
    tar_build.build(raw=root / "raw" / "tar", out=root / "tar")
    clovr_build.build(raw=root / "raw" / "clovr", out=root / "clovr")
    return root


@pytest.fixture(scope="session")
def rows(reference_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[baselines.Row]]:
    """Every answerer's rows, by task."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NEURIPS26_DATA", str(reference_data))
        patch.setenv("HF_DATASETS_CACHE", str(tmp_path_factory.mktemp("hf")))
        runs = {}
        for model, args in baselines.ANSWERERS:
            runs[model, args] = baselines.evaluate(model, args, TASKS)
    found = baselines.rows(runs)
    print("\n" + baselines.table(found))
    by_task: dict[str, list[baselines.Row]] = {}
    for row in found:
        by_task.setdefault(row.task, []).append(row)
    return by_task


@pytest.mark.parametrize("task", TASKS)
def test_knowing_nothing_scores_at_the_baseline(rows: dict[str, list[baselines.Row]], task: str) -> None:
    found = rows[task]
    expected = len(baselines.ANSWERERS)  # every answerer on every task
    assert len(found) == expected, [r.answerer for r in found]
    first = found[0]
    protocol = PROTOCOLS[task].protocol
    low, high = protocol.range
    if not protocol.ranked:  # a constant answer may win this metric: the protocol must say so and keep it unranked
        assert protocol.note, f"{task}: an unranked task says why in its protocol's note"
    elif first.higher_is_better:
        assert first.high < high, f"{task}: a constant answer can reach the top ({first.high:.3f} of {high})"
    else:
        assert first.low > low, f"{task}: a constant answer can reach the best ({first.low:.3f} of {low})"
    for row in found:
        assert math.isfinite(row.score)
        assert row.ok, (f"{task}: {row.answerer} scores {row.metric}={row.score:.3f}, beyond the baseline "
                        f"{row.baseline:.3f} ({row.baseline_kind}) interval [{row.low:.3f}, {row.high:.3f}] "
                        f"for n={row.n}")


def test_the_majority_answer_is_the_majority_baseline_where_it_reads_the_evaluated_split(
        rows: dict[str, list[baselines.Row]]) -> None:
    """Tasks without a training split (the video tasks) take the majority of the evaluated split: exactly it."""
    for task in TASKS:
        if task.startswith(("tar_", "clovr_")):
            row = next(r for r in rows[task] if r.answerer == "constant(strategy=majority)")
            if row.baseline_kind == "majority":
                assert row.score == pytest.approx(row.baseline), task


def test_the_majority_answer_comes_from_the_training_split(reference_data: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEURIPS26_DATA", str(reference_data))
    task = TaskManager(include_path=str(TASKS_DIR), include_defaults=False).load("locus_topic")["tasks"]["locus_topic"]
    train = Counter(task.doc_to_choice(d)[task.doc_to_target(d)] for d in task.training_docs())
    assert majority_label(task, [], closed=True) == train.most_common(1)[0][0]
    results = baselines.evaluate("constant", "strategy=majority", ["locus_topic"])
    sample = results["samples"]["locus_topic"][0]
    picked = {s["arguments"][max(range(len(s["resps"])), key=lambda k, s=s: s["resps"][k][0][0])][1].strip()
              for s in results["samples"]["locus_topic"]}
    assert picked == {train.most_common(1)[0][0]} and len(sample["arguments"]) == 5


def instances(choices: list[str], doc_id: int = 0) -> list[Instance]:
    return [Instance("loglikelihood", {"q": "?"}, ("Question?\nAnswer:", f" {c}"), k, ("task", doc_id, 1))
            for k, c in enumerate(choices)]


def test_first_choice_and_empty_answers_per_request() -> None:
    requests = instances(["no", "yes"]) + instances(["no", "yes"], doc_id=1)
    first = ConstantLM(strategy="first").loglikelihood(requests)
    assert [ll for ll, _ in first] == [0.0, -1.0, 0.0, -1.0]
    assert ConstantLM(strategy="empty").loglikelihood(requests) == [(0.0, False)] * 4
    prompt = "Which?\nA. a car\nB. a bus\nC. a bike\nThe best answer is:"
    generate = [Instance("generate_until", {}, (prompt, {"until": ["\n"]}), 0, ("task", 0, 1)),
                Instance("generate_until", {}, ("Describe the scene.\nAnswer:", {"until": ["\n"]}), 0, ("task", 1, 1))]
    assert ConstantLM(strategy="first").generate_until(generate) == ["A", ""]
    assert ConstantLM(strategy="empty").generate_until(generate) == ["", ""]
    with pytest.raises(UserError, match="unknown strategy 'last'"):
        ConstantLM(strategy="last")


def test_random_answers_are_seeded_and_uniform_over_the_listed_options() -> None:
    prompt = "Which?\nA. a car\nB. a bus\nC. a bike\nD. none\nThe best answer is:"
    generate = [Instance("generate_until", {}, (prompt, {}), 0, ("task", k, 1)) for k in range(400)]
    answers = RandomLM(seed=3).generate_until(generate)
    assert answers == RandomLM(seed="3").generate_until(generate)
    assert set(answers) == {"A", "B", "C", "D"} and min(Counter(answers).values()) > 60
    words = RandomLM(seed=0).generate_until([Instance("generate_until", {}, ("Describe.", {}), 0, ("t", 0, 1))])[0]
    assert 1 <= len(words.split()) <= 8
    picks = Counter(max(range(4), key=lambda k, lls=lls: lls[k][0]) for lls in
                    (RandomLM(seed=s).loglikelihood(instances(list("abcd"))) for s in range(400)))
    assert set(picks) == {0, 1, 2, 3} and min(picks.values()) > 60
    assert RandomLM().loglikelihood_rolling([Instance("loglikelihood_rolling", {}, ("abcd",), 0)]) == \
        [pytest.approx(4 * -math.log(256))]


def test_listed_options_read_the_prompts_option_block() -> None:
    assert listed_options("Q\nA. Yes\nB. No\nThe best answer is:") == ["A", "B"]
    assert listed_options("Q\n(A) one\n(B) two\n(C) three") == ["A", "B", "C"]
    assert listed_options("A. single line only") == []
    assert listed_options("Write the catchline.\nCatchline:") == []


def test_every_task_declares_the_protocol_the_check_uses() -> None:
    assert {"locus_topic", "tar_mcq", "clovr_tracking_retrieval", "rolebench_unlearn_forget"} <= set(PROTOCOLS)
    assert not {"tar", "locus", "neurips26"} & set(PROTOCOLS)  # groups are not tasks
    for name, found in PROTOCOLS.items():
        assert found.protocol.baseline in ("majority", "chance") or isinstance(found.protocol.baseline, float), name


def test_wilson_interval() -> None:
    low, high = baselines.wilson(0.0, 34)
    assert low == 0.0 and high == pytest.approx(1.959964 ** 2 / (34 + 1.959964 ** 2))
    low, high = baselines.wilson(0.5, 100)
    assert (low, high) == (pytest.approx(0.4038, abs=1e-4), pytest.approx(0.5962, abs=1e-4))
    protocol = Protocol(split="test", metric="ppl", higher_is_better=False, baseline=10.0, range=(0.0, 100.0))
    low, high = baselines.interval(protocol, 10.0, 100)
    assert low == pytest.approx(100 * baselines.wilson(0.1, 100)[0])
