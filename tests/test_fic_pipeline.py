"""FiC end to end on a tiny random model (2 layers, the embedded tokenizer and chat template): `neurips26 fic eval`
through lm-eval's hf backend, and `neurips26 fic distill` (teacher generation, KL training, evaluation before and
after, the saved student). Scores of a random model are near 0; what is checked is the pipeline's contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from neurips26.corpora.fic import build as fic_build
from neurips26.methods.fic import distill as fic_distill
from neurips26.methods.fic.chatids import ChatIds
from neurips26.methods.fic.distill import DistillConfig, distill, student_messages, teacher_messages
from neurips26.methods.fic.protocol import task_name
from neurips26.methods.fic.simulator import SETTINGS
from typer.testing import CliRunner

from neurips26 import models
from neurips26.cli import app
from neurips26.results import read_run

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised 2-layer Llama with the embedded model's tokenizer, saved as a model folder."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(models.default_model_dir())
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=2048,
                         eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id)
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny") / "model"
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("data")
    fic_build.build(out=root / "fic")
    return root


def test_eval_runs_every_setting_and_writes_transcripts_runs_and_pau(tiny: Path, data: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    result = CliRunner().invoke(app, ["fic", "eval", "--model", "hf", "--model-args",
                                      f"pretrained={tiny},dtype=float32", "--tasks", "arithmetic,code",
                                      "--simulations", "2", "--limit", "2", "--max-gen-toks", "6", "--device", "cpu",
                                      "--data", str(data), "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    for task_type in ("arithmetic", "code"):
        records = [json.loads(line) for line in (out / f"transcripts_{task_type}.jsonl").open()]
        assert len(records) == 2 * len(SETTINGS) * 2  # instructions x settings x simulations
        for record in records:
            user_turns = [m for m in record["messages"] if m["role"] == "user"]
            if record["setting"] in ("full", "concat"):
                assert len(user_turns) <= 2  # the prompt, and at most the request for a final answer
            else:  # every shard went out, one per turn
                assert len(user_turns) >= record["shards"]
            assert 0.0 <= record["score"] <= 1.0
        for setting in SETTINGS:
            assert {"P", "A", "U", "P_ci"} <= set(summary[task_type][setting])
        run = read_run(next((out / task_type).glob("results_*.json")))
        task = run.tasks[task_name(task_type)]
        assert task.n_original == 2 and run.chat_applied
    assert (out / "pau.png").stat().st_size > 0
    assert "| arithmetic | sharded |" in result.output


def test_bad_settings_and_tasks_are_one_line_errors() -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["fic", "eval", "--settings", "full,shuffled"]).exit_code == 2
    assert runner.invoke(app, ["fic", "distill", "--tasks", "poetry"]).exit_code == 2
    for command in ("eval", "distill"):
        assert runner.invoke(app, ["fic", command, "--help"]).exit_code == 0


def test_views_differ_only_in_how_the_shards_arrive() -> None:
    row = {"shards": ["Intent.", "Detail one.", "Detail two."], "full_prompt": "Intent with both details."}
    teacher, student = teacher_messages(row), student_messages(row)
    assert len(teacher) == 1 and all(s in teacher[0]["content"] for s in row["shards"])
    assert teacher_messages(row, "full") == [{"role": "user", "content": row["full_prompt"]}]
    assert [m["content"] for m in student if m["role"] == "user"] == row["shards"]


@torch.no_grad()
def view_kl(student, teacher, tokenizer, rows: list[dict], responses: list[list[int]]) -> float:
    """Summed KL(teacher on the concatenated view || student on the multi-turn view) on the teacher's responses."""
    total = 0.0
    for row, response in zip(rows, responses, strict=True):
        s_ids = fic_distill.chat_ids(tokenizer, student_messages(row))
        t_ids = fic_distill.chat_ids(tokenizer, teacher_messages(row))
        s = fic_distill.response_logits(student, s_ids, response, "cpu")
        t = fic_distill.response_logits(teacher, t_ids, response, "cpu")
        total += float(fic_distill.kl_on_response(s, t))
    return total


def test_distillation_moves_the_student_toward_the_teacher(tiny: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny)
    rows = [{"shards": ["I need a quick calculation.", f"Start with {a}.", "Add 3.", "Answer with the number only."]}
            for a in (4, 7)]
    teacher = AutoModelForCausalLM.from_pretrained(tiny)
    responses = fic_distill.teacher_responses(teacher, ChatIds(tokenizer), rows, 6)
    for lora in (True, False):
        model = AutoModelForCausalLM.from_pretrained(tiny)
        before = view_kl(model, teacher, tokenizer, rows, responses)
        student, cost = distill(model, tokenizer, rows, DistillConfig(steps=12, lr=1e-2 if lora else 1e-3,
                                                                              lora=lora, max_new_tokens=6,
                                                                              on_policy=False),
                                "cpu")
        after = view_kl(student, teacher, tokenizer, rows, responses)
        assert after < before, f"lora={lora}: the KL to the teacher did not fall"
        assert cost.steps == 12 and cost.response_tokens > 0 and cost.trainable_params > 0
        assert (cost.trainable_params < 100_000) == lora  # LoRA trains adapters only


def test_distill_command_reports_recovery_and_saves_the_student(tiny: Path, data: Path, tmp_path: Path) -> None:
    out = tmp_path / "distill"
    result = CliRunner().invoke(app, ["fic", "distill", "--model-args", f"pretrained={tiny}", "--tasks", "arithmetic",
                                      "--train-limit", "4", "--steps", "3", "--max-new-tokens", "4",
                                      "--settings", "full,sharded", "--simulations", "2", "--limit", "2",
                                      "--max-gen-toks", "4", "--device", "cpu", "--data", str(data),
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "distill.json").read_text())
    row = report["outcome"]["arithmetic"]
    assert set(row) >= {"recovery", "P_full_before", "P_sharded_after", "full_change"}
    assert report["cost"]["steps"] == 3 and report["train_instructions"] == 4
    assert (out / "student" / "config.json").is_file() and (out / "pau_before_after.png").is_file()
    assert {p.name for p in (out / "before").iterdir()} >= {"summary.json", "transcripts_arithmetic.jsonl"}
