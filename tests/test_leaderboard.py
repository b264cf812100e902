"""The leaderboard on real lm-eval files: validation, dedupe, concurrency, intervals, rank ranges, bootstrap.

One real evaluation of the embedded model (``--limit 2``) writes the results and samples files; the submissions
here are that run made complete (no limit, data provenance: see ``board_fixtures.complete``) or runs fabricated
from it whose samples agree with their scores (other model ids, chosen scores, broken fields). The board accepts
the tasks of a task folder holding the shipped LOCUS YAMLs with protocols (``board_fixtures.protocol_tasks``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import multiprocessing
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typer
from neurips26.corpora.locus.build import build as build_locus
from neurips26.leaderboard import ranking
from neurips26.leaderboard import store as store_module
from neurips26.leaderboard.catalog import read_tasks, shipped_tasks
from neurips26.leaderboard.cli import leaderboard as leaderboard_command
from neurips26.leaderboard.cli import submit as submit_command
from neurips26.leaderboard.compare import paired_bootstrap
from neurips26.leaderboard.metrics import bootstrap_stderr, macro_f1_of_pairs
from neurips26.leaderboard.modelinfo import Limits, SubmissionRejected, clean_text
from neurips26.leaderboard.ranking import intervals, leaderboard, point_ranks, rank_ranges, wilson
from neurips26.leaderboard.store import Store
from neurips26.leaderboard.validate import validate_results
from neurips26.tasks import evaluation
from typer.testing import CliRunner

from neurips26.errors import UnknownNameError
from tests.board_fixtures import PROTOCOLS, REVISION, complete, dump, fabricate, protocol_tasks
from tests.board_fixtures import variant as _variant

TASKS = ["locus_catchline", "locus_domain"]


# -- the real run and what is derived from it ------------------------------------------------------------------


@pytest.fixture(scope="session")
def board_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return protocol_tasks(tmp_path_factory.mktemp("leaderboard_tasks"))


@pytest.fixture(scope="session")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Results and samples files from a real lm-eval run of the embedded model on our tasks, made complete."""
    root = tmp_path_factory.mktemp("leaderboard_eval")
    build_locus(out=root / "data" / "locus")
    with pytest.MonkeyPatch.context() as env:  # run() sets NEURIPS26_DATA; keep it out of other tests
        env.setenv("NEURIPS26_DATA", str(root / "data"))
        run = evaluation.run(["locus_catchline", "locus_domain"], limit=2, output=root / "results", data=root / "data")
    assert run.results_file is not None and len(run.samples_files) == 2
    manifest = hashlib.sha256((root / "data" / "locus" / "manifest.json").read_bytes()).hexdigest()
    limited = json.loads(run.results_file.read_text())
    data = complete(limited, manifest)
    path = root / "complete" / run.results_file.name
    path.parent.mkdir()
    path.write_bytes(dump(data))
    return {"file": path, "data": data, "limited": limited,
            "samples": {task: next(p for p in run.samples_files if p.name.startswith(f"samples_{task}_"))
                        for task in TASKS}}


@pytest.fixture
def store(tmp_path: Path, board_tasks: Path) -> Store:
    return Store(tmp_path / "lb", tasks_dir=board_tasks)


def both(real: dict[str, Any]) -> list[Path]:
    return list(real["samples"].values())


def meta(real: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {"model_id": "HuggingFaceTB/SmolLM2-135M-Instruct", "revision": REVISION, "precision": "float32",
            "params": real["data"]["config"]["model_num_parameters"], "license": "apache-2.0",
            "model_type": "instruction-tuned", "submitter": "alice", **changes}


def variant(real: dict[str, Any], run: int = 0) -> dict[str, Any]:
    """A copy of the complete results dict; ``run`` changes its date, as another run of lm-eval would."""
    return _variant(real["data"], run)


def fab(tmp: Path, real: dict[str, Any], correct: dict[str, list[bool]], run: int = 0, **kw: Any
        ) -> tuple[Path, list[Path]]:
    return fabricate(tmp / f"run{run}", real["limited"], real["samples"], correct, run, **kw)


def marks(n: int, right: int) -> list[bool]:
    return [i < right for i in range(n)]


def doctored(folder: Path, real: dict[str, Any], task: str, edit: Any) -> Path:
    """A copy of the real samples file of ``task`` with each row passed through ``edit``."""
    rows = [json.loads(line) for line in real["samples"][task].read_text().splitlines()]
    for row in rows:
        edit(row)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / real["samples"][task].name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


# -- catalog ---------------------------------------------------------------------------------------------------


def yaml_fields(path: Path) -> tuple[float, list[str]]:
    """metadata.version and the metric_list names of a task YAML, read from its text."""
    text = path.read_text()
    version = re.search(r"^metadata:\n(?:  .*\n)*?  version: ([0-9.]+)$", text, re.M)
    assert version is not None, path
    return float(version[1]), re.findall(r"^  - metric: (\w+)$", text, re.M)


def test_catalog_reads_the_task_yamls(board_tasks: Path) -> None:
    tasks = read_tasks(board_tasks)
    assert set(TASKS) <= set(tasks)
    domain, catchline = tasks["locus_domain"], tasks["locus_catchline"]
    version, metrics = yaml_fields(board_tasks / "locus_domain.yaml")
    assert "acc" in metrics and "macro_f1" in metrics
    assert (domain.version, domain.group, domain.primary, list(domain.metrics)) == (version, "locus", "acc", metrics)
    version, metrics = yaml_fields(board_tasks / "locus_catchline.yaml")
    assert (catchline.version, catchline.primary, sorted(catchline.metrics)) == (version, "rougeL",
                                                                                 ["exact_match", "rougeL"])
    assert domain.metrics["acc"].binary and not catchline.metrics["rougeL"].binary
    # macro-F1 is corpus-level: each document records a (gold, predicted) pair, the score is their aggregate
    f1 = domain.metrics["macro_f1"]
    assert not f1.scalar and f1.aggregate is not None and domain.metrics["acc"].aggregate is None
    assert f1.combine([[0, 0], [1, 1], [1, 0]]) == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert domain.metrics["acc"].combine([1.0, 0.0, 0.0, 1.0]) == 0.5
    assert domain.problem is None and catchline.process_results == "utils.score_catchline"
    # every metric a shipped task reports is registered (its range and how it is recomputed)
    assert not [spec.problem for spec in shipped_tasks().values() if "unknown metric" in (spec.problem or "")]


# -- a real submission -----------------------------------------------------------------------------------------


def test_real_results_and_samples_are_stored(store: Store, real: dict[str, Any]) -> None:
    entry = store.submit(real["file"], meta(real), both(real))
    assert entry.status == "VALID", entry.reason
    assert entry.results_sha256 == hashlib.sha256(real["file"].read_bytes()).hexdigest()
    for path in [real["file"], *real["samples"].values()]:  # raw files kept content-addressed
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        assert store.file_path(sha).read_bytes() == path.read_bytes()
        assert store.file_path(sha) == store.root / "files" / sha[:2] / sha
    scores = store.scores().to_pylist()
    assert {(r["task"], r["metric"]) for r in scores} == {(t, m) for t in TASKS for m in store.tasks[t].metrics}
    corpus_level = {(t, m) for t in TASKS for m, spec in store.tasks[t].metrics.items() if spec.aggregate}
    assert ("locus_domain", "macro_f1") in corpus_level
    for row in scores:  # recomputed from the samples: lm-eval's numbers
        task = real["data"]["results"][row["task"]]
        assert math.isclose(row["value"], task[f"{row['metric']},none"], abs_tol=1e-9)
        assert row["n"] == 2 and row["model_id"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
        per_doc = store.sample_scores(entry.id, row["task"], row["metric"])
        if (row["task"], row["metric"]) in corpus_level:
            # no mean over documents: lm-eval has no stderr (N/A), the board a bootstrap one; no per-document scores
            assert task[f"{row['metric']}_stderr,none"] == "N/A" and not per_doc
            assert row["stderr"] is not None and 0 <= row["stderr"] <= 1
            continue
        assert math.isclose(row["stderr"], task[f"{row['metric']}_stderr,none"], abs_tol=1e-9)
        assert len(per_doc) == 2 and math.isclose(sum(per_doc.values()) / 2, row["value"])
    with store._connect() as con:  # append-only history: PENDING, then VALID
        history = con.execute("SELECT status FROM statuses WHERE submission_id = ? ORDER BY seq",
                              [entry.id]).fetchall()
    assert [s for (s,) in history] == ["PENDING", "VALID"]


def test_scores_cache_follows_writes_from_any_store_object(tmp_path: Path, real: dict[str, Any],
                                                           board_tasks: Path) -> None:
    reader, writer = Store(tmp_path / "lb", tasks_dir=board_tasks), Store(tmp_path / "lb", tasks_dir=board_tasks)
    assert reader.scores().num_rows == 0
    assert writer.submit(real["file"], meta(real), both(real)).status == "VALID"
    first = reader.scores()
    assert first.num_rows == 4 and reader.scores() is first  # unchanged store: no second read
    results, samples = fab(tmp_path, real, {"locus_domain": [True, False], "locus_catchline": [False, True]}, 1)
    assert writer.submit(results, meta(real, model_id="org/other"), samples).status == "VALID"
    assert reader.scores().num_rows == 8 and reader.scores(fresh=True).num_rows == 8


# -- rejections: each names the field and the reason ----------------------------------------------------------


def _foreign_task(data: dict) -> None:
    data["results"]["mmlu"] = dict(data["results"]["locus_domain"], name="mmlu", alias="mmlu")


def _foreign_group(data: dict) -> None:
    data["group_subtasks"] = {"mmlu": ["locus_domain"]}
    data["results"]["mmlu"] = {"alias": "mmlu", "acc,none": 0.5}


def _drop(path: str) -> Any:
    def edit(data: dict) -> None:
        *parents, last = path.split("/")
        for part in parents:
            data = data[part]
        del data[last]
    return edit


def _put(path: str, value: Any) -> Any:
    def edit(data: dict) -> None:
        *parents, last = path.split("/")
        for part in parents:
            data = data[part]
        data[last] = value
    return edit


REJECTIONS = [
    ("not our task", _foreign_task, "results.mmlu", "not a task of this benchmark"),
    ("task version", lambda d: d["versions"].update(locus_domain=d["versions"]["locus_domain"] + 1),
     "versions.locus_domain", "differs from the shipped version {locus_domain}"),
    ("NaN metric", _put("results/locus_domain/acc,none", math.nan), "results.locus_domain.acc,none", "not finite"),
    ("inf metric", _put("results/locus_catchline/rougeL,none", math.inf), "results.locus_catchline.rougeL,none",
     "not finite"),
    ("out of range", _put("results/locus_domain/acc,none", 1.5), "results.locus_domain.acc,none", "outside"),
    ("negative", _put("results/locus_catchline/rougeL,none", -0.1), "results.locus_catchline.rougeL,none",
     "outside"),
    ("more than counted", _put("n-samples/locus_domain", {"original": 2, "effective": 3}),
     "n-samples.locus_domain.effective", "3 is not between 1 and 2"),
    ("foreign group", _foreign_group, "results.mmlu", "not a group of this benchmark"),
    ("missing metric", _drop("results/locus_catchline/rougeL,none"), "results.locus_catchline.rougeL,none",
     "missing"),
    ("foreign metric", _put("results/locus_domain/f1,none", 0.5), "results.locus_domain.f1,none", "not a metric"),
    ("string metric", _put("results/locus_domain/acc,none", "0.9"), "results.locus_domain.acc,none",
     "not a number"),
    ("no lm-eval version", _drop("lm_eval_version"), "lm_eval_version", "missing"),
    ("other lm-eval", _put("lm_eval_version", "0.3.0"), "lm_eval_version", "lm-eval 0.4"),
    ("no sample count", _drop("n-samples/locus_domain"), "n-samples.locus_domain", "missing"),
    ("no task version", _drop("versions/locus_catchline"), "versions.locus_catchline", "missing"),
    ("changed prompt", _put("configs/locus_domain/doc_to_text", "Answer: {{label}}"),
     "configs.locus_domain.doc_to_text", "differs from the shipped task locus_domain v{locus_domain}"),
    ("no task config", _drop("configs/locus_catchline"), "configs.locus_catchline", "missing"),
    ("params mismatch", _put("config/model_num_parameters", 7_000_000_000), "params", "lm-eval counted"),
    ("dtype mismatch", _put("config/model_dtype", "torch.bfloat16"), "precision", "ran the model in bfloat16"),
    ("sha mismatch", _put("config/model_sha", "fedcba9876543210"), "revision", "lm-eval loaded revision"),
    ("other hub model", _put("config/model_args/pretrained", "SomeOrg/Other-7B"), "model_id",
     "lm-eval evaluated SomeOrg/Other-7B"),
]


@pytest.mark.parametrize("edit, field, reason", [r[1:] for r in REJECTIONS], ids=[r[0] for r in REJECTIONS])
def test_each_results_problem_is_rejected_by_name(store: Store, real: dict[str, Any], edit: Any, field: str,
                                                  reason: str) -> None:
    data = variant(real)
    edit(data)
    reason = reason.format(**{task: f"{spec.version:g}" for task, spec in store.tasks.items()})  # the shipped ones
    entry = store.submit(dump(data), meta(real, submitter="mallory"), both(real))
    assert entry.status == "REJECTED"
    assert f"{field}: " in entry.reason and reason in entry.reason, entry.reason
    assert store.entries(submitter="mallory") == [entry]  # kept, visible to its submitter
    assert store.entries(include_rejected=False) == [] and store.scores().num_rows == 0


def test_validate_results_lists_every_problem(real: dict[str, Any], board_tasks: Path) -> None:
    tasks = read_tasks(board_tasks)
    data = variant(real)
    data["results"]["locus_domain"]["acc,none"] = math.nan
    del data["lm_eval_version"]
    with pytest.raises(SubmissionRejected) as caught:
        validate_results(data, tasks)
    fields = [field for field, _ in caught.value.problems]
    assert fields == ["results.locus_domain.acc,none", "lm_eval_version"]
    assert "results.locus_domain.acc,none: not finite" in str(caught.value)
    ok = validate_results(real["data"], tasks)
    shipped = {task: yaml_fields(board_tasks / f"{task}.yaml")[0] for task in TASKS}
    assert ok.task_versions == shipped == {task: float(v) for task, v in real["data"]["versions"].items()}
    assert ok.lm_eval_version == "0.4.13"
    assert "pretrained" not in ok.config["model_args"] and ok.config["limit"] is None and not ok.unranked
    limited = validate_results(real["limited"], tasks)  # valid, but not the standard run
    assert limited.config["limit"] == 2 and "run with --limit 2" in limited.unranked["locus_domain"]
    # the stderr is recomputed from the samples: lm-eval's N/A (bootstrap_iters=0) is no problem
    data = variant(real)
    data["results"]["locus_domain"]["acc_stderr,none"] = "N/A"
    assert validate_results(data, tasks).tasks["locus_domain"].metrics["acc"][1] is None
    # shipped tasks without a protocol cannot be submitted: the reason names the YAML
    bare = protocol_tasks(board_tasks.parent / "bare", protocols={})
    with pytest.raises(SubmissionRejected, match=r"tasks.locus_domain: cannot be ranked: .*no metadata.protocol"):
        validate_results(real["data"], read_tasks(bare))


@pytest.mark.parametrize("field, value, reason", [
    ("revision", "local", "commit sha"), ("revision", "abc12", "commit sha"), ("revision", "xyz1234", "commit sha"),
    ("precision", "fp8", "float32"), ("params", 0, "greater than 0"), ("params", 10**13, "less than"),
    ("model_type", "base", "pretrained"), ("license", "", "at least 1"), ("model_id", "a b/c", "ORG/NAME"),
    ("model_id", "x" * 200, "at most 128"), ("submitter", "<script>alert(1)</script>", "at least 1"),
])
def test_bad_metadata_is_rejected_and_kept(store: Store, real: dict[str, Any], field: str, value: Any,
                                           reason: str) -> None:
    entry = store.submit(real["file"], meta(real, **{field: value}), both(real))
    assert entry.status == "REJECTED" and f"{field}: " in entry.reason and reason in entry.reason, entry.reason
    assert store.entry(entry.id) == entry
    assert "<" not in str(store.entry(entry.id))


def test_oversize_files_are_rejected_and_not_kept(tmp_path: Path, real: dict[str, Any], board_tasks: Path) -> None:
    size = real["file"].stat().st_size
    small = Store(tmp_path / "lb", tasks_dir=board_tasks, limits=Limits(results_bytes=size - 1, samples_bytes=100))
    entry = small.submit(real["file"], meta(real), both(real))
    assert entry.status == "REJECTED" and f"results: file is {size:,} bytes, over the limit of {size - 1:,}" \
        in entry.reason
    assert entry.results_sha256 == "" and not (small.root / "files" / hashlib.sha256(
        real["file"].read_bytes()).hexdigest()[:2] / hashlib.sha256(real["file"].read_bytes()).hexdigest()).exists()
    small = Store(tmp_path / "lb2", tasks_dir=board_tasks, limits=Limits(samples_bytes=100))
    entry = small.submit(real["file"], meta(real), both(real))
    assert entry.status == "REJECTED" and f"samples.{real['samples']['locus_domain'].name}: file is" in entry.reason


def test_not_json_and_wrong_samples_are_rejected(store: Store, real: dict[str, Any], tmp_path: Path) -> None:
    assert "results: not a JSON file" in store.submit(b"<html>", meta(real)).reason
    assert "not an lm-eval results object" in store.submit(b"[1, 2]", meta(real)).reason
    # results that the samples do not reproduce
    data = variant(real, 1)
    data["results"]["locus_domain"]["acc,none"] = 0.0 if data["results"]["locus_domain"]["acc,none"] else 1.0
    entry = store.submit(dump(data), meta(real, model_id="org/doctored"), both(real))
    assert entry.status == "REJECTED" and "locus_domain_" in entry.reason and "acc: recomputed from the samples" \
        in entry.reason
    # no samples file: the board cannot recompute the scores
    entry = store.submit(dump(variant(real, 4)), meta(real, model_id="org/nosamples"))
    assert entry.status == "REJECTED" and "samples.locus_catchline: missing: every task needs its samples file" \
        in entry.reason
    # a samples file of a task that is not in the results file
    renamed = tmp_path / "samples_locus_other_2026-01-01T00-00-00.000000.jsonl"
    renamed.write_bytes(real["samples"]["locus_domain"].read_bytes())
    entry = store.submit(dump(variant(real, 2)), meta(real, model_id="org/renamed"), [renamed])
    assert entry.status == "REJECTED" and f"samples.{renamed.name}: not named" in entry.reason
    # repeated doc ids
    lines = real["samples"]["locus_domain"].read_text().splitlines()
    twice = tmp_path / "b" / real["samples"]["locus_domain"].name
    twice.parent.mkdir()
    twice.write_text(lines[0] + "\n" + lines[0] + "\n")
    entry = store.submit(dump(variant(real, 3)), meta(real, model_id="org/twice"),
                         [twice, real["samples"]["locus_catchline"]])
    assert entry.status == "REJECTED" and "document 0 appears twice" in entry.reason


def test_markup_is_stripped_before_storing(store: Store, real: dict[str, Any]) -> None:
    entry = store.submit(real["file"], meta(
        real, model_id="<script>alert('x')</script>HuggingFaceTB/<b>SmolLM2-135M-Instruct</b>",
        license='<img src=x onerror="alert(1)">apache-2.0', submitter="[bob](javascript:alert(1)) &lt;i&gt;"),
        both(real))
    assert entry.status == "VALID", entry.reason
    stored = store.entry(entry.id)
    assert (stored.model_id, stored.license, stored.submitter) == ("HuggingFaceTB/SmolLM2-135M-Instruct",
                                                                   "apache-2.0", "bob")
    assert store.scores()["model_id"].to_pylist()[0] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    # all-markup text leaves nothing: rejected, and what is kept holds no markup either
    entry = store.submit(dump(variant(real, 1)), meta(real, model_id="<script>alert(1)</script>"), both(real))
    assert entry.status == "REJECTED" and entry.model_id == "" and "model_id: " in entry.reason


@pytest.mark.parametrize("text, clean", [
    ("&lt;script&gt;alert(1)&lt;/script&gt;org/model", "org/model"),
    ("&amp;lt;b&amp;gt;bold&amp;lt;/b&amp;gt;", "bold"),
    ("a<!-- hidden -->b", "ab"),
    ("<style>x{}</style>mit", "mit"),
    ("![x](http://e/x.png)name", "xname"),
    ("ri\u202eght\u200b `code`", "right code"),
    ("<svg onload=alert(1)", ""),
    ("  many   spaces\n", "many spaces"),
])
def test_clean_text(text: str, clean: str) -> None:
    assert clean_text(text) == clean


# -- dedupe ----------------------------------------------------------------------------------------------------


def test_duplicates_are_answered_with_the_existing_entry(store: Store, real: dict[str, Any]) -> None:
    first = store.submit(real["file"], meta(real), both(real))
    again = store.submit(real["file"], meta(real, submitter="bob"), both(real))
    assert (again.id, again.duplicate_of, again.is_duplicate, again.status) == (first.id, first.id, True, "VALID")
    # another run of the same evaluation, a short sha, another case: the same key
    short = store.submit(dump(variant(real, 5)),
                         meta(real, revision=REVISION[:7], model_id="huggingfacetb/smollm2-135m-instruct"), both(real))
    assert short.duplicate_of == first.id
    assert [e.id for e in store.entries()] == [first.id] and store.duplicates().num_rows == 2
    # another evaluation config is another entry (not ranked: 3-shot is not the protocol's 0-shot)
    fewshot = variant(real, 6)
    fewshot["n-shot"]["locus_domain"] = 3
    other_config = store.submit(dump(fewshot), meta(real), both(real))
    assert other_config.duplicate_of is None and other_config.status == "UNRANKED"
    assert "locus_domain: 3-shot instead of 0-shot" in other_config.reason
    # the same file for another model is refused
    other = store.submit(real["file"], meta(real, model_id="someone/else"), both(real))
    assert other.status == "REJECTED" and f"already submitted as #{first.id}" in other.reason
    assert len(store.entries(include_rejected=False)) == 2


def test_submit_many_dedupes_within_the_batch(store: Store, real: dict[str, Any]) -> None:
    one, two = dump(variant(real, 1)), dump(variant(real, 2))
    entries = store.submit_many([(one, meta(real), both(real)), (two, meta(real), both(real)),
                                 (b"{}", meta(real), []), (one, meta(real, model_id="org/b"), both(real))])
    assert [(e.id, e.status, e.duplicate_of) for e in entries] == [
        (1, "VALID", None), (1, "VALID", 1), (2, "REJECTED", None), (3, "REJECTED", None)]
    assert "already submitted as #1" in entries[3].reason and len(store.entries()) == 3


def test_rejected_entries_do_not_block_a_corrected_resubmission(store: Store, real: dict[str, Any],
                                                                tmp_path: Path) -> None:
    wrong = doctored(tmp_path, real, "locus_domain", lambda row: row.update(acc=1.0 - row["acc"]))
    rejected = store.submit(real["file"], meta(real, submitter="carol"), [wrong, real["samples"]["locus_catchline"]])
    assert rejected.status == "REJECTED" and "but the document's responses score" in rejected.reason
    fixed = store.submit(real["file"], meta(real, submitter="carol"), both(real))
    assert fixed.status == "VALID" and fixed.id != rejected.id and fixed.duplicate_of is None
    assert [e.status for e in store.entries(submitter="carol")] == ["VALID", "REJECTED"]
    assert [e.id for e in store.entries(include_rejected=False)] == [fixed.id]


def test_a_submission_interrupted_after_storing_stays_pending(store: Store, real: dict[str, Any],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args: Any) -> None:
        raise SystemExit("killed")  # the process dies while it checks the samples files (an error would reject)

    monkeypatch.setattr(Store, "_check_samples", crash)
    with pytest.raises(SystemExit):
        store.submit(real["file"], meta(real), both(real))
    monkeypatch.undo()
    (pending,) = store.entries()
    assert pending.status == "PENDING"
    assert store.submit(real["file"], meta(real), both(real)).duplicate_of == pending.id  # not stored twice
    done = store.revalidate(pending.id)
    assert done.status == "VALID" and store.scores().num_rows == 4
    assert len(store.sample_scores(pending.id, "locus_domain", "acc")) == 2


# -- concurrency -----------------------------------------------------------------------------------------------

PROCESSES, PER_PROCESS, THREADS = 4, 25, 3


def _submit_jobs(root: str, tasks_dir: str, jobs: list[tuple[str, str, dict, list[str]]]
                 ) -> list[tuple[str, int, int | None, str]]:
    """Worker process: submit ``jobs`` from a few threads at once."""
    store = Store(root, tasks_dir=Path(tasks_dir))
    with ThreadPoolExecutor(THREADS) as pool:
        entries = list(pool.map(lambda job: (job[0], store.submit(Path(job[1]), job[2], [Path(p) for p in job[3]])),
                                jobs))
    return [(label, e.id, e.duplicate_of, e.status) for label, e in entries]


def test_concurrent_submissions_are_stored_exactly_once(tmp_path: Path, real: dict[str, Any],
                                                        board_tasks: Path) -> None:
    distinct = []
    for i in range(PROCESSES * PER_PROCESS):
        results, samples = fab(tmp_path / "incoming", real, {"locus_domain": [i % 2 == 0, i % 3 == 0],
                                                             "locus_catchline": [i % 5 == 0, True]}, i)
        distinct.append((f"m{i}", str(results), meta(real, model_id=f"org/model-{i}", submitter=f"p{i % PROCESSES}"),
                         [str(p) for p in samples]))
    jobs: list[list[tuple[str, str, dict, list[str]]]] = [[] for _ in range(PROCESSES)]
    for i, job in enumerate(distinct):
        p = i % PROCESSES
        jobs[p].append(job)
        if i % 10 == 0:  # the same submission from another process, and again from the same one
            jobs[(p + 1) % PROCESSES].append(job)
            jobs[p].append(job)
    with multiprocessing.get_context("spawn").Pool(PROCESSES) as pool:
        answers = [a for part in pool.starmap(_submit_jobs, [(str(tmp_path / "lb"), str(board_tasks), j)
                                                              for j in jobs]) for a in part]
    assert len(answers) == sum(map(len, jobs)) == 100 + 20

    store = Store(tmp_path / "lb", tasks_dir=board_tasks)
    entries = store.entries()
    assert len(entries) == len(distinct) and all(e.status == "VALID" for e in entries), entries[0].reason
    assert Counter(e.model_id for e in entries) == Counter(f"org/model-{i}" for i in range(len(distinct)))
    ids = {label: {i for lab, i, _, _ in answers if lab == label} for label, _, _, _ in distinct}
    assert all(len(found) == 1 for found in ids.values())  # every answer for a submission names one entry
    assert {e.id: e.model_id for e in entries} == {next(iter(ids[f"m{i}"])): f"org/model-{i}"
                                                   for i in range(len(distinct))}
    duplicate_answers = [a for a in answers if a[2] is not None]
    assert len(duplicate_answers) == len(answers) - len(distinct) == store.duplicates().num_rows
    assert all(dup == i for _, i, dup, _ in duplicate_answers)
    assert store.scores().num_rows == 4 * len(distinct)
    assert sorted(e.id for e in entries) == list(range(1, len(distinct) + 1))


# -- intervals and rank ranges ---------------------------------------------------------------------------------


def test_wilson_interval_by_hand() -> None:
    lo, hi = wilson(np.array([0.75, 0.0, 1.0]), np.array([4, 10, 10]))
    # p=0.75, n=4: center (0.75 + 1.96^2/8) / (1 + 1.96^2/4) = 0.62753, half 0.32689
    assert np.allclose([lo[0], hi[0]], [0.300642, 0.954413], atol=1e-6)
    # p=0 over 10: [0, z^2/(n+z^2)] = [0, 0.277533]; p=1 mirrors it
    assert np.allclose([lo[1], hi[1], lo[2], hi[2]], [0.0, 0.277533, 0.722467, 1.0], atol=1e-6)
    # the bounds solve (p - b)^2 = z^2 b (1 - b) / n
    for b in (lo[0], hi[0]):
        assert math.isclose((0.75 - b) ** 2, ranking.Z95**2 * b * (1 - b) / 4, rel_tol=1e-9)


def test_rank_ranges_by_hand() -> None:
    lo = np.array([0.70, 0.60, 0.10, 0.85])
    hi = np.array([0.90, 0.80, 0.30, 0.95])
    best, worst = rank_ranges(lo, hi)
    # A: nothing lies above 0.90, C lies below 0.70 -> 1..3; B: D above, C below -> 2..3; C: all three above -> 4..4;
    # D: nothing above, B and C below -> 1..2
    assert best.tolist() == [1, 2, 4, 1] and worst.tolist() == [3, 3, 4, 2]
    best, worst = rank_ranges(np.array([0.0, 1.0]), np.array([1.0, 2.0]))  # touching is overlapping
    assert best.tolist() == [1, 1] and worst.tolist() == [2, 2]
    assert point_ranks(np.array([0.5, 0.7, 0.5, 0.1])).tolist() == [2, 1, 2, 4]
    with pytest.raises(ValueError):
        rank_ranges(np.array([0.5]), np.array([0.4]))


def test_leaderboard_intervals_and_overall_by_hand(store: Store, real: dict[str, Any], tmp_path: Path) -> None:
    cases = {"org/a": (80, 50), "org/b": (70, 45), "org/c": (30, 10)}  # correct of 100: domain, catchline
    for i, (model, (acc, rouge)) in enumerate(cases.items()):
        results, samples = fab(tmp_path, real, {"locus_domain": marks(100, acc), "locus_catchline": marks(100, rouge)},
                               i)
        entry = store.submit(results, meta(real, model_id=model), samples)
        assert entry.status == "VALID", entry.reason
    domain = leaderboard(store, task="locus_domain").to_pylist()
    assert [r["model_id"] for r in domain] == ["org/a", "org/b", "org/c"]
    # Wilson, p=0.8, n=100: center (0.8 + 0.019207) / 1.038415 = 0.788907, half 0.077733
    assert math.isclose(domain[0]["ci_low"], 0.711170, abs_tol=1e-5)
    assert math.isclose(domain[0]["ci_high"], 0.866640, abs_tol=1e-5)
    # a [0.711, 0.867] and b [0.607, 0.781] overlap; c (~[0.219, 0.396]) lies below both
    assert [(r["rank"], r["rank_best"], r["rank_worst"]) for r in domain] == [(1, 1, 2), (2, 1, 2), (3, 3, 3)]
    catchline = leaderboard(store, task="locus_catchline").to_pylist()
    # normal interval: 0.5 +- 1.96 * se, se = sqrt(0.25 * 100 / 99 / 100) (the samples' standard error)
    se = math.sqrt(0.25 * 100 / 99 / 100)
    assert math.isclose(catchline[0]["stderr"], se)
    assert math.isclose(catchline[0]["ci_low"], 0.5 - ranking.Z95 * se, abs_tol=1e-9)
    assert math.isclose(catchline[0]["ci_high"], 0.5 + ranking.Z95 * se, abs_tol=1e-9)
    overall = {r["model_id"]: r for r in leaderboard(store).to_pylist()}
    a = overall["org/a"]
    # normalised: domain between its majority baseline (gold options cycle over 4: 0.25) and 1, catchline
    # between 0 and 1; se of each scaled alike, Wilson half-width / 1.96 for domain (larger than its stderr)
    domain_se = max(math.sqrt(0.16 * 100 / 99 / 100), (domain[0]["ci_high"] - domain[0]["ci_low"]) / 2 / ranking.Z95)
    assert math.isclose(a["score"], ((0.8 - 0.25) / 0.75 + 0.5) / 2)
    assert math.isclose(a["stderr"], math.sqrt((domain_se / 0.75) ** 2 + se**2) / 2)
    assert math.isclose(a["ci_low"], a["score"] - ranking.Z95 * a["stderr"])
    assert (a["n"], a["n_tasks"], a["rank"]) == (200, 2, 1)
    assert leaderboard(store, group="locus").to_pylist() == leaderboard(store).to_pylist()
    assert leaderboard(store).column_names == ranking.COLUMNS
    with pytest.raises(UnknownNameError, match="unknown task"):
        leaderboard(store, task="mmlu")
    with pytest.raises(UnknownNameError, match="unknown group"):
        leaderboard(store, group="mmlu")


def test_lower_is_better_ranks_low_scores_first_and_reflects_in_the_overall(tmp_path: Path, real: dict[str, Any],
                                                                          board_tasks: Path) -> None:
    tasks = read_tasks(board_tasks)
    catchline = tasks["locus_catchline"]
    tasks["locus_catchline"] = dataclasses.replace(
        catchline, metrics={**catchline.metrics, "rougeL": dataclasses.replace(catchline.metrics["rougeL"],
                                                                             higher_is_better=False)},
        protocol=catchline.protocol.model_copy(update={"higher_is_better": False, "baseline": 1.0}))
    store = Store(tmp_path / "lb", tasks=tasks, tasks_dir=board_tasks)
    for i, rouge in enumerate((2, 6)):
        results, samples = fab(tmp_path, real, {"locus_domain": marks(10, 5), "locus_catchline": marks(10, rouge)}, i)
        entry = store.submit(results, meta(real, model_id=f"org/m{i}"), samples)
        assert entry.status == "VALID", entry.reason
    board = leaderboard(store, task="locus_catchline").to_pylist()
    assert [(r["model_id"], r["score"], r["rank"]) for r in board] == [("org/m0", 0.2, 1), ("org/m1", 0.6, 2)]
    overall = leaderboard(store).to_pylist()
    assert [r["model_id"] for r in overall] == ["org/m0", "org/m1"]
    majority = 3 / 10  # gold options cycle over 4 in 10 documents: 0, 1, 2, 3, 0, 1, 2, 3, 0, 1
    assert math.isclose(overall[0]["score"], ((0.5 - majority) / (1 - majority) + (1 - 0.2)) / 2)  # mirrored


def test_macro_f1_and_bootstrap_stderr_by_reference(board_tasks: Path) -> None:
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 60):
        for _ in range(20):
            golds, preds = rng.integers(0, 4, n), rng.integers(0, 5, n)
            pairs = [[int(g), int(p)] for g, p in zip(golds, preds, strict=True)]
            assert math.isclose(macro_f1_of_pairs(pairs), f1_score(
                golds, preds, average="macro", labels=sorted(set(golds.tolist())), zero_division=0), abs_tol=1e-12)
    # the bootstrap stderr of a mean is close to its analytic standard error, and the same on every call
    values = (rng.random(400) < 0.3).astype(float).tolist()
    analytic = math.sqrt(np.var(values, ddof=1) / len(values))
    assert abs(bootstrap_stderr(lambda v: sum(v) / len(v), values) - analytic) < 0.1 * analytic
    assert bootstrap_stderr(macro_f1_of_pairs, pairs) == bootstrap_stderr(macro_f1_of_pairs, pairs) > 0
    assert bootstrap_stderr(macro_f1_of_pairs, pairs[:1]) == 0.0
    # a score without a stderr gets the metric's whole range (not NaN, which would break the rank ranges)
    spec = read_tasks(board_tasks)["locus_catchline"].metrics["rougeL"]
    lo, hi = intervals(spec, np.array([0.4, 0.5]), np.array([np.nan, 0.1]), np.array([10, 10]))
    assert lo.tolist() == [0.0, 0.5 - ranking.Z95 * 0.1] and hi.tolist() == [1.0, 0.5 + ranking.Z95 * 0.1]


def test_a_task_ranked_by_a_corpus_level_metric(tmp_path: Path, real: dict[str, Any]) -> None:
    protocols = {**PROTOCOLS, "locus_domain": {**PROTOCOLS["locus_domain"], "metric": "macro_f1", "baseline": 0.0}}
    tasks_dir = protocol_tasks(tmp_path / "tasks", protocols=protocols)
    store = Store(tmp_path / "lb", tasks_dir=tasks_dir)
    assert store.tasks["locus_domain"].primary == "macro_f1"
    ids = []
    for i, right in enumerate((9, 5)):
        results, samples = fab(tmp_path, real, {"locus_domain": marks(12, right), "locus_catchline": marks(12, 6)}, i)
        entry = store.submit(results, meta(real, model_id=f"org/m{i}"), samples)
        assert entry.status == "VALID", entry.reason
        ids.append(entry.id)
    board = leaderboard(store, task="locus_domain").to_pylist()
    assert [r["model_id"] for r in board] == ["org/m0", "org/m1"]
    for row in board:
        data = json.loads(next((tmp_path / f"run{ids.index(row['submission_id'])}").glob("results_*.json"))
                          .read_text())
        assert math.isclose(row["score"], data["results"]["locus_domain"]["macro_f1,none"])  # the pairs' macro-F1
        assert row["stderr"] > 0 and row["ci_low"] < row["score"] <= row["ci_high"] <= 1
    overall = leaderboard(store).to_pylist()
    assert len(overall) == 2 and all(math.isfinite(r["ci_low"]) and r["n_tasks"] == 2 for r in overall)
    with pytest.raises(ValueError, match="corpus-level .* compare on acc"):
        paired_bootstrap(store, ids[0], ids[1], "locus_domain")
    assert paired_bootstrap(store, ids[0], ids[1], "locus_domain", "acc").mean_diff == pytest.approx(4 / 12)


def test_empty_leaderboard_has_the_columns(store: Store) -> None:
    table = leaderboard(store)
    assert table.num_rows == 0 and table.column_names == ranking.COLUMNS


# -- paired bootstrap ------------------------------------------------------------------------------------------


def test_paired_bootstrap_on_stored_samples(store: Store, real: dict[str, Any], tmp_path: Path) -> None:
    results, samples = fab(tmp_path, real, {"locus_domain": [True, False], "locus_catchline": [True, True]}, 0)
    a = store.submit(results, meta(real), samples)
    # model b: the same documents, every acc flipped
    results, samples = fab(tmp_path, real, {"locus_domain": [False, True], "locus_catchline": [True, False]}, 1)
    b = store.submit(results, meta(real, model_id="org/flipped"), samples)
    assert (a.status, b.status) == ("VALID", "VALID"), (a.reason, b.reason)
    result = paired_bootstrap(store, a.id, b.id, "locus_domain", n_boot=2000)
    assert result.n_docs == 2 and result.metric == "acc" and result.mean_diff == 0.0
    assert result.ci_low <= result.mean_diff <= result.ci_high and 0 < result.p_value <= 1
    same = paired_bootstrap(store, a.id, a.id, "locus_catchline", "rougeL", n_boot=500)
    assert (same.mean_diff, same.ci_low, same.ci_high, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert paired_bootstrap(store, a.id, b.id, "locus_domain", n_boot=300, seed=7) == \
        paired_bootstrap(store, a.id, b.id, "locus_domain", n_boot=300, seed=7)
    no_samples = store.submit(dump(variant(real, 2)), meta(real, model_id="org/nosamples"))
    with pytest.raises(ValueError, match="no samples file"):
        paired_bootstrap(store, a.id, no_samples.id, "locus_domain")


def test_paired_bootstrap_finds_a_clearly_better_model(store: Store, real: dict[str, Any], tmp_path: Path) -> None:
    n, rng = 300, np.random.default_rng(1)
    better = rng.random(n) < 0.8
    worse = np.where(rng.random(n) < 0.5, better, False)  # b loses about half of a's correct answers
    ids = []
    for i, (model, values) in enumerate((("org/better", better), ("org/worse", worse))):
        results, samples = fab(tmp_path, real, {"locus_domain": values.tolist()}, i)
        entry = store.submit(results, meta(real, model_id=model), samples)
        assert entry.status == "VALID", entry.reason
        ids.append(entry.id)
    result = paired_bootstrap(store, ids[0], ids[1], "locus_domain", n_boot=5000)
    assert math.isclose(result.mean_diff, better.mean() - worse.mean())
    assert result.n_docs == n and 0 < result.ci_low < result.mean_diff < result.ci_high
    assert result.p_value == 1 / 5001  # no resample as far from the observed difference as 0 is
    reverse = paired_bootstrap(store, ids[1], ids[0], "locus_domain", n_boot=5000)
    assert math.isclose(reverse.mean_diff, -result.mean_diff) and reverse.ci_high < 0
    # other documents under the same data digest are refused at submission ...
    results, samples = fab(tmp_path / "other", real, {"locus_domain": better.tolist()}, 9, hashes="x")
    refused = store.submit(results, meta(real, model_id="org/otherdocs"), samples)
    assert refused.status == "REJECTED" and f"not the {n} documents of the split" in refused.reason
    # ... and documents that differ under the same doc_id (runs on other data) are not compared
    results, samples = fab(tmp_path / "data2", real, {"locus_domain": better.tolist()}, 10, digest="1" * 64,
                           hashes="x")
    third = store.submit(results, meta(real, model_id="org/otherdata"), samples)
    assert third.status == "VALID", third.reason
    with pytest.raises(ValueError, match="different document"):
        paired_bootstrap(store, ids[0], third.id, "locus_domain")


# -- command line ----------------------------------------------------------------------------------------------


def test_submit_and_leaderboard_commands(tmp_path: Path, real: dict[str, Any], board_tasks: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "shipped_tasks", lambda: read_tasks(board_tasks))
    monkeypatch.setattr(store_module, "shipped_groups", lambda: {"locus": TASKS})
    app = typer.Typer()
    app.command("submit")(submit_command)
    app.command("leaderboard")(leaderboard_command)
    runner = CliRunner()
    root = str(tmp_path / "lb")
    args = ["submit", str(real["file"]), "--model", "HuggingFaceTB/SmolLM2-135M-Instruct", "--revision", REVISION,
            "--license", "apache-2.0", "--submitter", "alice", "--store", root]
    samples = [arg for path in real["samples"].values() for arg in ("--samples", str(path))]
    result = runner.invoke(app, args + samples, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "VALID submission #1" in result.output  # precision and params read from the results file
    result = runner.invoke(app, args + samples, env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "duplicate of submission #1" in result.output
    result = runner.invoke(app, [*args[:5], "local", *args[6:]] + samples, env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "REJECTED submission #2" in result.output and "revision: must be" in result.output
    result = runner.invoke(app, ["leaderboard", "--store", root], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "HuggingFaceTB/SmolLM2-135M-Instruct" in result.output and "1–1" in result.output
    result = runner.invoke(app, ["leaderboard", "--store", root, "--task", "locus_domain"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "locus_domain (acc" in result.output
    result = runner.invoke(app, ["leaderboard", "--store", root, "--task", "mmlu"])
    assert isinstance(result.exception, UnknownNameError) and "unknown task 'mmlu'" in str(result.exception)




def test_failure_signatures_are_kept_with_a_submission(store: Store, real: dict[str, Any]) -> None:
    """The signature table of a stored run comes from its kept files, is written once, and compares."""
    from neurips26.leaderboard import diagnosis

    entry = store.submit(real["file"], meta(real), both(real))
    rows = diagnosis.signatures(store, entry.id)
    assert {r["task"] for r in rows} == set(TASKS)
    assert {"empty", "truncated"} <= {r["signature"] for r in rows if r["task"] == "locus_catchline"}
    assert all(0 <= r["low"] <= r["rate"] <= r["high"] <= 1 and r["n"] == 2 for r in rows)
    kept = store.root / "signatures" / f"{entry.id}.json"
    assert json.loads(kept.read_text())["signatures"] == rows == diagnosis.compute(store, entry.id)
    assert all(r["difference"] == 0 for r in diagnosis.compare(store, entry.id, entry.id))


def test_every_track_has_an_overall_a_submission_can_complete() -> None:
    """No board asks for every task (text QA, video QA, segmentation, robot control...): each track's overall covers
    the tasks one kind of submission runs, and every ranked task is on exactly one track."""
    from neurips26.leaderboard.catalog import shipped_groups
    from neurips26.leaderboard.ranking import in_overall, scope
    from neurips26.leaderboard.tracks import board_scopes, track_of, track_parts, tracks

    tasks, groups = shipped_tasks(), shipped_groups()
    found = tracks(tasks, groups)
    by_name = {t.name: t for t in found}
    assert list(by_name)[:2] == ["text", "video"] and {"fic", "rediff", "robot_actions"} <= set(by_name)
    text, video = by_name["text"], by_name["video"]
    assert text.board == "Text LM overall" and text.parts == ("locus", "rolebench_unlearn", "locus_analysis_gold")
    assert track_parts(text, tasks, groups) == ["locus"]  # RoleBench-Unlearn keeps its own board
    assert set(scope(tasks, group=text.group, groups=groups)).isdisjoint(scope(tasks, group=video.group, groups=groups))
    on_video = {t.output_type for t in tasks.values() if track_of(t.name, found, tasks, groups) is video}
    assert on_video == {"generate_until"}
    ranked = [name for name, spec in tasks.items() if in_overall(spec, spec.group)]
    assert all(track_of(name, found, tasks, groups) is not None for name in ranked)
    assert "Overall" not in board_scopes(found) and len(board_scopes(found)) == len(found) + 5
