"""The package's shape: no import cycle among pyscheduler's modules, no file of the live path
(pyscheduler/rpc/) over 400 lines, and the maps a newcomer reads (the README's, the package docstrings')
name every package and module. Imports inside functions and under `if TYPE_CHECKING:` do not run at
import time and are left out."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "pyscheduler"


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in ROOT.rglob("*.py") if "_generated" not in p.parts}


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _top_level_imports(tree: ast.Module, name: str, is_pkg: bool, known: set[str]) -> set[str]:
    out: set[str] = set()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If):
            if not _type_checking(node):
                stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse + node.finalbody)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name if is_pkg else name.rsplit(".", 1)[0]
                for _ in range(node.level - 1):
                    pkg = pkg.rsplit(".", 1)[0]
                base = f"{pkg}.{base}" if base else pkg
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in known:
                    out.add(sub)
                elif base in known:
                    out.add(base)
    out.discard(name)
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    graph = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        graph[name] = _top_level_imports(tree, name, path.name == "__init__.py", known)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return [*path[path.index(m) :], m]
            if m not in state and (found := visit(m)) is not None:
                return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)) is not None:
            return found
    return None


def test_no_import_cycle_among_the_packages_modules() -> None:
    graph = _graph()
    assert (
        "pyscheduler.rpc.amplan" in graph and "pyscheduler.estimate.copies" in graph["pyscheduler.rpc.amplan"]
    )
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_file_of_the_live_path_is_over_400_lines() -> None:
    long = {p.name: n for p in (ROOT / "rpc").glob("*.py") if (n := len(p.read_text().splitlines())) > 400}
    assert not long, long


# Packages whose docstring is a map of their modules.
MAPPED = ("rpc", "sim", "deploy")


def _unmapped(package: Path) -> list[str]:
    """The package's modules its docstring does not name (as a word: `amplan`, `loaders/`, `(ambounds)`)."""
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", doc))
    return sorted(_names(package) - words)


def _names(package: Path) -> set[str]:
    files = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    return files | {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}


def test_every_module_is_on_its_packages_map() -> None:
    missing = {pkg: m for pkg in MAPPED if (m := _unmapped(ROOT / pkg))}
    assert not missing, f"modules missing from their package docstring's map: {missing}"


def test_the_readme_names_every_subpackage() -> None:
    readme = (ROOT.parent / "README.md").read_text()
    subs = sorted(
        p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and not p.name.startswith("_")
    )
    assert "sim" in subs and "rpc" in subs
    missing = [s for s in subs if f"pyscheduler/{s} " not in readme]
    assert not missing, f"README.md's map leaves out pyscheduler/{missing}"


def test_the_map_check_sees_a_module_left_out(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text('"""A package.\n\nalpha   the first\n"""\n')
    (tmp_path / "alpha.py").write_text("")
    (tmp_path / "beta.py").write_text("")
    assert _unmapped(tmp_path) == ["beta"]
