"""Reading RoleBench's released files (English and Chinese, role_specific and general parts): records, role
descriptions and the project's general instruction set.

See :mod:`.build` for the input contract. Every bad line or file is kept, with its reason, for the
``errors`` config; the counts go to the :class:`~.records.BuildReport`.
"""

from __future__ import annotations

import json
from pathlib import Path

from neurips26 import hubfolder
from neurips26.hubfolder import rawfiles

from . import splits
from .records import LANGUAGES, PARTS, PROFILES, BuildError, BuildReport, FileReport

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


def classify(rel: Path) -> tuple[str | None, str | None]:
    """(part, None) for a file that is parsed, (None, why) for one that is skipped; ``rel`` is relative to the
    language folder (rolebench-eng/ or rolebench-zh/)."""
    if rel.name == "rolegpt_baseline.jsonl":
        return None, "RoleGPT baseline outputs, not reference answers"
    for part in PARTS:
        if part in rel.parts:
            return part, None
    return None, "not in a role_specific/ or general/ folder"


def read_raw(raw: Path, files: list[FileReport], errors: list[dict]) -> list[tuple[dict, str, int]]:
    """Valid records (with ``language`` and ``part``) with (source file, line); bad lines and files go to
    ``errors`` and ``files``."""
    roots = [(raw / folder, language) for folder, language in LANGUAGES.items() if (raw / folder).is_dir()]
    if not roots:
        raise BuildError(f"{raw}: no rolebench-eng/ or rolebench-zh/ folder (--raw takes the folder that holds "
                         "RoleBench's rolebench-eng/ and/or rolebench-zh/)")
    records = []
    for root, language in roots:
        found, refused = rawfiles.readable(root, raw)
        for path, why in refused:  # links out of the raw folder, to folders or broken: never read
            files.append(FileReport(path.relative_to(raw).as_posix(), "", "rejected", reason=why))
            errors.append({"source_file": files[-1].path, "line": 0, "role": None, "reason": why})
        for path in (p for p in found if p.suffix == ".jsonl"):
            rel = path.relative_to(raw)
            report = FileReport(rel.as_posix(), hubfolder.sha256_file(path), "parsed")
            files.append(report)
            part, why = classify(path.relative_to(root))
            if part is None:
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
                    errors.append({"source_file": report.path, "line": number, "role": _role_of(line),
                                   "reason": why})
                else:
                    records.append(({"language": language, "part": part, **record}, report.path, number))
    if not any(f.status == "parsed" for f in files):
        raise BuildError(f"{raw}: no role_specific/*.jsonl or general/*.jsonl files under "
                         + " or ".join(f"{root.name}/" for root, _ in roots))
    return records


def _role_of(line: str) -> str | None:
    try:
        role = json.loads(line).get("role")
    except (json.JSONDecodeError, AttributeError, RecursionError):
        return None
    return clean(role) if isinstance(role, str) and clean(role) else None


def read_descriptions(raw: Path) -> dict[str, dict[str, str]]:
    """{language: {role: description}} from profiles-eng/desc.json and profiles-zh/desc.json, where present."""
    found = {}
    for language, name in PROFILES.items():
        path = raw / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BuildError(f"{path}: not a JSON file ({exc})") from None
        if isinstance(data, list):
            found[language] = {clean(str(r)): "" for r in data}
        elif isinstance(data, dict):
            found[language] = {clean(str(k)): clean(v) if isinstance(v, str) else "" for k, v in data.items()}
        else:
            raise BuildError(f"{path}: expected an object {{role: description}} or a list of roles")
    return found


def record_id(record: dict) -> str:
    """English role_specific records keep the id of the first release (role and question only)."""
    if (record["language"], record["part"]) == ("en", "role_specific"):
        return splits.sha(f"{record['role']}\n{record['question']}")[:16]
    return splits.sha("\n".join(record[k] for k in ("language", "part", "role", "question")))[:16]


def merge(candidates: list[tuple[dict, str, int]], known: dict[str, dict[str, str]], report: BuildReport,
          errors: list[dict]) -> dict[tuple[str, str, str, str], dict]:
    """Unknown roles rejected; the same (language, part, role, question) merged into one record.

    A language's known roles are those of its desc.json when given, else the roles with at least
    ``MIN_ROLE_RECORDS`` questions in that language."""
    counts: dict[tuple[str, str], set[str]] = {}
    for record, _, _ in candidates:
        counts.setdefault((record["language"], record["role"]), set()).add(record["question"])
    merged: dict[tuple[str, str, str, str], dict] = {}
    for record, source, line in candidates:
        language, role = record["language"], record["role"]
        if language in known:
            ok, why = role in known[language], f"unknown role (not in {PROFILES[language]})"
        else:
            ok = len(counts[language, role]) >= MIN_ROLE_RECORDS
            why = f"unknown role (fewer than {MIN_ROLE_RECORDS} records and no {PROFILES[language]})"
        if not ok:
            errors.append({"source_file": source, "line": line, "role": role, "reason": why})
            report.records_rejected += 1
            continue
        key = (language, record["part"], role, record["question"])
        if key in merged:
            kept = merged[key]
            kept["references"] = list(dict.fromkeys(kept["references"] + record["references"]))
            kept["types"] = sorted(set(kept["types"]) | set(record["types"]))
            kept["source_files"] = sorted(set(kept["source_files"]) | {source})
            report.records_duplicate += 1
            continue
        merged[key] = {"record_id": record_id(record), **record, "source_files": [source]}
    return merged


def read_general() -> list[dict]:
    """The project's general instruction set (no role), with stable ids g01, g02, ..."""
    rows = [json.loads(line) for line in GENERAL_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{"instruction_id": f"g{i:02d}", "instruction": r["instruction"], "references": r["references"]}
            for i, r in enumerate(rows, start=1)]
