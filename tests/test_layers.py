"""The house rules of the layout (DESIGN.md "Layout"), checked on the sources with an AST scan of
every import: module-level, function-level and `TYPE_CHECKING` imports alike.

- five layers, each importing only those below: sim/core → traces → policies → sim → bench
  (import-linter checks the same in CI on the installed names; this scan needs no install);
- no cycle between modules;
- no folder with more than four sibling modules sharing a name prefix (such a family is a package);
- modules under ~400 lines and functions under ~100.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sim", "policies", "traces", "bench")
LAYER = {"core": 1, "traces": 2, "policies": 3, "sim": 4, "bench": 5}
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 100
MAX_FAMILY = 4


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            rel = path.relative_to(ROOT)
            if "speed" in rel.parts:  # bench/speed: pytest-benchmark suites, not installed
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out["ctxbench." + ".".join(parts)] = path
    return out


MODULES = _modules()


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYER["core"] if parts[1:3] == ["sim", "core"] else LAYER[parts[1]]


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = module
        if node.level:
            pkg = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
            base = ".".join(pkg.split(".")[: len(pkg.split(".")) - node.level + 1])
            prefix = base + ("." + node.module if node.module else "")
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix for a in node.names]
    out = []
    for name in names:
        while name not in MODULES and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in MODULES:
            out.append(name)
    return out


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[module].update(t for t in _targets(module, node) if t != module)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(MODULES):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_no_import_runs_back_up() -> None:
    graph = _graph()
    up = sorted(f"{a} -> {b}" for a, bs in graph.items() for b in bs if _layer(b) > _layer(a))
    assert not up, "imports against the layer order:\n" + "\n".join(up)


def test_no_import_cycle() -> None:
    cycles = _cycles(_graph())
    assert not cycles, f"import cycles: {cycles}"


def test_a_family_of_modules_is_a_package() -> None:
    crowded = []
    for folder in {p.parent for p in MODULES.values()}:
        # a leading underscore marks a private module, not a name: `_run_options` is of family "run"
        names = [p.stem.lstrip("_") for p in folder.glob("*.py") if not p.stem.startswith("__")]
        for prefix in {n.split("_")[0] for n in names if "_" in n}:
            family = [n for n in names if n == prefix or n.startswith(prefix + "_")]
            if len(family) > MAX_FAMILY:
                crowded.append(f"{folder.relative_to(ROOT)}: {sorted(family)}")
    assert not crowded, "families of more than four sibling modules:\n" + "\n".join(crowded)


def test_modules_and_functions_stay_short() -> None:
    long = []
    for path in MODULES.values():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_MODULE_LINES:
            long.append(f"{path.relative_to(ROOT)}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {n} lines")
    assert not long, "\n".join(long)


def test_the_scan_sees_a_violation(tmp_path: Path) -> None:
    """The checks can fail: an import back up and a cycle in a made-up pair of modules are found."""
    up = ast.parse("from ctxbench.sim.runner import run_trace")
    node = up.body[0]
    assert isinstance(node, ast.ImportFrom)
    assert _targets("ctxbench.policies.view", node) == ["ctxbench.sim.runner"]
    assert _layer("ctxbench.sim.runner") > _layer("ctxbench.policies.view")
    a, b = "ctxbench.sim.core.a", "ctxbench.sim.core.b"
    graph = defaultdict(set, {a: {b}, b: {a}})
    saved = dict(MODULES)
    try:
        MODULES.update({a: tmp_path / "a.py", b: tmp_path / "b.py"})
        assert [a, b] in _cycles(graph)
    finally:
        MODULES.clear()
        MODULES.update(saved)
