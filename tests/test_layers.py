"""Layers and seams of the core, the CLI, RoleBench-Unlearn and the unlearning, IPG and label-shift methods.

Static checks over the source: the core imports nothing above it, no import cycles inside a package, a
function-local import of a project module only for laziness (with a ``# lazy:`` comment), environment
variables read only by ``neurips26.settings``, every registry entry documented.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"neurips26": ROOT / "neurips26", "neurips26.corpora": ROOT / "corpora",
            "neurips26.tasks": ROOT / "tasks", "neurips26.methods": ROOT / "methods"}
AREA = ["neurips26", "corpora/__init__.py", "corpora/unregistered.py", "corpora/rolebench_unlearn",
        "methods/unlearn", "methods/ipg", "methods/labelshift", "tasks/__init__.py", "tasks/evaluation.py",
        "tasks/rolebench_unlearn"]
OWNED_ELSEWHERE = {"neurips26/results.py", "neurips26/protocol.py"}
ABOVE_CORE = ("neurips26.corpora", "neurips26.tasks", "neurips26.methods", "neurips26.leaderboard",
              "neurips26.space", "neurips26.cli")


def area_files() -> list[Path]:
    files = []
    for entry in AREA:
        path = ROOT / entry
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [f for f in files if f.relative_to(ROOT).as_posix() not in OWNED_ELSEWHERE]


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    for name, folder in PACKAGES.items():
        if path.is_relative_to(folder):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            return ".".join([name, *parts])
    raise AssertionError(rel)


def imports(path: Path) -> list[tuple[str, int, bool]]:
    """(absolute module, line, inside a function) of every project import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    local = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
             for n in ast.walk(f)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith("neurips26"):
                found.append((name, node.lineno, id(node) in local))
    return found


def test_core_imports_nothing_above_it() -> None:
    core = [f for f in area_files() if f.parent == ROOT / "neurips26" or f.parent.parent == ROOT / "neurips26"]
    core = [f for f in core if not f.is_relative_to(ROOT / "neurips26" / "cli")]
    bad = [f"{f.relative_to(ROOT)}:{line} imports {name}" for f in core for name, line, _ in imports(f)
           if name.startswith(ABOVE_CORE)]
    assert not bad, bad


def test_function_local_project_imports_are_only_for_laziness() -> None:
    bad = []
    for f in area_files():
        lines = f.read_text(encoding="utf-8").splitlines()
        for name, line, local in imports(f):
            if local and "# lazy:" not in lines[line - 1]:
                bad.append(f"{f.relative_to(ROOT)}:{line} {name}")
    assert not bad, sorted(set(bad))


@pytest.mark.parametrize("package", ["neurips26.corpora.rolebench_unlearn", "neurips26.methods.unlearn",
                                     "neurips26.methods.ipg", "neurips26.methods.labelshift",
                                     "neurips26.hubfolder", "neurips26.cli"])
def test_no_import_cycles_inside_a_package(package: str) -> None:
    files = {module_name(f): f for f in area_files()}

    def target(name: str) -> str | None:
        """The module of the package an imported name refers to (``from .x import y``: x or x.y)."""
        for candidate in (name, name.rpartition(".")[0]):
            if candidate in files and candidate.startswith(package):
                return candidate
        return None

    graph = {m: {t for n, _, _ in imports(f) if (t := target(n)) not in (None, m)}
             for m, f in files.items() if m.startswith(package)}
    seen: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        if seen.get(node) == 1:
            raise AssertionError(f"import cycle: {' -> '.join(path + [node])}")
        if seen.get(node) == 2:
            return
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, path + [node])
        seen[node] = 2

    for node in sorted(graph):
        visit(node, [])


def test_only_settings_reads_neurips26_variables() -> None:
    bad = []
    for f in area_files():
        if f == ROOT / "neurips26" / "settings.py":
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("NEURIPS26_"):
                bad.append(f"{f.relative_to(ROOT)}:{node.lineno} {node.value}")
    assert not bad, bad


def test_no_file_over_400_lines_and_most_under_300() -> None:
    sizes = {f.relative_to(ROOT).as_posix(): len(f.read_text(encoding="utf-8").splitlines()) for f in area_files()}
    assert not [f for f, n in sizes.items() if n > 400], sizes
    assert not [f for f, n in sizes.items() if n > 300], [f for f, n in sizes.items() if n > 300]


def test_every_registry_entry_is_documented() -> None:
    from neurips26.corpora import RESOURCES
    from neurips26.methods.unlearn.methods import METHODS

    from neurips26 import registry

    assert "rolebench_unlearn" in RESOURCES and "npo" in METHODS
    undocumented = [f"{kind}:{name}" for kind, reg in registry.ALL.items() for name, obj in reg.items()
                    if not (inspect.getdoc(obj) or "").strip()]
    assert not undocumented, undocumented
