"""Task protocols, the results reader and the ways a leaderboard could be gamed, on real lm-eval runs.

One real run of the embedded model with ``--limit 2`` on the demo build (the task loader records the demo data as
its provenance). A complete run is derived from it: its ``locus_domain`` part with the limit removed (a split of the
2 documents evaluated) and the data provenance of released data. Every other submission is derived from these two.
(A complete run of the embedded model on a real split takes minutes on CPU.)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer
from neurips26.corpora.locus.build import build as build_locus
from neurips26.leaderboard import ranking, recompute
from neurips26.leaderboard.catalog import read_tasks
from neurips26.leaderboard.cli import leaderboard as leaderboard_command
from neurips26.leaderboard.metrics import METRICS
from neurips26.leaderboard.store import Store
from neurips26.tasks import evaluation
from neurips26.tasks.protocol import (
    PAGE,
    TABLE_END,
    TABLE_START,
    Protocol,
    ProtocolError,
    baseline_value,
    deviations,
    normalise,
    page_table,
    protocols_table,
    read_protocols,
    shipped_protocols,
    update_page,
)
from neurips26.tasks.protocol import (
    PROTOCOLS as REGISTERED,
)
from typer.testing import CliRunner

from neurips26.errors import UnknownNameError, UserError
from neurips26.results import model_args, parse_run, parse_samples, read_run, responses_digest, summarise
from tests.board_fixtures import PROTOCOLS, dump, meta, protocol_tasks, split_size, variant

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real ``--limit 2`` run of two tasks, and a complete run of locus_domain with data provenance derived
    from it."""
    root = tmp_path_factory.mktemp("board_runs")
    build_locus(out=root / "data" / "locus")
    manifest = hashlib.sha256((root / "data" / "locus" / "manifest.json").read_bytes()).hexdigest()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("NEURIPS26_DATA", str(root / "data"))
        limited = evaluation.run(["locus_catchline", "locus_domain"], limit=2, output=root / "limited",
                                 data=root / "data")
    data = json.loads(limited.results_file.read_text())
    for key in ("results", "configs", "versions", "n-shot", "n-samples", "higher_is_better", "task_hashes"):
        data[key] = {k: v for k, v in data.get(key, {}).items() if k == "locus_domain"}
    data["group_subtasks"] = {}
    data["config"]["limit"] = None
    data["n-samples"]["locus_domain"] = {"original": 2, "effective": 2}
    data["configs"]["locus_domain"]["metadata"]["data"] = {
        **data["configs"]["locus_domain"]["metadata"]["data"], "manifest_sha256": manifest, "demo": False}
    domain = next(p for p in limited.samples_files if p.name.startswith("samples_locus_domain_"))
    results, samples = write_run(root / "full", data, {"locus_domain": rows_of(domain)})
    full = SimpleNamespace(results=data, results_file=results, samples_files=samples)
    return {"limited": limited, "full": full, "root": root}


@pytest.fixture(autouse=True)
def no_built_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No built folder where the board looks for the data a run read (tests that need one set it)."""
    monkeypatch.setenv("NEURIPS26_DATA", str(tmp_path / "no-data"))


@pytest.fixture(scope="module")
def board_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return protocol_tasks(tmp_path_factory.mktemp("board_tasks"))


def files(run: Any) -> tuple[Path, list[Path]]:
    return run.results_file, list(run.samples_files)


def write_run(folder: Path, data: dict[str, Any], samples: dict[str, list[dict[str, Any]]]) -> tuple[Path, list[Path]]:
    """A results file and samples files as lm-eval names them, from edited contents."""
    folder.mkdir(parents=True, exist_ok=True)
    results = folder / "results_2026-01-01T00-00-00.000000.json"
    results.write_bytes(dump(data))
    paths = []
    for task, rows in samples.items():
        path = folder / f"samples_{task}_2026-01-01T00-00-00.000000.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        paths.append(path)
    return results, paths


def submit(store: Store, run_files: tuple[Path, list[Path]], info: dict[str, Any]) -> Any:
    results, samples = run_files
    return store.submit(results, info, samples)


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- protocols ---------------------------------------------------------------------------------------------------


def test_protocols_are_read_from_the_task_yamls(board_tasks: Path, tmp_path: Path) -> None:
    found, missing = read_protocols(board_tasks)
    assert found["locus_domain"].protocol.metric == "acc" and found["locus_domain"].group == "locus"
    assert found["locus_catchline"].protocol.baseline == 0.0 and not missing
    bare = protocol_tasks(tmp_path / "bare", protocols={})
    with pytest.raises(ProtocolError, match=r"locus_catchline.yaml \(task locus_catchline\): no metadata.protocol"):
        read_protocols(bare)
    assert set(read_protocols(bare, strict=False)[1]) >= {"locus_domain", "locus_catchline"}
    with pytest.raises(ProtocolError, match="range"):
        read_protocols(protocol_tasks(tmp_path / "bad", protocols={
            "locus_domain": {**PROTOCOLS["locus_domain"], "range": [1, 0]}}))
    # a task without a protocol cannot be submitted: the reason names the YAML
    store = Store(tmp_path / "lb", tasks_dir=bare)
    assert "no metadata.protocol" in (store.tasks["locus_domain"].problem or "")


def test_registered_protocols_join_the_yaml_ones(board_tasks: Path) -> None:
    protocol = Protocol(split="test", metric="score", baseline=0.25, range=(0, 1))
    REGISTERED.register("frame_qa_test", group="frameselect")(protocol)
    try:
        found, _ = read_protocols(board_tasks)
    finally:  # the registry is global: leave it as the package defines it
        del REGISTERED._items["frame_qa_test"], REGISTERED._info["frame_qa_test"]
    assert found["frame_qa_test"].protocol is protocol and found["frame_qa_test"].source == "registered"
    assert "| `frame_qa_test` | test (all) | 0 | no | score | higher is better | 0.25 | [0, 1] |" in \
        protocols_table(found)


def test_the_leaderboard_page_protocols_table_is_generated_from_the_yamls() -> None:
    text = (ROOT / PAGE).read_text(encoding="utf-8")
    assert page_table(text) == protocols_table(shipped_protocols()), f"run python -m neurips26.tasks.protocol {PAGE}"


def test_update_page_replaces_the_table_between_the_markers_and_refuses_a_page_without_them() -> None:
    page = f"# page\n\n{TABLE_START}\nold\n{TABLE_END}\n\nafter\n"
    updated = update_page(page)
    assert page_table(updated) == protocols_table(shipped_protocols()) and updated.endswith(f"{TABLE_END}\n\nafter\n")
    assert update_page(updated) == updated
    with pytest.raises(ProtocolError, match="markers"):
        update_page("# a page without the markers\n")


def test_normalise_mirrors_lower_is_better() -> None:
    up = Protocol(split="test", metric="acc", baseline=0.25, range=(0, 1))
    assert normalise(0.25, up, 0.25) == 0 and normalise(1.0, up, 0.25) == 1
    assert math.isclose(normalise(0.625, up, 0.25), 0.5) and normalise(0.0, up, 0.25) == 0
    down = Protocol(split="test", metric="ppl", higher_is_better=False, baseline=40.0, range=(1, 100))
    assert normalise(1.0, down, 40.0) == 1 and normalise(40.0, down, 40.0) == 0
    assert math.isclose(normalise(20.5, down, 40.0), 0.5)


# -- the results reader ------------------------------------------------------------------------------------------


def test_read_run_reads_results_and_samples(runs: dict[str, Any]) -> None:
    limited = runs["limited"]
    run = read_run(limited.results_file.parent)
    assert set(run.tasks) == {"locus_catchline", "locus_domain"} and run.limit == 2
    domain = run.tasks["locus_domain"]
    test_docs = split_size(runs["root"] / "data" / "locus", "domain")
    assert (domain.n_original, domain.n_effective, domain.num_fewshot) == (test_docs, 2, 0)
    assert len(domain.samples) == 2 and domain.samples[0].doc_hash and domain.task_hash
    assert domain.value("acc") == limited.results["results"]["locus_domain"]["acc,none"]
    # a chat model: its own template by default
    assert run.model_args["pretrained"].endswith("SmolLM2-135M-Instruct") and run.chat_applied
    assert {(r["task"], r["metric"]) for r in summarise(run)} >= {("locus_domain", "acc"),
                                                                  ("locus_catchline", "rougeL")}
    assert responses_digest(run) == responses_digest(read_run(limited.results_file))
    assert responses_digest(parse_run(json.loads(limited.results_file.read_text()))) is None  # no samples
    assert model_args("pretrained=a/b,dtype=float32") == model_args({"pretrained": "a/b", "dtype": "float32"})
    with pytest.raises(UserError, match="no lm-eval results file"):
        read_run(runs["root"] / "data")


# -- gaming vectors ---------------------------------------------------------------------------------------------


def test_a_limited_run_is_stored_unranked_with_the_reason(runs: dict[str, Any], board_tasks: Path,
                                                          tmp_path: Path) -> None:
    store = Store(tmp_path / "lb", tasks_dir=board_tasks)
    results, samples = files(runs["limited"])
    entry = store.submit(results, meta(runs["limited"].results), samples)
    assert entry.status == "UNRANKED"
    built = runs["root"] / "data" / "locus"
    for task in ("locus_domain", "locus_catchline"):
        n = split_size(built, task.removeprefix("locus_"))
        assert f"{task}: run with --limit 2, 2 of the {n} documents evaluated" in entry.reason
    assert "run on the demo sample" in entry.reason  # the provenance the task loader recorded
    assert store.scores().num_rows == 0 and ranking.leaderboard(store, task="locus_domain").num_rows == 0
    shown = store.submission_scores(entry.id).to_pylist()  # the model page still shows the scores
    reported = {(task, key.split(",")[0]) for task, values in runs["limited"].results["results"].items()
                for key in values if key.endswith(",none") and not key.split(",")[0].endswith("_stderr")}
    assert {("locus_domain", "acc"), ("locus_catchline", "rougeL")} <= reported
    assert {(r["task"], r["metric"]) for r in shown} == reported


def test_a_full_run_is_ranked_but_a_single_task_stays_out_of_overall(runs: dict[str, Any], board_tasks: Path,
                                                                    tmp_path: Path) -> None:
    store = Store(tmp_path / "lb", tasks_dir=board_tasks)
    results, samples = files(runs["full"])
    entry = store.submit(results, meta(runs["full"].results), samples)
    assert entry.status == "VALID", entry.reason
    board = ranking.leaderboard(store, task="locus_domain").to_pylist()
    acc = runs["full"].results["results"]["locus_domain"]["acc,none"]
    assert [(r["submission_id"], r["n"]) for r in board] == [(entry.id, 2)] and math.isclose(board[0]["score"], acc)
    # locus = domain + catchline: a submission without catchline is not ranked overall
    assert ranking.leaderboard(store).num_rows == 0 and ranking.leaderboard(store, group="locus").num_rows == 0
    # with domain alone in scope it is, normalised between the majority baseline and 1
    alone = Store(tmp_path / "alone", tasks_dir=protocol_tasks(tmp_path / "alone_tasks",
                                                                 groups={"locus": ["locus_domain"]}))
    assert alone.submit(results, meta(runs["full"].results), samples).status == "VALID"
    labels = Counter(row["target"] for row in rows_of(samples[0]))
    majority = labels.most_common(1)[0][1] / 2
    overall = ranking.leaderboard(alone).to_pylist()
    assert len(overall) == 1 and math.isclose(overall[0]["score"], (acc - majority) / (1 - majority))
    assert overall[0]["n_tasks"] == 1


def test_the_board_normalises_with_the_recorded_measured_baseline(runs: dict[str, Any], tmp_path: Path) -> None:
    measured = {"answerer": "random", "scores": {"constant": 0.05, "random": 0.1}, "n": 2, "seeds": 5, "data": "x"}
    protocol = {**PROTOCOLS["locus_domain"], "baseline": 0.1, "baseline_from": measured}
    tasks = protocol_tasks(tmp_path / "tasks", groups={"locus": ["locus_domain"]}, protocols={"locus_domain": protocol})
    found = read_protocols(tasks)[0]
    assert found["locus_domain"].protocol.baseline_from.answerer == "random"
    assert "| acc | higher is better | 0.1 (random) | [0, 1] |" in protocols_table(found)
    store = Store(tmp_path / "lb", tasks_dir=tasks)
    results, samples = files(runs["full"])
    assert store.submit(results, meta(runs["full"].results), samples).status == "VALID"
    acc = runs["full"].results["results"]["locus_domain"]["acc,none"]
    overall = ranking.leaderboard(store).to_pylist()
    assert len(overall) == 1 and math.isclose(overall[0]["score"], max(0.0, (acc - 0.1) / 0.9))


def test_a_task_whose_baseline_reaches_its_best_adds_nothing_and_keeps_the_interval_finite(
        runs: dict[str, Any], tmp_path: Path) -> None:
    # a majority baseline over a tiny split can be the best score (every target the same label): no room above it
    protocol = {**PROTOCOLS["locus_domain"], "baseline": 1.0}
    tasks = protocol_tasks(tmp_path / "tasks", groups={"locus": ["locus_domain"]}, protocols={"locus_domain": protocol})
    store = Store(tmp_path / "lb", tasks_dir=tasks)
    results, samples = files(runs["full"])
    assert store.submit(results, meta(runs["full"].results), samples).status == "VALID"
    [row] = ranking.leaderboard(store).to_pylist()
    assert (row["score"], row["ci_low"], row["ci_high"]) == (0.0, 0.0, 0.0)


def test_a_run_on_the_demo_sample_is_unranked(runs: dict[str, Any], board_tasks: Path, tmp_path: Path) -> None:
    data = json.loads(runs["full"].results_file.read_text())
    data["configs"]["locus_domain"]["metadata"]["data"]["demo"] = True
    results, samples = write_run(tmp_path / "demo", data, {"locus_domain": rows_of(runs["full"].samples_files[0])})
    entry = Store(tmp_path / "lb", tasks_dir=board_tasks).submit(results, meta(data), samples)
    assert entry.status == "UNRANKED" and "run on the demo sample" in entry.reason


@pytest.mark.parametrize("edit, reason", [
    (lambda d: d["n-shot"].update(locus_domain=5), "5-shot instead of 0-shot"),
    (lambda d: d.update(chat_template=None, chat_template_sha=None), "chat template not applied"),
    (lambda d: d["configs"]["locus_domain"]["metadata"].update(selector="dpp"), "task setting selector='dpp'"),
    (lambda d: d["configs"]["locus_domain"].update(test_split="validation"), "split 'validation' instead of"),
])
def test_other_settings_than_the_protocol_are_unranked(runs: dict[str, Any], board_tasks: Path, edit: Any,
                                                       reason: str) -> None:
    data = json.loads(runs["full"].results_file.read_text())
    edit(data)
    spec = read_tasks(board_tasks)["locus_domain"]
    run = parse_run(data)
    assert any(reason in why for why in deviations(run, run.tasks["locus_domain"], spec.protocol))


def test_hand_edited_results_are_rejected(runs: dict[str, Any], board_tasks: Path, tmp_path: Path) -> None:
    data = json.loads(runs["full"].results_file.read_text())
    rows = rows_of(runs["full"].samples_files[0])
    raised = variant(data)
    raised["results"]["locus_domain"]["acc,none"] = 0.0 if data["results"]["locus_domain"]["acc,none"] else 1.0
    store = Store(tmp_path / "lb", tasks_dir=board_tasks)
    entry = submit(store, write_run(tmp_path / "a", raised, {"locus_domain": rows}), meta(data))
    assert entry.status == "REJECTED" and "recomputed from the samples" in entry.reason
    # a per-document score edited to 1 where the responses say 0
    edited = [dict(row) for row in rows]
    edited[0]["acc"] = 1.0 - edited[0]["acc"]
    entry = submit(store, write_run(tmp_path / "b", variant(data, 1), {"locus_domain": edited}), meta(data))
    assert entry.status == "REJECTED"
    assert f"recorded {edited[0]['acc']}, but the document's responses score" in entry.reason


def test_a_copied_run_under_another_name_is_rejected(runs: dict[str, Any], board_tasks: Path,
                                                     tmp_path: Path) -> None:
    store = Store(tmp_path / "lb", tasks_dir=board_tasks)
    results, samples = files(runs["full"])
    first = store.submit(results, meta(runs["full"].results), samples)
    assert first.status == "VALID"
    data = variant(json.loads(results.read_text()), 1)  # rewritten: another date
    copy = submit(store, write_run(tmp_path / "copy", data, {"locus_domain": rows_of(samples[0])}),
                  meta(data, model_id="org/copycat"))
    assert copy.status == "REJECTED" and f"same responses to the same documents as submission #{first.id}" \
        in copy.reason


def test_targets_must_match_the_gold_of_the_first_ranked_run(runs: dict[str, Any], board_tasks: Path,
                                                             tmp_path: Path) -> None:
    store = Store(tmp_path / "lb", tasks_dir=board_tasks)
    results, samples = files(runs["full"])
    assert store.submit(results, meta(runs["full"].results), samples).status == "VALID"
    data = json.loads(results.read_text())
    spec = read_tasks(board_tasks)["locus_domain"]
    rows = rows_of(samples[0])
    for row in rows:  # other responses (so not a copy), the same choices
        row["filtered_resps"] = [[str(float(ll) - 0.5), flag] for ll, flag in row["filtered_resps"]]
    moved = (int(rows[0]["target"]) + 1) % len(rows[0]["filtered_resps"])  # a moved gold label
    rows[0]["target"], rows[0]["doc"]["label"] = str(moved), moved
    parsed = parse_samples("".join(json.dumps(r) + "\n" for r in rows).encode())
    for row, sample in zip(rows, parsed, strict=True):  # per-document values and scores kept consistent
        row.update(json.loads(json.dumps(recompute.recompute_document(spec, sample, data["configs"]["locus_domain"]))))
    assert set(spec.metrics) <= set(rows[0]) and rows[0]["acc"] != rows_of(samples[0])[0]["acc"]
    for metric, rng in spec.metrics.items():
        data["results"]["locus_domain"][f"{metric},none"] = rng.combine([r[metric] for r in rows])
    entry = submit(store, write_run(tmp_path / "moved", variant(data, 1), {"locus_domain": rows}),
                         meta(data, model_id="org/moved"))
    assert entry.status == "REJECTED" and "differ from the gold targets (doc_id 0)" in entry.reason
    fewer = submit(store, write_run(tmp_path / "fewer", variant(data, 2), {"locus_domain": rows[1:]}),
                         meta(data, model_id="org/fewer"))
    assert fewer.status == "REJECTED"


def test_unknown_metrics_are_errors_not_infinite_ranges(tmp_path: Path, runs: dict[str, Any]) -> None:
    with pytest.raises(UnknownNameError, match="unknown metric 'brier'"):
        METRICS.info("brier")
    tasks = protocol_tasks(tmp_path / "tasks")
    path = tasks / "locus_domain.yaml"
    text = path.read_text()
    other = next(m for m in re.findall(r"^  - metric: (\w+)$", text, re.M) if m != PROTOCOLS["locus_domain"]["metric"])
    path.write_text(text.replace(f"  - metric: {other}\n", "  - metric: brier\n"))
    spec = read_tasks(tasks)["locus_domain"]
    assert "metric brier: unknown metric 'brier'" in spec.problem
    entry = submit(Store(tmp_path / "lb", tasks_dir=tasks), files(runs["full"]), meta(runs["full"].results))
    assert entry.status == "REJECTED" and "tasks.locus_domain: cannot be ranked" in entry.reason


def test_every_metric_and_protocol_entry_is_documented() -> None:
    for registry in (METRICS, REGISTERED):
        for name, item in registry.items():
            assert (item.__doc__ or "").strip(), f"{registry.kind} {name} has no docstring"


def test_rolebench_is_kept_out_of_overall_with_the_reason(board_tasks: Path) -> None:
    tasks = read_tasks(board_tasks)
    tasks["rolebench_unlearn_retain"] = dataclasses.replace(tasks["locus_domain"], name="rolebench_unlearn_retain",
                                                            group="rolebench_unlearn")
    out = ranking.left_out(tasks, sorted(tasks))
    assert list(out) == ["rolebench_unlearn_retain"] and "combined score" in out["rolebench_unlearn_retain"]
    assert ranking.overall_tasks(tasks, sorted(tasks)) == ["locus_catchline", "locus_domain"]
    # on its own board (its group's), it is ranked by its protocol
    assert ranking.overall_tasks(tasks, ["rolebench_unlearn_retain"], "rolebench_unlearn") == [
        "rolebench_unlearn_retain"]
    assert ranking.left_out(tasks, ["rolebench_unlearn_retain"], "rolebench_unlearn") == {}


def test_a_task_its_protocol_does_not_rank_is_never_on_a_board(board_tasks: Path, tmp_path: Path) -> None:
    """The shipped forget task: an empty answer wins forget_rougeL, so its protocol says ``ranked: false``."""
    shipped = read_protocols()[0]["rolebench_unlearn_forget"].protocol
    assert not shipped.ranked and "empty" in shipped.note
    tasks = read_tasks(board_tasks)
    tasks["rolebench_unlearn_forget"] = dataclasses.replace(
        tasks["locus_domain"], name="rolebench_unlearn_forget", group="rolebench_unlearn", protocol=shipped)
    for group in (None, "rolebench_unlearn"):
        assert "rolebench_unlearn_forget" not in ranking.overall_tasks(tasks, sorted(tasks), group)
        assert ranking.left_out(tasks, ["rolebench_unlearn_forget"], group)["rolebench_unlearn_forget"]
    store = Store(tmp_path / "store", tasks_dir=board_tasks)
    store.tasks["rolebench_unlearn_forget"] = tasks["rolebench_unlearn_forget"]
    assert ranking.leaderboard(store, task="rolebench_unlearn_forget").num_rows == 0


def test_majority_and_chance_baselines(runs: dict[str, Any]) -> None:
    run = read_run(runs["full"].results_file)
    samples = run.tasks["locus_domain"].samples
    majority = Protocol(split="test", metric="acc", baseline="majority", range=(0, 1))
    chance = Protocol(split="test", metric="acc", baseline="chance", range=(0, 1))
    counts = Counter(s.target for s in samples)
    assert baseline_value(majority, samples) == counts.most_common(1)[0][1] / len(samples)
    assert math.isclose(baseline_value(chance, samples), sum(1 / len(s.arguments) for s in samples) / len(samples))
    with pytest.raises(ProtocolError, match="computed from the samples"):
        baseline_value(majority, [])


def test_leaderboard_command_formats_and_definition(runs: dict[str, Any], board_tasks: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    alone_tasks = protocol_tasks(tmp_path / "tasks", groups={"locus": ["locus_domain"]})
    store = Store(tmp_path / "lb", tasks_dir=alone_tasks)
    assert submit(store, files(runs["full"]), meta(runs["full"].results)).status == "VALID"
    import neurips26.leaderboard.store as store_module

    monkeypatch.setattr(store_module, "TASKS_DIR", alone_tasks)
    monkeypatch.setattr(store_module, "shipped_tasks", lambda: read_tasks(alone_tasks))
    monkeypatch.setattr(store_module, "shipped_groups", lambda: {"locus": ["locus_domain"]})
    app = typer.Typer()
    app.command("leaderboard")(leaderboard_command)
    app.command("other")(lambda: None)
    runner = CliRunner()
    table = runner.invoke(app, ["leaderboard", "--store", str(store.root)], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "overall = mean over the tasks in scope of max(0, (score - baseline) / (best - baseline))" in table.output
    as_json = runner.invoke(app, ["leaderboard", "--store", str(store.root), "--format", "json"])
    parsed = json.loads(as_json.output)
    assert [b["board"] for b in parsed["boards"]] == ["locus"]  # one board per track (here one group), as the Space
    assert parsed["boards"][0]["rows"][0]["model_id"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert parsed["boards"][0]["definition"] == "tasks: locus_domain" and parsed["demo"] is False
    # the demo view: the same board over UNRANKED runs (here the --limit 2 run), never beside the ranked one
    data = json.loads(runs["limited"].results_file.read_text())  # its locus_domain part, still run with --limit 2
    for key in ("results", "configs", "versions", "n-shot", "n-samples", "higher_is_better", "task_hashes"):
        data[key] = {k: v for k, v in data.get(key, {}).items() if k == "locus_domain"}
    data["group_subtasks"] = {}
    domain = next(p for p in runs["limited"].samples_files if p.name.startswith("samples_locus_domain_"))
    limited = submit(store, write_run(tmp_path / "limited", data, {"locus_domain": rows_of(domain)}), meta(data))
    assert limited.status == "UNRANKED", limited.reason
    ranked = json.loads(runner.invoke(app, ["leaderboard", "--store", str(store.root), "--format", "json"]).output)
    assert [r["submission_id"] for r in ranked["boards"][0]["rows"]] == [1]
    demo = runner.invoke(app, ["leaderboard", "--store", str(store.root), "--demo", "--track", "locus"],
                         env={"COLUMNS": "200"})
    assert demo.exit_code == 0, demo.output
    assert "DEMO RUNS, NOT RANKED: locus" in demo.output and f"#{limited.id}" in demo.output
    assert "#1 " not in demo.output
    unknown = runner.invoke(app, ["leaderboard", "--store", str(store.root), "--track", "audio"])
    assert isinstance(unknown.exception, UnknownNameError) and "tracks: locus" in str(unknown.exception)
    as_csv = runner.invoke(app, ["leaderboard", "--store", str(store.root), "--format", "csv", "--task",
                                 "locus_domain"])
    assert as_csv.output.splitlines()[0].startswith("board,model_id,revision,precision")  # one board column
    bad = runner.invoke(app, ["leaderboard", "--store", str(store.root), "--format", "xml"])
    assert isinstance(bad.exception, UserError)


def test_a_forged_split_size_is_rejected_when_the_board_holds_the_data(runs: dict[str, Any], board_tasks: Path,
                                                                       tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # the complete run says its split has the 2 documents it evaluated; the built folder it read has more
    monkeypatch.setenv("NEURIPS26_DATA", str(runs["root"] / "data"))
    n = split_size(runs["root"] / "data" / "locus", "domain")
    assert n > 2
    entry = Store(tmp_path / "lb", tasks_dir=board_tasks).submit(*files(runs["full"])[:1], meta(runs["full"].results),
                                                                  files(runs["full"])[1])
    assert entry.status == "REJECTED"
    assert entry.reason == f"n-samples.locus_domain.original: 2, but the test split of the data the run says it " \
        f"read has {n} documents"  # the one problem, named once
    monkeypatch.setenv("NEURIPS26_DATA", str(tmp_path / "elsewhere"))  # another folder: not checked
    assert Store(tmp_path / "lb2", tasks_dir=board_tasks).submit(*files(runs["full"])[:1], meta(runs["full"].results),
                                                                 files(runs["full"])[1]).status == "VALID"
