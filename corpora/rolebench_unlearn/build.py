"""Build RoleBench-Unlearn from RoleBench's released files into a Hub-ready dataset folder.

Input contract (``--raw DIR``, RoleBench's own layout)::

    DIR/rolebench-eng/<variant>/role_specific/{train,test}.jsonl   one record per line:
        {"role": str, "question": str, "generated": [reference answers], "type": str | [str]}
    DIR/profiles-eng/desc.json                                     optional: {role: description}

Every ``*.jsonl`` under ``DIR/rolebench-eng`` is an input file and is counted once:
``parsed`` (a ``role_specific`` file), ``skipped`` (``general/`` instructions and
``rolegpt_baseline.jsonl`` model outputs, which are not role-specific reference
answers) or ``rejected`` (not UTF-8). RoleBench's own train/test division is not
used: the splits are re-drawn by sha256 (see ``splits.py``), so they do not
depend on which files are present.

Records: whitespace is normalised; a record without a role, a question or a
non-empty reference answer, a line that is not a JSON object, and a record of an
unknown role go to the ``errors`` config. Known roles are the keys of
``desc.json`` when it is present, else the roles with at least
``MIN_ROLE_RECORDS`` valid records (so a mistyped role name is caught). The
same (role, question) in several files is one record with the references merged.
``records in = kept + duplicate + rejected``.

Configs: ``records`` (train/test), ``roles``, ``forget01``/``forget05``/``forget10``
(splits forget_train, forget_test, retain_train, retain_test), ``general`` (a
small general instruction set written by the project, for language quality)
and ``errors``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa

from neurips26 import __version__, hubfolder
from neurips26.hubfolder import column

from . import splits
from .card import META, render_card

BUILDER_VERSION = "1.0.0"
SAMPLE_DIR = Path(__file__).parent / "sample"
GENERAL_FILE = Path(__file__).parent / "general.jsonl"
MIN_ROLE_RECORDS = 5
FORGET_SPLITS = ("forget_train", "forget_test", "retain_train", "retain_test")


class BuildError(ValueError):
    """The build cannot start (no raw folder, or no RoleBench files in it)."""



STR, INT, LIST = pa.string(), pa.int64(), pa.list_(pa.string())
RECORD_FIELDS = [
    column("record_id", STR, "sha256 of 'role\\nquestion', first 16 hex digits"),
    column("role", STR, "Role (character) the question is addressed to"),
    column("question", STR, "Role-specific question"),
    column("references", LIST, "Reference answers in the role's voice"),
    column("types", LIST, "RoleBench instruction types (script_based, script_agnostic)"),
]
RECORDS = pa.schema([*RECORD_FIELDS, column("source_files", LIST, "Raw files the record came from")])
FORGET = pa.schema(RECORD_FIELDS)
ROLES = pa.schema([
    column("role", STR, "Role name"),
    column("description", STR, "Role description from profiles-eng/desc.json, if given"),
    column("rank", INT, "Position in sha256 order (the order in which roles become forget targets)"),
    column("records", INT, "Records of the role"),
    column("train", INT, "Train records"),
    column("test", INT, "Test (held-out) records"),
    column("references", INT, "Reference answers over all its records"),
    column("forget_splits", LIST, "Forget sets the role is a target of"),
])
GENERAL = pa.schema([
    column("instruction_id", STR, "Stable id (g01, g02, ...)"),
    column("instruction", STR, "General instruction, no role"),
    column("references", LIST, "Reference answers"),
])
ERRORS = pa.schema([
    column("source_file", STR, "File (relative to the raw folder)"),
    column("line", INT, "Line number (0 for a whole file)"),
    column("role", STR, "Role of the record, if known"),
    column("reason", STR, "What is wrong"),
])


@dataclass
class FileReport:
    path: str
    sha256: str
    status: str  # parsed, skipped or rejected
    records: int = 0
    reason: str | None = None


@dataclass
class BuildReport:
    files_in: int = 0
    files_parsed: int = 0
    files_skipped: int = 0
    files_rejected: int = 0
    records_in: int = 0
    records_kept: int = 0
    records_duplicate: int = 0
    records_rejected: int = 0
    roles: int = 0
    references: int = 0
    forget_roles: dict[str, list[str]] = field(default_factory=dict)

    @property
    def reconciles(self) -> bool:
        return (self.files_in == self.files_parsed + self.files_skipped + self.files_rejected
                and self.records_in == self.records_kept + self.records_duplicate + self.records_rejected)

    @property
    def problems(self) -> int:
        return self.files_rejected + self.records_rejected

    def summary(self) -> str:
        """One line for the CLI: counts, and whether the files and records reconcile."""
        return (f"{self.records_kept:,} records of {self.roles} roles; files in {self.files_in} = parsed "
                f"{self.files_parsed} + skipped {self.files_skipped} + rejected {self.files_rejected}; records in "
                f"{self.records_in:,} = kept {self.records_kept:,} + duplicate {self.records_duplicate} + rejected "
                f"{self.records_rejected} ({'reconciles' if self.reconciles else 'DOES NOT RECONCILE'}); targets "
                + ", ".join(f"{k} {len(v)}" for k, v in self.forget_roles.items()))


def clean(text: str) -> str:
    return " ".join(text.split())


def parse_record(obj: object) -> tuple[dict | None, str | None]:
    """(record, None) for a valid RoleBench record, else (None, reason)."""
    if not isinstance(obj, dict):
        return None, "not a JSON object"
    role, question, generated = obj.get("role"), obj.get("question"), obj.get("generated")
    if not isinstance(role, str) or not clean(role):
        return None, "missing role"
    if not isinstance(question, str) or not clean(question):
        return None, "missing question"
    if isinstance(generated, str):
        generated = [generated]
    if not isinstance(generated, list):
        return None, "missing generated (the reference answers)"
    references = list(dict.fromkeys(clean(g) for g in generated if isinstance(g, str) and clean(g)))
    if not references:
        return None, "no non-empty reference answer"
    types = obj.get("type") or []
    types = [types] if isinstance(types, str) else [t for t in types if isinstance(t, str)]
    return {"role": clean(role), "question": clean(question), "references": references,
            "types": sorted(set(types))}, None


def classify(rel: Path) -> str | None:
    """None when the file is parsed, else why it is skipped."""
    if rel.name == "rolegpt_baseline.jsonl":
        return "RoleGPT baseline outputs, not reference answers"
    if "role_specific" not in rel.parts:
        return "not a role_specific file (general instructions are not used)"
    return None


def read_raw(raw: Path, files: list[FileReport], errors: list[dict]) -> list[tuple[dict, str, int]]:
    """Valid records with (source file, line); bad lines and files go to ``errors`` and ``files``."""
    root = raw / "rolebench-eng"
    if not root.is_dir():
        raise BuildError(f"{raw}: no rolebench-eng/ folder (--raw takes the folder that holds RoleBench's "
                         "rolebench-eng/)")
    records = []
    for path in sorted(p for p in root.rglob("*.jsonl") if p.is_file()):
        rel = path.relative_to(raw)
        report = FileReport(rel.as_posix(), hubfolder.sha256_file(path), "parsed")
        files.append(report)
        if (why := classify(rel.relative_to("rolebench-eng"))) is not None:
            report.status, report.reason = "skipped", why
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            report.status, report.reason = "rejected", f"not UTF-8 text (byte {exc.start})"
            errors.append({"source_file": report.path, "line": 0, "role": None, "reason": report.reason})
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            report.records += 1
            try:
                record, why = parse_record(json.loads(line))
            except json.JSONDecodeError as exc:
                record, why = None, f"not valid JSON ({exc.msg})"
            if record is None:
                errors.append({"source_file": report.path, "line": number, "role": _role_of(line), "reason": why})
            else:
                records.append((record, report.path, number))
    if not any(f.status == "parsed" for f in files):
        raise BuildError(f"{root}: no role_specific/*.jsonl files")
    return records


def _role_of(line: str) -> str | None:
    try:
        role = json.loads(line).get("role")
    except (json.JSONDecodeError, AttributeError):
        return None
    return clean(role) if isinstance(role, str) and clean(role) else None


def read_descriptions(raw: Path) -> dict[str, str] | None:
    """{role: description} from profiles-eng/desc.json, or None when absent."""
    path = raw / "profiles-eng" / "desc.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BuildError(f"{path}: not a JSON file ({exc})") from None
    if isinstance(data, list):
        return {clean(str(r)): "" for r in data}
    if not isinstance(data, dict):
        raise BuildError(f"{path}: expected an object {{role: description}} or a list of roles")
    return {clean(str(k)): clean(v) if isinstance(v, str) else "" for k, v in data.items()}


def merge(candidates: list[tuple[dict, str, int]], known: set[str] | None, report: BuildReport,
          errors: list[dict]) -> dict[tuple[str, str], dict]:
    """Unknown roles rejected; the same (role, question) merged into one record."""
    if known is None:
        counts: dict[str, set[str]] = {}
        for record, _, _ in candidates:
            counts.setdefault(record["role"], set()).add(record["question"])
        known = {role for role, questions in counts.items() if len(questions) >= MIN_ROLE_RECORDS}
        why = f"unknown role (fewer than {MIN_ROLE_RECORDS} records and no profiles-eng/desc.json)"
    else:
        why = "unknown role (not in profiles-eng/desc.json)"
    merged: dict[tuple[str, str], dict] = {}
    for record, source, line in candidates:
        if record["role"] not in known:
            errors.append({"source_file": source, "line": line, "role": record["role"], "reason": why})
            report.records_rejected += 1
            continue
        key = (record["role"], record["question"])
        if key in merged:
            kept = merged[key]
            kept["references"] = list(dict.fromkeys(kept["references"] + record["references"]))
            kept["types"] = sorted(set(kept["types"]) | set(record["types"]))
            kept["source_files"] = sorted(set(kept["source_files"]) | {source})
            report.records_duplicate += 1
            continue
        merged[key] = {"record_id": splits.sha(f"{key[0]}\n{key[1]}")[:16], **record, "source_files": [source]}
    return merged


def read_general() -> list[dict]:
    rows = [json.loads(line) for line in GENERAL_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{"instruction_id": f"g{i:02d}", "instruction": r["instruction"], "references": r["references"]}
            for i, r in enumerate(rows, start=1)]


def build(raw: Path | None = None, out: Path = Path("rolebench_unlearn"), workers: int = 1,
          progress: Callable[[int, int], None] | None = None) -> BuildReport:
    """Build the RoleBench-Unlearn folder at ``out`` from ``raw`` (default: the embedded sample).

    ``workers`` is accepted for the common builder signature; the input is small enough for one process.
    """
    is_sample = raw is None
    raw = Path(raw or SAMPLE_DIR).resolve()
    if not raw.is_dir():
        raise BuildError(f"{raw}: raw folder not found")
    files: list[FileReport] = []
    errors: list[dict] = []
    descriptions = read_descriptions(raw)
    candidates = read_raw(raw, files, errors)
    report = BuildReport()
    report.records_in = sum(f.records for f in files)
    report.records_rejected = len([e for e in errors if e["line"]])
    merged = merge(candidates, set(descriptions) if descriptions is not None else None, report, errors)
    if not merged:
        raise BuildError(f"{raw}: no valid records")
    report.records_kept = len(merged)
    for f in files:
        report.files_in += 1
        setattr(report, f"files_{f.status}", getattr(report, f"files_{f.status}") + 1)

    by_role: dict[str, list[dict]] = {}
    for record in merged.values():
        by_role.setdefault(record["role"], []).append(record)
    test_ids: set[str] = set()
    for group in by_role.values():
        held_out = splits.test_questions(r["question"] for r in group)
        test_ids |= {r["record_id"] for r in group if r["question"] in held_out}
    forget = splits.forget_sets(by_role)
    report.forget_roles = forget
    report.roles, report.references = len(by_role), sum(len(r["references"]) for r in merged.values())
    if progress:
        progress(1, 2)

    out = Path(out)
    hubfolder.reset_folder(out)
    records = list(merged.values())
    specs = {"records": hubfolder.ConfigSpec("records", RECORDS, "Every record; train/test split within each role.",
                                             default=True)}
    for split in ("train", "test"):
        rows = [r for r in records if (r["record_id"] in test_ids) == (split == "test")]
        hubfolder.write_table(out, specs["records"], splits.interleave(rows), split)

    ranks = {role: i for i, role in enumerate(splits.role_order(by_role))}
    role_rows = [{
        "role": role, "description": (descriptions or {}).get(role, ""), "rank": ranks[role],
        "records": len(group), "train": sum(r["record_id"] not in test_ids for r in group),
        "test": sum(r["record_id"] in test_ids for r in group),
        "references": sum(len(r["references"]) for r in group),
        "forget_splits": [name for name, targets in forget.items() if role in targets],
    } for role, group in sorted(by_role.items())]
    specs["roles"] = hubfolder.ConfigSpec("roles", ROLES, "One row per role: counts and forget sets.")
    hubfolder.write_table(out, specs["roles"], role_rows)

    for name, targets in forget.items():
        specs[name] = hubfolder.ConfigSpec(name, FORGET, f"{len(targets)} target role(s) to forget and the "
                                                         f"{len(by_role) - len(targets)} others to retain.")
        for split in FORGET_SPLITS:
            want_target, want_test = split.startswith("forget"), split.endswith("test")
            rows = [{k: r[k] for k in FORGET.names} for r in records
                    if (r["role"] in targets) == want_target and (r["record_id"] in test_ids) == want_test]
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
    source = "the embedded sample of invented personas" if is_sample else "RoleBench (English)"
    inputs = {f.path: f.sha256 for f in files}
    if descriptions is not None:
        inputs["profiles-eng/desc.json"] = hubfolder.sha256_file(raw / "profiles-eng" / "desc.json")
    inputs["<package>/general.jsonl"] = hubfolder.sha256_file(GENERAL_FILE)
    hubfolder.write_manifest(out, configs, {"name": "neurips26.corpora.rolebench_unlearn",
                                            "version": BUILDER_VERSION, "package_version": __version__,
                                            "source": source}, inputs)
    hubfolder.write_card(out, configs, META, render_card(report, role_rows, configs, source))
    hubfolder.write_croissant(out, configs, META)
    payload = {**asdict(report), "reconciles": report.reconciles, "files": [asdict(f) for f in files]}
    (out / "build_report.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    if progress:
        progress(2, 2)
    return report
