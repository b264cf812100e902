"""The FrameSelect tables (resource ``frameselect``): selections and results in a Hub-ready folder; replay.

This builder runs the frame selectors, so it lives above them, with the method, and
registers itself as a resource (``neurips26 build frameselect``).

``--raw DIR`` is a folder holding built benchmark folders (``DIR/tar``, ``DIR/clovr``);
without it the build reads the folders the video lm-eval tasks read (``<data>/tar``,
``<data>/clovr``, see :func:`neurips26.settings.data_root`); build those first. For every question
of every benchmark, every selector
(all registered ones plus ``framerouter``) picks frames at every budget; the choices go to
the ``selections`` config, the selection-level metrics to ``results``.

:func:`replay` answers the stored selections with an answering model and writes its
answer-level rows into ``results``; it reads ``selections`` and never runs a selector, so
the ``selections`` shards stay byte-identical.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from neurips26.corpora import RESOURCES
from neurips26.corpora.video.records import MissingInputError

from neurips26 import __version__, hubfolder, settings
from neurips26.buildreport import Reconciled, Tally
from neurips26.errors import UserError
from neurips26.hubfolder import column

from . import benchmarks as bench
from . import runner
from .answerers import answerer
from .core import SELECTORS

BUILDER_VERSION = "1.0.0"
BENCHMARKS = ("tar", "clovr")
BUDGETS = (8, 16, 32, 64)
Progress = Callable[[int, int], None] | None
BUILDER_NAME = "neurips26.methods.frameselect.tables"
FORMER_NAMES = ("neurips26.corpora.frameselect",)  # folders built before the builder moved

STR, INT, FLOAT = pa.string(), pa.int64(), pa.float64()
SELECTIONS = pa.schema([
    column("benchmark", STR, "tar or clovr"),
    column("question_id", STR, "Question id in the benchmark's folder"),
    column("selector", STR, "Frame selector (framerouter: FrameRouter)"),
    column("encoder", STR, "Encoder of the candidate pool's features"),
    column("budget", INT, "Frame budget (FrameRouter: the reference mean budget)"),
    column("seed", INT, "Random seed given to the selector"),
    column("n_frames", INT, "Frames chosen (the budget, or the whole pool when it is smaller)"),
    column("video_ids", pa.list_(STR), "Video of each chosen frame"),
    column("frame_indices", pa.list_(INT), "Frame number of each chosen frame inside its video"),
    column("timestamps", pa.list_(FLOAT), "Time of each chosen frame in seconds inside its video"),
    column("scores", pa.list_(FLOAT), "Selector's score of each chosen frame (null when it gives none)"),
])
RESULTS = pa.schema([
    column("benchmark", STR, "tar or clovr"),
    column("selector", STR, "Frame selector"),
    column("evaluator", STR, "selection (against evidence spans) or answer (through an answering model)"),
    column("budget", INT, "Frame budget"),
    column("answering_model", STR, "Answering model (empty for selection-level metrics)"),
    column("metric", STR, "Metric name"),
    column("value", FLOAT, "Mean over the questions it is defined for"),
    column("n", INT, "Number of questions in the mean"),
])
META = {
    "name": "frameselect",
    "pretty_name": "FrameSelect: frame selections and results for video question answering",
    "description": "Frame indices, timestamps and scores chosen by frame selectors for every question of TAR and "
                   "CLoVR-Bench at several frame budgets, with selection-level and answer-level results.",
    "license": "cc-by-4.0",
    "license_url": "https://creativecommons.org/licenses/by/4.0/",
    "url": "https://huggingface.co/datasets/neurips26/frameselect",
    "version": "1.0.0",
    "task_categories": ["video-text-to-text"],
    "tags": ["video", "frame-selection", "benchmark", "evaluation"],
    "citation": "FrameSelect. NeurIPS 2026.",
    "rai": {
        "data_collection": "Computed by running frame selectors on the questions of built TAR and CLoVR-Bench "
                           "folders; no data about people is collected.",
        "data_collection_type": ["Software Collection"],
        "data_preprocessing_protocol": ["Candidate frames at a fixed rate, encoded by one encoder; selections "
                                        "checked for size and uniqueness; metrics averaged over questions."],
        "data_biases": ["Inherits the benchmarks' biases; the generated releases are synthetic traffic scenes."],
        "data_limitations": ["Results depend on the candidate rate, encoder and answering model recorded with them."],
        "data_use_cases": ["Comparing frame selectors; re-answering stored selections with other VLMs."],
        "data_social_impact": "Makes video-VLM front ends comparable; no direct impact on people.",
        "personal_sensitive_information": ["None beyond the benchmark videos it points to."],
        "data_release_maintenance_plan": "Rebuilt with `neurips26 build frameselect`; manifest.json records the "
                                         "parameters and the digests of the benchmark folders.",
    },
}


@dataclass
class Report(Reconciled):
    """What a FrameSelect build made: every (question, selector, budget) asked is a selection or a refusal."""

    questions: dict[str, int] = field(default_factory=dict)
    asked: int = 0  # (question, selector, budget) triples
    selections: int = 0
    results: int = 0
    refused: dict[str, int] = field(default_factory=dict)

    def tallies(self) -> list[Tally]:
        """Selections asked = made + refused."""
        return [Tally.of("selections asked", self.asked, made=self.selections, refused=sum(self.refused.values()))]

    @property
    def problems(self) -> list[str]:
        """Always empty: a refusal (a pool lacking what its selector needs) is counted, not an error; a selector
        that fails stops the build."""
        return []

    def summary(self) -> str:
        """One line for the CLI: questions per benchmark, selections asked and made, refusals per selector."""
        qs = ", ".join(f"{k} {v}" for k, v in self.questions.items())
        refused = "; ".join(f"{k} refused {v}" for k, v in sorted(self.refused.items()))
        return (f"{self.selections:,} selections of {sum(self.questions.values())} questions ({qs}), "
                f"{self.results:,} result rows; {self.tally_text()}" + (f"; {refused}" if refused else ""))


def _specs() -> dict[str, hubfolder.ConfigSpec]:
    return {"selections": hubfolder.ConfigSpec("selections", SELECTIONS, "One row per (benchmark, question, "
                                               "selector, budget): the chosen frames.", default=True),
            "results": hubfolder.ConfigSpec("results", RESULTS, "One row per (benchmark, selector, evaluator, "
                                            "budget, answering model, metric): a mean over questions.")}


def _benchmark_folder(raw: Path | None, name: str) -> Path:
    """``raw/<name>``, else the data root's built folder (never built here: run ``neurips26 build <name>``)."""
    return bench.built_folder(name, None if raw is None else Path(raw) / name)


def _sort_results(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["benchmark"], r["evaluator"], r["answering_model"], r["selector"],
                                       r["budget"], r["metric"]))


@RESOURCES.register("frameselect", requires=("tar", "clovr"))  # built folders it reads
def build(raw: Path | None = None, out: Path = Path("frameselect"), workers: int = 1, progress: Progress = None,
          benchmarks: Sequence[str] = BENCHMARKS, selectors: Sequence[str] | None = None,
          budgets: Sequence[int] = BUDGETS, encoder: str = "descriptor", candidate_fps: float = 10.0, seed: int = 0,
          limit: int | None = None, cache: Path | None = None) -> Report:
    """FrameSelect tables: frames every selector chose for every TAR/CLoVR question and budget, and their metrics."""
    selectors = list(selectors) if selectors else [*SELECTORS.names(), runner.ROUTER]
    cache = runner.default_cache() if cache is None else cache
    report = Report()
    selection_rows: list[dict[str, Any]] = []
    result_rows: list[dict[str, Any]] = []
    inputs: dict[str, str] = {}
    demo = False  # true when any benchmark folder was built from a generator's default release
    for name in benchmarks:
        folder = _benchmark_folder(raw, name)
        questions = bench.load(name, folder, limit=limit)
        inputs[f"{name}/manifest.json"] = hubfolder.sha256_file(folder / settings.MANIFEST)
        demo = demo or bool(json.loads((folder / settings.MANIFEST).read_text(encoding="utf-8")).get("demo"))
        pools = runner.pools(questions, encoder, candidate_fps, cache)
        rows, refused = runner.select_all(questions, pools, selectors, budgets, encoder, seed, progress)
        selection_rows += rows
        result_rows += runner.selection_rows(rows, questions, pools, 1.0 / candidate_fps)
        report.questions[name] = len(questions)
        report.asked += len(questions) * len(selectors) * len(budgets)
        report.refused.update({f"{name}/{k}": v for k, v in refused.items()})
    report.selections, report.results = len(selection_rows), len(result_rows)

    final = Path(out)
    out = hubfolder.begin_build(final)  # a hidden sibling, renamed into place once complete
    specs = _specs()
    hubfolder.write_table(out, specs["selections"], selection_rows)
    hubfolder.write_table(out, specs["results"], _sort_results(result_rows))
    parameters = {"benchmarks": list(benchmarks), "selectors": selectors, "budgets": [int(b) for b in budgets],
                  "encoder": encoder, "candidate_fps": candidate_fps, "seed": seed, "limit": limit}
    _finish(out, list(specs.values()), parameters, inputs, demo)
    hubfolder.commit_build(out, final)
    return report


def _finish(out: Path, configs: list[hubfolder.ConfigSpec], parameters: dict[str, Any],
            inputs: dict[str, str], demo: bool) -> None:
    builder = {"name": BUILDER_NAME, "version": BUILDER_VERSION, "package_version": __version__,
               "parameters": parameters}
    hubfolder.write_manifest(out, configs, builder, inputs, demo=demo)
    hubfolder.write_card(out, configs, META, render_card(out, configs, parameters))
    hubfolder.write_croissant(out, configs, META)


def read_config(folder: Path, config: str) -> pa.Table:
    """All rows of one config of a built folder (its shards in order)."""
    files = sorted((Path(folder) / "data" / config).glob("*.parquet"))
    if not files:
        raise MissingInputError(f"{folder}: no {config} config (data/{config}/*.parquet); "
                                "build it with: neurips26 build frameselect")
    return pa.concat_tables(pq.read_table(f) for f in files)


def replay(folder: Path, model: str, raw: Path | None = None, progress: Progress = None,
           selectors: Sequence[str] | None = None, budgets: Sequence[int] | None = None,
           **answerer_options: Any) -> list[dict[str, Any]]:
    """Answer the stored selections of ``folder`` with ``model``; write and return its answer-level rows.

    ``selectors`` and ``budgets`` answer only those stored selections (their rows replace the model's earlier
    rows for the same selector and budget; other rows stay).
    """
    folder = Path(folder)
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise UserError(f"{folder}: not a built FrameSelect folder (no manifest.json); "
                        "run `neurips26 build frameselect`")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("builder", {}).get("name") not in (BUILDER_NAME, *FORMER_NAMES):
        raise UserError(f"{folder}: manifest.json is not a FrameSelect build's")
    selections = read_config(folder, "selections").to_pylist()
    for name, wanted in (("selector", selectors), ("budget", budgets)):
        if wanted:
            missing = sorted(set(wanted) - {r[name] for r in selections})
            if missing:
                raise UserError(f"{folder}: no stored selections with {name} {', '.join(map(str, missing))}")
            selections = [r for r in selections if r[name] in set(wanted)]
    answering = answerer(model, **answerer_options)
    rows: list[dict[str, Any]] = []
    for name in sorted({r["benchmark"] for r in selections}):
        questions = bench.load(name, _benchmark_folder(raw, name))
        rows += runner.answer_rows([r for r in selections if r["benchmark"] == name], questions, answering, progress)
    done = {(r["benchmark"], r["selector"], r["budget"]) for r in rows}
    kept = [r for r in read_config(folder, "results").to_pylist()
            if not (r["evaluator"] == "answer" and r["answering_model"] == answering.name
                    and (r["benchmark"], r["selector"], r["budget"]) in done)]
    specs = _specs()
    specs["selections"].shards = {split: [hubfolder.Shard(**s) for s in shards]
                                  for split, shards in manifest["configs"]["selections"].items()}
    with hubfolder.building(folder, keep=True) as stage:  # the folder changes as a whole or not at all
        hubfolder.write_table(stage, specs["results"], _sort_results(kept + rows))
        _finish(stage, list(specs.values()), manifest["builder"]["parameters"], manifest["inputs"]["sha256"],
                bool(manifest.get("demo")))
    return rows


def render_card(out: Path, configs: list[hubfolder.ConfigSpec], parameters: dict[str, Any],
                repo: str = "frameselect") -> str:
    """The card's prose with this build's counts filled in."""
    template = Template(resources.files("neurips26.cards").joinpath("frameselect.md").read_text(encoding="utf-8"))
    selections = read_config(out, "selections")
    results = read_config(out, "results")
    questions = {(b, q) for b, q in zip(selections["benchmark"].to_pylist(), selections["question_id"].to_pylist(),
                                        strict=True)}
    models = sorted({m for m in results["answering_model"].to_pylist() if m})

    def fields(schema: pa.Schema) -> str:
        lines = ["| field | type | description |", "|---|---|---|"]
        return "\n".join(lines + [f"| `{f.name}` | {f.type} | {(f.metadata or {}).get(b'description', b'').decode()} |"
                                  for f in schema])

    return template.substitute(
        repo=repo, n_selections=f"{selections.num_rows:,}", n_questions=len(questions),
        benchmarks=", ".join(parameters["benchmarks"]), n_selectors=len(parameters["selectors"]),
        selectors=", ".join(parameters["selectors"]), budgets=", ".join(map(str, parameters["budgets"])),
        encoder=parameters["encoder"], candidate_fps=parameters["candidate_fps"], seed=parameters["seed"],
        n_results=f"{results.num_rows:,}", models=", ".join(models) or "none yet",
        origin="Built on the generated (synthetic) releases unless `--raw` named real ones.",
        config_table="\n".join(f"| `{c.name}` | {c.rows():,} | {c.description} |" for c in configs),
        selection_fields=fields(SELECTIONS), result_fields=fields(RESULTS),
    )
