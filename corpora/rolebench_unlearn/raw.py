"""Reading RoleBench's released files: records, role descriptions and the general instruction set.

See :mod:`.build` for the input contract. Every bad line or file is kept, with its reason, for the
``errors`` config; the counts go to the :class:`~.records.BuildReport`.
"""

from __future__ import annotations

import json
from pathlib import Path

from neurips26 import hubfolder
from neurips26.hubfolder import rawfiles

from . import splits
from .records import BuildError, BuildReport, FileReport

MIN_ROLE_RECORDS = 5
GENERAL_FILE = Path(__file__).parent / "general.jsonl"


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
    found, refused = rawfiles.readable(root, raw)
    for path, why in refused:  # links out of the raw folder, to folders or broken: never read
        files.append(FileReport(path.relative_to(raw).as_posix(), "", "rejected", reason=why))
        errors.append({"source_file": files[-1].path, "line": 0, "role": None, "reason": why})
    for path in (p for p in found if p.suffix == ".jsonl"):
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
            except RecursionError:
                record, why = None, "JSON nested too deeply to read"
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
    except (json.JSONDecodeError, AttributeError, RecursionError):
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
    """The project's general instruction set (no role), with stable ids g01, g02, ..."""
    rows = [json.loads(line) for line in GENERAL_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{"instruction_id": f"g{i:02d}", "instruction": r["instruction"], "references": r["references"]}
            for i, r in enumerate(rows, start=1)]
