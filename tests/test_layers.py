"""The package's layering: no import cycles (counting function-local imports), lazy imports marked,
every module importable on its own, every registered component documented, and every dependency going down
the layers of docs/adding.md.

The import graph is read from the source with ``ast``, so a cycle hidden in a function body counts, and so does
a module named in a string (``importlib.import_module("neurips26.x.y")``, a tuple of module paths, a
``"module:object"`` reference): a lower module that names an upper one in a string depends on it all the same.
Nodes are modules; a second check merges them into subpackages (``neurips26.corpora.locus``,
``neurips26.methods.frameselect``, ``neurips26.tasks``, each core module such as ``neurips26.sql``), so a loop
between two packages fails even when no single pair of modules closes it.

Components are found through the entry points of ``pyproject.toml`` (:mod:`neurips26.registry`): the rule there
is that an entry point in a registry's group may name any module at the registry's layer or above (it imports
the registry to register), never one below it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAZY_MARK = "# lazy:"  # a function-local import of a project module must say why it is lazy


def package_dirs() -> dict[str, Path]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {pkg: ROOT / folder for pkg, folder in config["tool"]["setuptools"]["package-dir"].items()}


def modules() -> dict[str, Path]:
    """Every project module (task ``utils.py`` files included) by dotted name."""
    dirs = package_dirs()
    nested = {folder for pkg, folder in dirs.items() if pkg != "neurips26"}
    found: dict[str, Path] = {}
    for pkg, folder in dirs.items():
        for path in sorted(folder.rglob("*.py")):
            if pkg == "neurips26" and any(path.is_relative_to(n) for n in nested):
                continue
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([pkg, *parts])] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """(target module, line, function-local) for each import of a project module in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[tuple[str, int, bool]] = []

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            module = node.module or ""
            if node.level:
                module = ".".join(base[: len(base) - node.level + 1] + ([module] if module else []))
            names = [module] + [f"{module}.{a.name}" for a in node.names]
        return [t for t in names if t in known and t != name]

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend((t, child.lineno, local) for t in targets(child))
            visit(child, local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return found


MODULE_PATH = re.compile(r"neurips26(\.\w+)+(:[\w.]+)?")


def string_references(name: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int]]:
    """(module, line) for each string in ``path`` that names another project module: a whole string that is a
    module path or a ``module:object`` reference, or an f-string that starts with a package path
    (``f"neurips26.corpora.{name}.build"`` names ``neurips26.corpora``)."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_PATH.fullmatch(node.value):
            target = node.value.split(":", 1)[0]
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant) \
                and str(node.values[0].value).startswith("neurips26."):
            head = str(node.values[0].value)
            target = head[:-1] if head.endswith(".") else head.rsplit(".", 1)[0]
        else:
            continue
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
        if target in known and target != name:
            found.append((target, node.lineno))
    return found


def import_graph() -> tuple[dict[str, set[str]], list[tuple[str, int, str]]]:
    """Module -> imported modules (top-level and local) and the modules it names in strings, and the local
    imports as (module, line, target)."""
    known = modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    local: list[tuple[str, int, str]] = []
    for name, path in known.items():
        for target, line, is_local in _imports(name, path, known):
            graph[name].add(target)
            if is_local:
                local.append((name, line, target))
        graph[name].update(target for target, _ in string_references(name, path, known))
    return graph, local


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def package_of(module: str) -> str:
    """The subpackage a module belongs to: ``neurips26.corpora.locus``, ``neurips26.tasks``, ``neurips26.sql``."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[1] in ("corpora", "methods"):
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def test_no_module_import_cycles():
    graph, _ = import_graph()
    assert cycles(graph) == [], "import cycles between modules (function-local imports counted)"


def test_no_package_import_cycles():
    graph, _ = import_graph()
    packages: dict[str, set[str]] = defaultdict(set)
    why: dict[tuple[str, str], str] = {}
    for source, targets in graph.items():
        for target in targets:
            a, b = package_of(source), package_of(target)
            packages[a]
            packages[b]
            if a != b:
                packages[a].add(b)
                why.setdefault((a, b), f"{source} -> {target}")
    found = cycles(packages)
    detail = [[why[(a, b)] for a in c for b in c if (a, b) in why] for c in found]
    assert found == [], f"import cycles between subpackages: {detail}"


def test_local_imports_say_why():
    _, local = import_graph()
    known = modules()
    unmarked = []
    for module, line, target in local:
        text = known[module].read_text(encoding="utf-8").splitlines()
        statement = " ".join(text[line - 1: line + 2])
        if LAZY_MARK not in statement:
            unmarked.append(f"{known[module].relative_to(ROOT)}:{line} imports {target}")
    assert unmarked == [], "function-local imports of project modules need a '# lazy: <why>' comment"


@pytest.mark.parametrize("order", ["sorted", "reversed"])
def test_every_module_imports_in_any_order(order):
    names = sorted((m for m in modules() if not m.endswith(".__main__")), reverse=order == "reversed")
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    run = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]


def test_every_registered_component_is_documented():
    from neurips26 import registry

    for name in modules():
        if not name.endswith(".__main__"):  # a script: importing it runs it
            __import__(name)
    guide = (ROOT / "docs" / "adding.md").read_text(encoding="utf-8")
    undocumented = []
    for kind, reg in registry.ALL.items():
        assert f"`{kind}`" in guide, f"docs/adding.md does not say where a new {kind} goes"
        assert f"`{reg.group}`" in guide, f"docs/adding.md does not name the entry-point group of the {kind}"
        for entry, obj in reg.items():
            if not (getattr(obj, "__doc__", None) or "").strip():
                undocumented.append(f"{kind} {entry!r}")
    assert undocumented == [], "registered components without a docstring"


CORE_ABOVE = ("neurips26.corpora", "neurips26.tasks", "neurips26.methods", "neurips26.leaderboard",
              "neurips26.space", "neurips26.cli")


def test_core_imports_nothing_above_it():
    graph, _ = import_graph()
    core = [m for m in graph if not m.startswith(CORE_ABOVE)]
    bad = [f"{m} -> {t}" for m in core for t in graph[m] if t.startswith(CORE_ABOVE)]
    assert bad == [], "core modules (neurips26.*) import from the layers above them"


# docs/adding.md's layers, top first; any other neurips26 module is the core (1)
LAYERS = (("neurips26.cli", 7), ("neurips26.space", 6), ("neurips26.leaderboard", 5), ("neurips26.tasks", 4),
          ("neurips26.methods", 3), ("neurips26.corpora", 2))


def layer(module: str) -> int:
    return next((rank for package, rank in LAYERS if module == package or module.startswith(package + ".")), 1)


# named upward on purpose, each with its reason (keep this short: every entry is a dependency the layers do not show)
LOCATED_NOT_IMPORTED = {
    ("neurips26.methods.frameselect.evaluators", "neurips26.tasks"):
        "finds the lm-eval task folders (package data) to load a task's utils.py as a file, as lm-eval does",
}


def test_dependencies_only_go_down_the_layers():
    graph, _ = import_graph()
    bad = sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets
                 if layer(t) > layer(m) and (m, t) not in LOCATED_NOT_IMPORTED)
    assert bad == [], "imports, or module names in strings, that go up the layers of docs/adding.md"
    graph_pairs = {(m, t) for m, targets in graph.items() for t in targets}
    assert set(LOCATED_NOT_IMPORTED) <= graph_pairs, "an exception above no longer applies: remove it"


def test_no_module_name_lists():
    """Components are found through entry points, not through lists of module names kept in our modules."""
    known = modules()
    found = []
    for name, path in known.items():
        refs = {line for _, line in string_references(name, path, known)}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.GeneratorExp | ast.ListComp | ast.SetComp) \
                    and any(getattr(child, "lineno", None) in refs for child in ast.walk(node) if child is not node
                            and isinstance(child, ast.Constant | ast.JoinedStr)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == [], "module names listed in code: declare them as entry points in pyproject.toml instead"


def declared_entry_points() -> dict[str, dict[str, str]]:
    """pyproject.toml's entry points of our groups: group -> {name: "module" or "module:object"}."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {group: entries for group, entries in config["project"]["entry-points"].items()
            if group.startswith("neurips26.")}


def registry_owners() -> dict[str, str]:
    """Entry-point group -> the module that defines its registry (from the ``neurips26.registries`` entries)."""
    owners = {}
    for reference in declared_entry_points()["neurips26.registries"].values():
        module, attr = reference.split(":")
        owners[getattr(importlib.import_module(module), attr).group] = module
    return owners


def test_installed_entry_points_are_the_declared_ones():
    declared = {(g, n, v) for g, entries in declared_entry_points().items() for n, v in entries.items()}
    installed = {(p.group, p.name, p.value) for p in importlib.metadata.distribution("neurips26").entry_points
                 if p.group.startswith("neurips26.")}
    assert installed == declared, ("the installed entry points are not pyproject.toml's: run scripts/setup (or "
                                   "pip install --no-deps --no-build-isolation -e .), and delete a neurips26.egg-info "
                                   "folder an in-tree build left here (it shadows the install when run from here)")


def test_entry_points_name_modules_at_or_above_their_registry():
    """An entry point in a registry's group may name any module that imports the registry (so it can register):
    at the registry's layer or above it, never below."""
    known = modules()
    graph, _ = import_graph()
    owners = registry_owners()
    problems = []
    for group, entries in declared_entry_points().items():
        if group == "neurips26.registries":
            continue
        owner = owners.get(group)
        if owner is None:
            problems.append(f"{group}: no registry of this group is named in neurips26.registries")
            continue
        for name, reference in entries.items():
            module = reference.split(":")[0]
            reach, todo = set(), [module]
            while todo:
                for target in graph.get(todo.pop(), ()):
                    if target not in reach:
                        reach.add(target)
                        todo.append(target)
            if module not in known:
                problems.append(f"{group} {name} = {reference}: no such module")
            elif layer(module) < layer(owner):
                problems.append(f"{group} {name} = {reference}: below its registry's module {owner}")
            elif ":" not in reference and owner not in reach and module != owner:
                problems.append(f"{group} {name} = {reference}: never imports {owner}, so registers nothing")
    assert problems == []


def test_every_registry_is_found_through_entry_points():
    """Each registry is named in ``neurips26.registries`` (``neurips26 plugins`` lists it) and its group has our
    entries; the components each group finds are those our modules register."""
    from neurips26 import registry

    for name in modules():
        if not name.endswith(".__main__"):
            __import__(name)
    declared = declared_entry_points()
    found = registry.registries()
    # registries of the package's own modules (the claims harness in bench/ keeps one too, outside the package,
    # and earlier tests of the same run may have imported it)
    ours = {kind: reg for kind, reg in registry.ALL.items()
            if any(module.startswith("neurips26") and any(value is reg for value in vars(sys.modules[module]).values())
                   for module in list(sys.modules) if sys.modules[module] is not None)}
    assert set(ours) <= set(found)
    owners = registry_owners()
    for kind, reg in ours.items():
        assert reg.group in owners, f"{kind}: its registry is not named in the neurips26.registries entry points"
        assert declared.get(reg.group), f"{kind}: no entry point of ours in {reg.group}"
        entries = reg.entries()
        assert entries and {e.distribution for e in entries} == {"neurips26"}, kind


def test_only_settings_reads_neurips26_variables():
    bad = []
    for name, path in modules().items():
        if name == "neurips26.settings":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("NEURIPS26_"):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
    assert bad == [], "NEURIPS26_* variables are read only through neurips26.settings"


def test_modules_stay_small():
    sizes = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in modules().values()}
    assert {f: n for f, n in sizes.items() if n > 400} == {}, "split modules over 400 lines along their seams"
