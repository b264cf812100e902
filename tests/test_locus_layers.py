"""LOCUS modules form layers: no import cycles (function-local imports counted), records at the bottom."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"neurips26.corpora.locus": ROOT / "corpora" / "locus",
            "neurips26.methods.locus_analysis": ROOT / "methods" / "locus_analysis"}


def modules() -> dict[str, Path]:
    out = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            out[name] = path
    return out


def imports(name: str, path: Path) -> list[tuple[str, bool, str]]:
    """(imported project module, whether inside a function, the source line) for every import of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = path.read_text(encoding="utf-8").splitlines()
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    local = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
             for n in ast.walk(f)}
    typing_only = {id(n) for branch in ast.walk(tree) if isinstance(branch, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(branch.test) for n in ast.walk(branch)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[:len(package.split(".")) - node.level + 1], *filter(None, [base])])
            targets = [base, *(f"{base}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        if id(node) in typing_only:
            continue
        for target in targets:
            if target.startswith("neurips26."):
                found.append((target, id(node) in local, lines[node.lineno - 1]))
    return found


def test_no_import_cycles_counting_local_imports() -> None:
    mods = modules()
    graph = {name: {t for t, _, _ in imports(name, path) if t in mods and t != name} for name, path in mods.items()}
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                pytest.fail("import cycle: " + " -> ".join([*stack[stack.index(nxt):], nxt]))
            if nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_records_import_nothing_of_their_package() -> None:
    mods = modules()
    for name in ("neurips26.corpora.locus.records", "neurips26.corpora.locus.formats.base"):
        assert not [t for t, _, _ in imports(name, mods[name]) if t.startswith("neurips26.corpora.locus")], name


def test_local_imports_of_project_modules_say_why() -> None:
    for name, path in modules().items():
        for target, local, line in imports(name, path):
            if local:
                assert "# lazy:" in line, f"{path.relative_to(ROOT)}: local import of {target} without '# lazy:'"
