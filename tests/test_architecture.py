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


def _rust_module(path: Path) -> str:
    """`format::control` for rust/format/control.rs, `storage::tiered` for its mod.rs."""
    parts = list(path.relative_to(RUST).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return "::".join(parts)


def _rust_files() -> dict[str, Path]:
    return {_rust_module(p): p for p in sorted(RUST.rglob("*.rs"))}


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


def test_rust_files_import_no_circle():
    modules = _rust_files()
    graph = _rust_imports(modules)
    # A folder's mod.rs only declares its files; an edge to it names the folder, not a file.
    files = {n: {t for t in ts if modules[t].name != "mod.rs" or t == n} for n, ts in graph.items()}
    assert not _cycles(files), _cycles(files)


def _python_imports() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in sorted(PYTHON.rglob("*.py")):
        parts = list(path.relative_to(PYTHON.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.add(node.module)
                targets.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
        out[name] = {t for t in targets if t.startswith("kafkalog") and t != name}
    modules = set(out)
    return {n: {t for t in ts if t in modules} for n, ts in out.items()}


def test_python_modules_import_no_circle():
    graph = _python_imports()
    # A package's __init__ re-exports what its modules define: edges into a package face are
    # the face's business, not a circle of implementation files.
    packages = {p for p in graph if (PYTHON.parent / p.replace(".", "/") / "__init__.py").exists()}
    files = {n: ts - packages for n, ts in graph.items() if n not in packages}
    assert not _cycles(files), _cycles(files)


def test_files_stay_readable():
    too_long = [
        f"{p.relative_to(REPO)}: {n} lines"
        for p, limit in [(p, 1000) for p in RUST.rglob("*.rs")]
        + [(p, 600) for p in PYTHON.rglob("*.py")]
        if (n := len(p.read_text().splitlines())) > limit
    ]
    assert not too_long, too_long
