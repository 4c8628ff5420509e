"""The layering docs/architecture.md describes, checked on the sources: each Rust folder imports
only from the folders below it, no two files import each other (directly or in a circle), in
Rust or in Python, and no file grows past the sizes a newcomer can read."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RUST = REPO / "rust"
PYTHON = REPO / "python" / "kafkalog"

# The layers of docs/architecture.md, bottom first: a file may import its own folder and those
# with a smaller number.
LAYERS = {
    "error": 0,
    "clock": 0,
    "format": 1,
    "storage": 2,
    "log": 3,
    "arrow": 4,
    "internal": 5,
    "values": 5,
    "read": 6,
    "write": 7,
    "cleanup": 8,
    "restore": 8,
    "spark": 8,
    "serve": 8,
    "python": 9,
    "jni": 9,
    "fuzzing": 9,
    "lib": 9,
}


def _code(path: Path) -> str:
    """The file without its comments and its `#[cfg(test)]` module (tests may reach anywhere)."""
    text = path.read_text()
    text = text.split("#[cfg(test)]\nmod tests")[0]
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def _rust_module(path: Path, root: Path = RUST) -> str:
    """`format::control` for rust/format/control.rs, `storage::tiered` for its mod.rs."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return "::".join(parts)


def _rust_files(root: Path = RUST) -> dict[str, Path]:
    return {_rust_module(p, root): p for p in sorted(root.rglob("*.rs"))}


def _rust_imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """For each module, the other modules of the crate its code names (`crate::a::b::...`,
    resolved to the longest module path that exists)."""
    out: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        code = _code(path)
        # `use crate::a::{b, c::d}` and paths in expressions alike.
        parent = name.rsplit("::", 1)[0] if "::" in name else ""
        pattern = r"\b(crate|super)::((?:\w+::)*\w+)(?:::\{([^}]*)\})?"
        for match in re.finditer(pattern, code):
            root = match.group(2)
            if match.group(1) == "super":
                # `super::` of a file module is its folder (`a::b` -> `a`).
                root = f"{parent}::{root}" if parent else root
            bases = [root]
            if match.group(3):
                bases = [f"{root}::{part.strip()}" for part in match.group(3).split(",")]
            for base in bases:
                parts = base.replace(" ", "").split("::")
                while parts and "::".join(parts) not in modules:
                    parts.pop()
                if parts and "::".join(parts) != name:
                    targets.add("::".join(parts))
        out[name] = targets
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_rust_folders_import_only_downward():
    modules = _rust_files()
    wrong = []
    for name, targets in _rust_imports(modules).items():
        own = LAYERS[name.split("::")[0]]
        for target in targets:
            if LAYERS[target.split("::")[0]] > own:
                wrong.append(f"{name} -> {target}")
    assert not wrong, "imports from a higher layer (docs/architecture.md):\n" + "\n".join(wrong)


def _rust_cycles(root: Path = RUST) -> list[list[str]]:
    modules = _rust_files(root)
    graph = _rust_imports(modules)
    # A folder's mod.rs only declares its files (and may re-export their names): an edge to
    # it names the folder, not a file.
    files = {n: {t for t in ts if modules[t].name != "mod.rs" or t == n} for n, ts in graph.items()}
    return _cycles(files)


def test_rust_files_import_no_circle():
    assert not _rust_cycles(), _rust_cycles()


def _python_modules(root: Path) -> dict[str, Path]:
    """Dotted name to file for each module of the package under `root` (a package by its
    __init__.py); the compiled extension by its stub (`_native.pyi`)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")) + sorted(root.rglob("*.pyi")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.setdefault(".".join(parts), path)
    return out


def _is_face(path: Path) -> bool:
    """A package's face: an __init__.py that only hands names on (short, defining nothing)."""
    if path.name != "__init__.py":
        return False
    text = path.read_text()
    defines = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    top = ast.parse(text).body
    return len(text.splitlines()) < 40 and not any(isinstance(n, defines) for n in top)


def _python_imports(root: Path = PYTHON) -> dict[str, set[str]]:
    """For each module, the modules of the package it imports: `from a import b` names the
    module `a.b` where there is one, else `a` itself (b is a name a's file defines or hands
    on), so importing a name from a package's __init__.py depends on that file."""
    modules = _python_modules(root)
    package = root.name
    out: dict[str, set[str]] = {}
    for name, path in modules.items():
        if path.suffix == ".pyi":
            out[name] = set()
            continue
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    inner = f"{node.module}.{alias.name}"
                    targets.add(inner if inner in modules else node.module)
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
        out[name] = {
            t for t in targets if t.split(".")[0] == package and t != name and t in modules
        }
    return out


def _python_cycles(root: Path = PYTHON) -> list[list[str]]:
    """The circles of the package's imports. A face (an __init__.py that only re-exports)
    is no file of its own: an import of it is an import of the files it hands on. An
    __init__.py that defines or runs more is a file like any other."""
    modules = _python_modules(root)
    graph = _python_imports(root)
    faces = {n for n, p in modules.items() if _is_face(p)}

    def through(target: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if target not in faces:
            return {target}
        if target in seen:
            return set()
        return {t for nxt in graph[target] for t in through(nxt, seen | {target})}

    files = {n: {t for ts in graph[n] for t in through(ts)} - {n} for n in graph if n not in faces}
    return _cycles(files)


def test_python_modules_import_no_circle():
    assert not _python_cycles(), _python_cycles()


def test_a_new_circle_is_caught(tmp_path: Path):
    """The check fails on a circle, as on an upward import: through an __init__.py that
    defines things (a name taken from the package, not from its module), and through plain
    modules; a face that only re-exports is not one."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "_native.pyi").write_text("def f() -> None: ...\n")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub.a import A\n")
    (pkg / "sub" / "a.py").write_text("from pkg import _native\nA = 1\n")
    (pkg / "b.py").write_text("from pkg.sub import A\n")
    big = "from pkg.sub import A\n\n\ndef run() -> None:\n    pass\n"
    (pkg / "__init__.py").write_text(big)
    assert _python_cycles(pkg) == []
    # A module of the package taking a name its top __init__.py defines: a circle.
    (pkg / "sub" / "a.py").write_text("from pkg import _native, run\nA = 1\n")
    assert _python_cycles(pkg) == [["pkg", "pkg.sub.a"]]
    # Two modules importing each other, whatever the faces.
    (pkg / "sub" / "a.py").write_text("from pkg.b import B\nA = 1\n")
    (pkg / "b.py").write_text("from pkg.sub.a import A\nB = 2\n")
    assert _python_cycles(pkg) == [["pkg.b", "pkg.sub.a"]]


def test_a_new_rust_circle_is_caught(tmp_path: Path):
    """The Rust check on a crate of three files, one importing back up the chain."""
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "mod.rs").write_text("pub mod a;\npub mod b;\n")
    (tmp_path / "x" / "a.rs").write_text("use crate::x::b::B;\npub struct A;\n")
    (tmp_path / "x" / "b.rs").write_text("pub struct B;\n")
    assert _rust_cycles(tmp_path) == []
    (tmp_path / "x" / "b.rs").write_text("use super::a::A;\npub struct B;\n")
    assert _rust_cycles(tmp_path) == [["x::a", "x::b"]]


def test_files_stay_readable():
    too_long = [
        f"{p.relative_to(REPO)}: {n} lines"
        for p, limit in [(p, 1000) for p in RUST.rglob("*.rs")]
        + [(p, 600) for p in PYTHON.rglob("*.py")]
        if (n := len(p.read_text().splitlines())) > limit
    ]
    assert not too_long, too_long
