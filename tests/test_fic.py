"""FiC: the user simulator's reveal order, P/A/U against hand computation, the code sandbox, answer scoring and
the leaderboard (a standard run is ranked on the fic board, a changed one is not)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from neurips26.corpora.fic import sources
from neurips26.methods.fic import pau, report, scoring
from neurips26.methods.fic.evaluate import answer_of
from neurips26.methods.fic.protocol import PROTOCOLS_BY_TYPE, standard_settings, task_name
from neurips26.methods.fic.sandbox import run_python
from neurips26.methods.fic.simulator import FINAL_ASK, SETTINGS, UserSimulator

SHARDS = ["SHARD-A intent", "SHARD-B detail", "SHARD-C detail", "SHARD-D format"]
INSTRUCTION = {"task_id": "t1", "task_type": "arithmetic", "shards": SHARDS, "full_prompt": "FULL PROMPT",
               "reference": "12", "entry_point": ""}


def play(setting: str, replies: list[str]) -> list[str]:
    """The user messages of a conversation whose assistant says ``replies`` in turn (then 'ok')."""
    user = UserSimulator(answer_of)
    conversation = user.start(INSTRUCTION, setting)
    replies = iter(replies)
    while not conversation.done:
        user.reply(conversation, next(replies, "ok"))
    return [m["content"] for m in conversation.messages if m["role"] == "user"]


@pytest.mark.parametrize("setting", ["sharded", "recap", "snowball"])
def test_simulator_reveals_shards_in_order_and_never_a_later_one(setting: str) -> None:
    # whatever the assistant does (asks, answers early, stalls), turn k holds shard k and nothing later
    messages = play(setting, ["What do you mean?", "The answer is 3.", "hmm"])
    for k, message in enumerate(messages[:len(SHARDS)]):
        assert SHARDS[k] in message
        assert not any(later in message for later in SHARDS[k + 1:]), (k, message)
        if setting == "snowball":
            assert all(earlier in message for earlier in SHARDS[:k])
        else:
            assert not any(earlier in message for earlier in SHARDS[:k])
    tail = messages[len(SHARDS):]
    if setting == "recap":
        assert all(shard in tail[0] for shard in SHARDS)
    # the last reply "ok" holds no answer: the simulator asks once for it, then ends
    assert tail[-1] == FINAL_ASK and len(tail) == (2 if setting == "recap" else 1)


def test_single_turn_settings_and_the_final_answer() -> None:
    assert play("full", ["It is 12."]) == ["FULL PROMPT"]
    concat = play("concat", ["12"])
    assert len(concat) == 1 and all(shard in concat[0] for shard in SHARDS)
    user = UserSimulator(answer_of)
    conversation = user.start(INSTRUCTION, "sharded")
    for reply in ["Is it 5?", "Maybe 7.", "I think 12.", "Sorry, 13."]:
        user.reply(conversation, reply)
    assert conversation.done and conversation.answer == "13"  # the last answer attempt counts
    assert [t["kind"] for t in conversation.turns] == ["answer", "answer", "answer", "answer"]
    with pytest.raises(ValueError, match="unknown setting"):
        user.start(INSTRUCTION, "shuffled")
    assert set(SETTINGS) == {"full", "concat", "sharded", "recap", "snowball"}


def test_pau_match_hand_computation() -> None:
    scores = {"i1": [0.0, 0.2, 0.4, 1.0, 0.6], "i2": [1.0, 1.0, 1.0]}
    # i1 sorted 0, .2, .4, .6, 1: 90th pct at rank 3.6 -> .6 + .6 * .4 = .84; 10th at rank .4 -> .08
    assert pau.performance(scores["i1"]) == pytest.approx(0.44)
    assert pau.aptitude(scores["i1"]) == pytest.approx(0.84)
    assert pau.unreliability(scores["i1"]) == pytest.approx(0.76)
    summary = pau.summarise(scores)
    assert summary["P"] == pytest.approx((0.44 + 1.0) / 2)
    assert summary["A"] == pytest.approx((0.84 + 1.0) / 2)
    assert summary["U"] == pytest.approx((0.76 + 0.0) / 2)
    assert summary["P_ci"][0] <= summary["P"] <= summary["P_ci"][1]
    full = {"i1": [1.0, 1.0], "i2": [1.0, 0.0]}  # P_full .75; sharded .72 -> (.75 - .72) / .75 = .04
    assert pau.degradation(full, scores)["degradation"] == pytest.approx(0.04)
    assert pau.recovery(p_full=0.8, sharded_before=0.4, sharded_after=0.5) == pytest.approx(0.25)
    assert pau.recovery(p_full=0.4, sharded_before=0.4, sharded_after=0.5) is None


def test_sandbox_refuses_writes_outside_its_folder_and_kills_an_infinite_loop(tmp_path: Path) -> None:
    target = tmp_path / "outside.txt"
    keep = tmp_path / "keep.txt"
    keep.write_text("mine")
    hostile = [f"open({str(target)!r}, 'w').write('x')",
               f"import os; os.remove({str(keep)!r})",
               f"import pathlib; pathlib.Path({str(target)!r}).touch()",
               f"import shutil; shutil.rmtree({str(tmp_path)!r})",
               f"import subprocess; subprocess.run(['touch', {str(target)!r}])",
               "import socket; socket.socket().connect(('127.0.0.1', 9))"]
    for program in hostile:
        outcome = run_python(program)
        assert not outcome.passed and "sandbox:" in outcome.stderr, program
    assert not target.exists() and keep.read_text() == "mine"
    assert run_python("open('scratch.txt', 'w').write('inside is fine')\nassert open('scratch.txt').read()").passed
    assert run_python("while True:\n    pass", timeout=1.0).status == "timeout"
    assert run_python("x = bytearray(2**31)", memory_mb=256).status == "failed"


def test_answers_are_extracted_and_scored_per_task_type() -> None:
    problem = next(p for p in sources.read_humaneval() if p["task_id"] == "HumanEval/0")
    [code_row], _, _ = sources.humaneval([problem])
    solution = problem["prompt"] + problem["canonical_solution"]
    answer = answer_of(code_row, f"Here you go:\n```python\n{solution}\n```")
    assert scoring.score(code_row, answer) == 1.0
    wrong = answer_of(code_row, "```python\ndef has_close_elements(numbers, threshold):\n    return True\n```")
    assert scoring.score(code_row, wrong) == 0.0
    assert answer_of(code_row, "Could you tell me more?") is None and scoring.score(code_row, None) == 0.0
    arithmetic = {"task_type": "arithmetic", "reference": "-3", "entry_point": ""}
    assert scoring.score(arithmetic, answer_of(arithmetic, "5 - 8 = -3")) == 1.0
    assert scoring.score(arithmetic, answer_of(arithmetic, "It is 3.")) == 0.0
    translation = {"task_type": "translation", "reference": "The cat sat on the mat today.", "entry_point": ""}
    assert scoring.score(translation, answer_of(translation, "Translation: The cat sat on the mat today.")) == 1.0
    assert scoring.score(translation, answer_of(translation, "A dog ran.")) < 0.1


def synthetic_scores(rows: list[dict], settings: dict, seed: int) -> tuple[dict, list[dict]]:
    """Per-simulation scores of a model that is right with probability .8 in one turn and .5 over turns."""
    rng = random.Random(seed)
    scores, records = {}, []
    for setting in settings["settings"]:
        p = 0.8 if setting in ("full", "concat") else 0.5
        for row in rows:
            for k in range(settings["simulations"]):
                value = float(rng.random() < p)
                scores.setdefault(setting, {}).setdefault(row["task_id"], []).append(value)
                records.append({"task_id": row["task_id"], "setting": setting, "simulation": k,
                                "answer": row["reference"] if value else "0"})
    return scores, records


def test_a_run_is_ranked_on_its_own_board_and_a_changed_one_is_not(tmp_path: Path) -> None:
    """Runs written by the evaluator are recomputed from their samples: the standard protocol is VALID on the fic
    board, fewer simulations are UNRANKED with the reason."""
    from neurips26.leaderboard.store import Store

    task = task_name("arithmetic")
    rows = sources.assign_splits(sources.generated_arithmetic(), sources.ARITHMETIC_TEST)["test"]
    store = Store(tmp_path / "lb")
    assert store.tasks[task].source == "registered" and store.tasks[task].group == "fic"
    data = {"resource": "fic", "config": "arithmetic", "version": "1.0.0", "manifest_sha256": "0" * 64, "demo": False}
    entries, results = {}, {}
    for label, settings in (("standard", standard_settings("arithmetic")),
                            ("n3", {**standard_settings("arithmetic"), "simulations": 3})):
        scores, records = synthetic_scores(rows, settings, seed=len(label))
        results[label] = report.write_run(tmp_path / label, "arithmetic", rows, records, scores,
                                          model_name=f"synthetic-{label}", model_args={"p": 0.5}, data=data,
                                          settings=settings, chat_template="{{ messages }}")
        meta = {"model_id": f"org/synthetic-{label}", "revision": "0" * 40, "precision": "float32", "params": 1,
                "license": "apache-2.0", "model_type": "pretrained", "submitter": "alice"}
        entries[label] = store.submit(results[label], meta, sorted((tmp_path / label).glob("samples_*.jsonl")))
    assert entries["standard"].status == "VALID", entries["standard"].reason
    assert entries["n3"].status == "UNRANKED" and "simulations=3" in entries["n3"].reason
    board = {r["metric"]: r for r in store.scores().to_pylist() if r["submission_id"] == entries["standard"].id}
    recorded = json.loads(results["standard"].read_text())
    main = board["fic_p_sharded"]
    assert main["task"] == task and main["n"] == PROTOCOLS_BY_TYPE["arithmetic"].size
    for setting in SETTINGS:  # every P, A and U recomputed from the samples agrees with the run's summary
        for letter in "pau":
            assert board[f"fic_{letter}_{setting}"]["value"] == pytest.approx(
                recorded["fic"][setting][letter.upper()]), (setting, letter)
    assert board["fic_p_sharded"]["value"] == pytest.approx(recorded["results"][task]["fic_p_sharded,none"])
