"""Build RoleBench-Unlearn from RoleBench's released files into a Hub-ready dataset folder.

Input contract (``--raw DIR``, RoleBench's layout as released)::

    DIR/rolebench-eng/{instruction,role}-generalization/{role_specific,general}/*.jsonl
    DIR/rolebench-zh/{role_specific,general}/*.jsonl                one record per line:
        {"role": str, "question": str, "generated": [reference answers], "type": str | [str] (optional)}
    DIR/profiles-eng/desc.json, DIR/profiles-zh/desc.json          optional: {role: description}

Either language folder may be missing, not both. Every ``*.jsonl`` under them is an input file and is counted
once: ``parsed`` (a ``role_specific/`` or ``general/`` file; its records get ``language`` en or zh and ``part``
role_specific or general), ``skipped`` (``rolegpt_baseline.jsonl`` model outputs, which are not reference
answers, and files outside those folders) or ``rejected`` (not UTF-8). RoleBench's own train/test division is
not used: the splits are re-drawn by sha256 (see ``splits.py``), so they do not depend on which files are present.

Records: whitespace is normalised; a record without a role, a question or a non-empty reference answer, a line
that is not a JSON object, and a record of an unknown role go to the ``errors`` config. A language's known roles
are the keys of its ``desc.json`` when present, else the roles with at least ``MIN_ROLE_RECORDS`` valid records
in that language (so a mistyped role name is caught). The same (language, part, role, question) in several files
is one record with the references merged. ``records in = kept + duplicate + rejected``.

Forget sets are chosen per language: ``forgetNN`` takes ``max(1, round(NN/100 * n))`` of each language's ``n``
roles, and a target role's records of both parts are forgotten.

The folder's ``manifest.json`` says ``"demo": true`` when it was built from the embedded sample of
invented personas (no ``--raw``), ``false`` when built from RoleBench.

Configs: ``records`` (train/test), ``roles``, ``forget01``/``forget05``/``forget10``
(splits forget_train, forget_test, retain_train, retain_test), ``general`` (a
small general instruction set written by the project, for language quality)
and ``errors``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from neurips26.corpora import RESOURCES

from neurips26 import __version__, hubfolder

from . import splits
from .card import META, render_card
from .raw import GENERAL_FILE, MIN_ROLE_RECORDS, merge, read_descriptions, read_general, read_raw
from .records import (
    ERRORS,
    FORGET,
    FORGET_SPLITS,
    GENERAL,
    PROFILES,
    RECORDS,
    ROLES,
    BuildError,
    BuildReport,
    FileReport,
)

BUILDER_VERSION = "1.1.0"
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}
SAMPLE_DIR = Path(__file__).parent / "sample"
__all__ = ["BUILDER_VERSION", "FORGET_SPLITS", "MIN_ROLE_RECORDS", "SAMPLE_DIR", "BuildError", "BuildReport",
           "build"]


@RESOURCES.register("rolebench_unlearn")
def build(raw: Path | None = None, out: Path = Path("rolebench_unlearn"), workers: int = 1,
          progress: Callable[[int, int], None] | None = None) -> BuildReport:
    """Build the RoleBench-Unlearn folder at ``out`` from ``raw`` (default: the embedded sample).

    ``workers`` is accepted for the common builder signature; the input is small enough for one process.
    """
    raw = Path(raw or SAMPLE_DIR).resolve()
    is_sample = raw == SAMPLE_DIR.resolve()  # the embedded (invented) sample, named or by default
    if not raw.is_dir():
        raise BuildError(f"{raw}: raw folder not found")
    files: list[FileReport] = []
    errors: list[dict] = []
    descriptions = read_descriptions(raw)
    candidates = read_raw(raw, files, errors)
    report = BuildReport()
    report.records_in = sum(f.records for f in files)
    report.records_rejected = len([e for e in errors if e["line"]])
    merged = merge(candidates, descriptions, report, errors)
    if not merged:
        raise BuildError(f"{raw}: no valid records")
    report.records_kept = len(merged)
    for f in files:
        report.files_in += 1
        setattr(report, f"files_{f.status}", getattr(report, f"files_{f.status}") + 1)

    by_role: dict[tuple[str, str], list[dict]] = {}  # (language, role) -> records
    for record in merged.values():
        by_role.setdefault((record["language"], record["role"]), []).append(record)
    test_ids: set[str] = set()
    for group in by_role.values():
        for part in {r["part"] for r in group}:
            held_out = splits.test_questions(r["question"] for r in group if r["part"] == part)
            test_ids |= {r["record_id"] for r in group if r["part"] == part and r["question"] in held_out}
    languages = sorted({language for language, _ in by_role})
    ranks: dict[tuple[str, str], int] = {}
    forget: dict[str, set[tuple[str, str]]] = {name: set() for name in splits.FORGET_SHARES}
    for language in languages:
        roles = [role for lang, role in by_role if lang == language]
        ranks |= {(language, role): i for i, role in enumerate(splits.role_order(roles))}
        for name, targets in splits.forget_sets(roles).items():
            forget[name] |= {(language, role) for role in targets}
    report.forget_roles = {name: [role for _, role in sorted(targets, key=lambda t: (t[0], ranks[t]))]
                           for name, targets in forget.items()}
    report.languages = {language: sum(1 for lang, _ in by_role if lang == language) for language in languages}
    report.roles, report.references = len(by_role), sum(len(r["references"]) for r in merged.values())
    if progress:
        progress(1, 2)

    final = Path(out)
    out = hubfolder.begin_build(final)  # a hidden sibling, renamed into place once complete
    records = list(merged.values())
    specs = {"records": hubfolder.ConfigSpec("records", RECORDS, "Every record; train/test split within each role.",
                                             default=True)}
    for split in ("train", "test"):
        rows = [r for r in records if (r["record_id"] in test_ids) == (split == "test")]
        hubfolder.write_table(out, specs["records"], splits.interleave(rows), split)

    role_rows = [{
        "role": role, "language": language, "description": descriptions.get(language, {}).get(role, ""),
        "rank": ranks[language, role], "records": len(group),
        "train": sum(r["record_id"] not in test_ids for r in group),
        "test": sum(r["record_id"] in test_ids for r in group),
        "references": sum(len(r["references"]) for r in group),
        "forget_splits": [name for name, targets in forget.items() if (language, role) in targets],
    } for (language, role), group in sorted(by_role.items())]
    specs["roles"] = hubfolder.ConfigSpec("roles", ROLES, "One row per role: counts and forget sets.")
    hubfolder.write_table(out, specs["roles"], role_rows)

    for name, targets in forget.items():
        specs[name] = hubfolder.ConfigSpec(name, FORGET, f"{len(targets)} target role(s) to forget and the "
                                                         f"{len(by_role) - len(targets)} others to retain.")
        for split in FORGET_SPLITS:
            want_target, want_test = split.startswith("forget"), split.endswith("test")
            rows = [{k: r[k] for k in FORGET.names} for r in records
                    if ((r["language"], r["role"]) in targets) == want_target
                    and (r["record_id"] in test_ids) == want_test]
            hubfolder.write_table(out, specs[name], splits.interleave(rows), split)

    specs["general"] = hubfolder.ConfigSpec("general", GENERAL, "General instructions (no role) for language "
                                                                "quality, written by the project.")
    hubfolder.write_table(out, specs["general"], read_general(), "test")
    for f in files:
        if f.status == "skipped":
            errors.append({"source_file": f.path, "line": 0, "role": None, "reason": f"skipped: {f.reason}"})
    errors.sort(key=lambda e: (e["source_file"], e["line"], e["reason"]))
    specs["errors"] = hubfolder.ConfigSpec("errors", ERRORS, "Every rejected record or file and every skipped "
                                                             "file, with the reason.")
    hubfolder.write_table(out, specs["errors"], errors)

    configs = list(specs.values())
    source = ("the embedded sample of invented personas" if is_sample
              else f"RoleBench ({', '.join(LANGUAGE_NAMES[lang] for lang in languages)})")
    inputs = {f.path: f.sha256 for f in files}
    for language in descriptions:
        inputs[PROFILES[language]] = hubfolder.sha256_file(raw / PROFILES[language])
    inputs["<package>/general.jsonl"] = hubfolder.sha256_file(GENERAL_FILE)
    hubfolder.write_manifest(out, configs, {"name": "neurips26.corpora.rolebench_unlearn",
                                            "version": BUILDER_VERSION, "package_version": __version__,
                                            "source": source}, inputs, demo=is_sample)
    hubfolder.write_card(out, configs, META, render_card(report, role_rows, configs, source))
    hubfolder.write_croissant(out, configs, META)
    (out / "build_report.json").write_text(report.to_json(files=[asdict(f) for f in files]), encoding="utf-8")
    hubfolder.commit_build(out, final)
    if progress:
        progress(2, 2)
    return report
