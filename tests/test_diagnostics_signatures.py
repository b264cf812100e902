"""Failure signatures: each detector fires on a samples file planted with its failure and not on a clean one."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from neurips26.methods.diagnostics import report
from neurips26.methods.diagnostics.signatures import SIGNATURES, language
from neurips26.methods.diagnostics.views import task_view
from typer.testing import CliRunner

from neurips26.cli import app
from neurips26.results import parse_run, parse_samples

YES_NO = ["yes", "no"] * 10
ENGLISH = ["The council shall meet on the first Monday of each month in the city hall.",
           "A permit is required for the construction of any fence that is taller than six feet."]
GERMAN = "Der Rat tritt am ersten Montag jedes Monats im Rathaus zusammen und ist nicht öffentlich."


def generation_run(responses: list[str], targets: list[str], *, max_gen_toks: int = 64, shots: int = 0,
                   prompts: list[str] | None = None) -> Any:
    rows = [{"doc_id": i, "doc": {"question": f"q{i}"}, "target": t,
             "arguments": {"gen_args_0": {"arg_0": (prompts or [f"Question {i}\nAnswer:"] * len(targets))[i],
                                          "arg_1": {"until": ["\n"], "max_gen_toks": max_gen_toks}}},
             "resps": [[r]], "filtered_resps": [r], "filter": "none", "metrics": ["exact_match"],
             "exact_match": float(r.strip().lower() == t.lower())}
            for i, (r, t) in enumerate(zip(responses, targets, strict=True))]
    return _run("gen", "generate_until", rows, {"generation_kwargs": {"until": ["\n"], "max_gen_toks": max_gen_toks},
                                                "num_fewshot": shots})


def choice_run(chosen: list[int], golds: list[int], choices: list[str] | None = None,
               norm_chosen: list[int] | None = None) -> Any:
    options = choices or ["alpha", "beta", "gamma", "delta"]
    rows = []
    for i, (c, g) in enumerate(zip(chosen, golds, strict=True)):
        lls = [-10.0] * len(options)
        lls[c] = -1.0
        if norm_chosen is not None and norm_chosen[i] != c:  # close behind in raw loglikelihood, ahead per character
            lls[norm_chosen[i]] = -1.05
        rows.append({"doc_id": i, "doc": {"q": i}, "target": g,
                     "arguments": {f"gen_args_{k}": {"arg_0": f"Q{i}\nAnswer:", "arg_1": f" {o}"}
                                   for k, o in enumerate(options)},
                     "resps": [[[str(ll), "False"]] for ll in lls],
                     "filtered_resps": [[str(ll), "False"] for ll in lls], "filter": "none", "metrics": ["acc"],
                     "acc": float(c == g)})
    return _run("mc", "multiple_choice", rows, {})


def _run(name: str, output_type: str, rows: list[dict], config: dict) -> Any:
    data = {"results": {name: {"alias": name, "acc,none": 0.5}}, "configs": {name: {
        "task": name, "output_type": output_type, "target_delimiter": " ", "fewshot_delimiter": "\n\n",
        "metadata": {"version": 1.0}, **config}}, "versions": {name: 1.0},
        "n-shot": {name: config.get("num_fewshot", 0)},
        "n-samples": {name: {"original": len(rows), "effective": len(rows)}}, "config": {"model": "hf"},
        "model_name": "planted"}
    samples = parse_samples("\n".join(json.dumps(r) for r in rows).encode(), f"samples_{name}.jsonl")
    return parse_run(data, {name: samples})


def finding(run: Any, signature: str) -> Any:
    return SIGNATURES.get(signature)(task_view(next(iter(run.tasks.values()))))


CASES = {
    "empty": (lambda: generation_run(["", *YES_NO[1:]], YES_NO), lambda: generation_run(YES_NO, YES_NO)),
    "truncated": (lambda: generation_run(["yes " * 20, *YES_NO[1:]], YES_NO, max_gen_toks=8),
                  lambda: generation_run(YES_NO, YES_NO, max_gen_toks=8)),
    "refusal": (lambda: generation_run(["I'm sorry, but I cannot help with that.", *YES_NO[1:]], YES_NO),
                lambda: generation_run(["I am sorry to hear it: yes", *YES_NO[1:]], YES_NO)),
    "unextractable": (lambda: generation_run(["maybe", *YES_NO[1:]], YES_NO), lambda: generation_run(YES_NO, YES_NO)),
    "label_bias": (lambda: generation_run(["yes"] * 20, YES_NO), lambda: generation_run(YES_NO, YES_NO)),
    "wrong_language": (lambda: generation_run([GERMAN, ENGLISH[1]], ENGLISH),
                       lambda: generation_run(ENGLISH[::-1], ENGLISH)),
    "position_bias": (lambda: choice_run([0] * 20, [i % 4 for i in range(20)]),
                      lambda: choice_run([i % 4 for i in range(20)], [i % 4 for i in range(20)])),
    "length_bias": (lambda: choice_run([0] * 20, [1] * 20, ["no", "a much longer option"], norm_chosen=[1] * 20),
                    lambda: choice_run([1] * 20, [1] * 20, ["no", "a much longer option"], norm_chosen=[1] * 20)),
    "fewshot_copy": (
        lambda: generation_run(["foo", "baz"], ["baz", "baz"], shots=2,
                               prompts=["Q: a\nA: foo\n\nQ: b\nA: bar\n\nQ: c\nA:"] * 2),
        lambda: generation_run(["baz", "baz"], ["baz", "baz"], shots=2,
                               prompts=["Q: a\nA: foo\n\nQ: b\nA: bar\n\nQ: c\nA:"] * 2)),
}


def test_every_registered_signature_has_a_planted_case() -> None:
    assert set(SIGNATURES.names()) == set(CASES)


@pytest.mark.parametrize("signature", sorted(CASES))
def test_detector_fires_on_its_planted_failure_and_not_on_a_clean_run(signature: str) -> None:
    planted, clean = CASES[signature]
    found = finding(planted(), signature)
    assert found is not None and found.fires, found
    assert found.count >= 1 and 0 <= found.interval()[0] <= found.rate <= found.interval()[1] <= 1
    quiet = finding(clean(), signature)
    assert quiet is not None and not quiet.fires, quiet


def test_signatures_that_do_not_apply_say_so() -> None:
    free_text = generation_run(["a heading", "another"], ["Fences", "Noise"])  # no label set, no options
    assert finding(free_text, "position_bias") is None and finding(free_text, "label_bias") is None
    assert finding(free_text, "fewshot_copy") is None  # zero-shot
    assert finding(choice_run([0, 1], [0, 1]), "empty") is None
    lettered = choice_run([0] * 20, [i % 4 for i in range(20)], ["A", "B", "C", "D"])
    assert finding(lettered, "label_bias") is None and finding(lettered, "position_bias").fires


def test_language_guess() -> None:
    assert language(ENGLISH[0]) == "en" and language(GERMAN) == "de"
    assert language("角色扮演的回答应当保持角色的语气和知识。") == "zh" and language("ok") is None


def test_report_counts_intervals_and_comparison(tmp_path: Path) -> None:
    rows = report.diagnose(generation_run(["yes"] * 20, YES_NO))
    bias = next(r for r in rows if r["signature"] == "label_bias")
    assert bias["fires"] and bias["count"] == 10 and bias["n"] == 20 and bias["intervention"] == "data"
    assert bias["examples"][0]["answer"] == "yes" and bias["examples"][0]["target"] == "no"
    clean = report.diagnose(generation_run(YES_NO, YES_NO))
    diff = next(r for r in report.compare(rows, clean) if r["signature"] == "label_bias")
    assert diff["difference"] == pytest.approx(0.5) and diff["significant"] and diff["low"] > 0
    assert math.isclose(diff["a"], 0.5) and diff["b"] == 0
    assert report.plot(rows, tmp_path / "bars.png").stat().st_size > 1000


def test_cli_prints_and_writes_the_table_beside_the_results(tmp_path: Path) -> None:
    for name, run in (("a", generation_run(["yes"] * 20, YES_NO)), ("b", generation_run(YES_NO, YES_NO))):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "results_2026-12-01T00-00-00.000000.json").write_text(json.dumps(run.raw))
        task = run.tasks["gen"]
        with (folder / "samples_gen_2026-12-01T00-00-00.000000.jsonl").open("w") as out:
            for s in task.samples:
                out.write(json.dumps({"doc_id": s.doc_id, "doc": s.doc, "target": s.target, "arguments": s.arguments,
                                      "resps": s.resps, "filtered_resps": s.filtered_resps, "filter": "none",
                                      "exact_match": s.values["exact_match"]}) + "\n")
    result = CliRunner().invoke(app, ["diagnose", str(tmp_path / "a"), "--format", "json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert [r["signature"] for r in shown] == ["label_bias"]
    written = json.loads((tmp_path / "a" / "signatures_2026-12-01T00-00-00.000000.json").read_text())
    assert written["model"] == "planted" and {r["signature"] for r in written["signatures"]} >= {"label_bias", "empty"}
    result = CliRunner().invoke(app, ["diagnose", str(tmp_path / "a"), "--against", str(tmp_path / "b"),
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["signature"] == "label_bias"
    result = CliRunner().invoke(app, ["diagnose", str(tmp_path / "nothing")])
    assert result.exit_code == 2 and "nothing not found" in result.output
