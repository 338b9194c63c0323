"""The import contract of fedbound's layers (issue 20 item 4), read from the source's own import
statements (module level and inside functions alike, so that a deferred import cannot dodge it):

    0  errors, validate, argtypes, guard, deprecation, registry, papers, stats, local_solver, outputs, cache, resources,
       jsonable, privacy, readout, vocabulary, display, version        the ground floor
    1  network, tasks
    2  algorithms, theory          (which do not import each other; the adapters of theory/<paper>
                                    map runs to constants by numbers, not algorithm objects)
    3  verify, control, pep, sweep
    4  testing, extend, api        (fedbound.api: the job entries the package face loads on first use)
    5  cli                         (the top floor: nothing imports it but fedbound.__main__)

A module imports only modules of its floor or below, and the module graph has no circle at all.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "fedbound"

FLOORS = {
    **dict.fromkeys(("errors", "validate", "argtypes", "guard", "deprecation", "registry", "papers", "stats", "local_solver",
                     "outputs", "cache", "resources", "jsonable", "privacy", "readout", "vocabulary", "display", "version"), 0),
    "network": 1, "tasks": 1,
    "algorithms": 2, "theory": 2,
    "verify": 3, "control": 3, "pep": 3, "sweep": 3,
    "testing": 4, "extend": 4, "api": 4,
    "cli": 5,
}
#: pairs of packages on one floor that must not import each other
APART = {("algorithms", "theory"), ("theory", "algorithms")}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


#: the modules, Python and compiled (a C extension's source, built by setup.py: a module that
#: imports nothing of fedbound)
MODULES = {module_name(p): p for p in sorted([*ROOT.rglob("*.py"), *ROOT.rglob("*.c")])}


def imports_of(name: str) -> set[str]:
    """The fedbound modules ``name`` imports (a package's attribute that is a submodule counts as
    the submodule), wherever the import statement stands."""
    path = MODULES[name]
    if path.suffix == ".c":
        return set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target.startswith("fedbound") and target != name:
                out.add(target)
    return out


GRAPH = {name: imports_of(name) for name in MODULES}


def floor_of(name: str) -> tuple[str, int] | None:
    parts = name.split(".")
    if len(parts) == 1:
        return None                       # the package itself: its face imports the ground floor
    if parts[1] == "__main__":
        return "__main__", 6
    assert parts[1] in FLOORS, f"{name}: give the layer contract a floor for fedbound.{parts[1]}"
    return parts[1], FLOORS[parts[1]]


def test_every_module_imports_only_its_floor_and_below():
    wrong = []
    for name, targets in GRAPH.items():
        mine = floor_of(name)
        for target in targets:
            theirs = floor_of(target)
            if mine is None or theirs is None:
                continue
            if theirs[1] > mine[1] or (mine[0], theirs[0]) in APART:
                wrong.append(f"{name} (floor {mine[1]}) imports {target} (floor {theirs[1]})")
    assert not wrong, "layer violations:\n" + "\n".join(sorted(wrong))


def test_the_package_face_imports_only_the_ground_floor():
    assert all(floor_of(t)[1] == 0 for t in GRAPH["fedbound"]), GRAPH["fedbound"]


def test_the_package_face_loads_its_jobs_from_the_api_on_first_use():
    """The job entries at the top (``fedbound.run``, ...) are fedbound.api's (floor 4), loaded on
    first use: ``import fedbound`` imports neither it nor any floor above the ground."""
    import subprocess

    import fedbound
    import fedbound.api

    assert all(getattr(fedbound, job) is getattr(fedbound.api, job) for job in fedbound.JOBS)
    assert set(fedbound.JOBS) <= set(dir(fedbound)) and "guard" not in dir(fedbound)
    code = ("import sys, fedbound\n"
            "above = sorted(m for m in sys.modules if m.startswith('fedbound.') and "
            "m.split('.')[1] in ('api', 'theory', 'algorithms', 'control', 'pep', 'sweep', 'verify'))\n"
            "assert not above, above\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT.parent)})
    assert done.returncode == 0, done.stderr[-500:]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module."""
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_there_is_no_import_circle():
    circles = strongly_connected(GRAPH)
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


@pytest.mark.parametrize("graph,expected", [
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
])
def test_the_circle_finder(graph, expected):
    assert strongly_connected(graph) == expected


def test_a_compiled_module_is_a_leaf():
    """Importing the compiled kernels (fedbound/tasks/_kernels.c) is an edge to that module, not to
    its package (whose face imports the modules that import the kernels: a false circle)."""
    assert "fedbound.tasks._kernels" in GRAPH["fedbound.tasks.mlp"] and not GRAPH["fedbound.tasks._kernels"]


def test_the_contract_reads_deferred_imports():
    """An import inside a function counts: the test would see theory importing algorithms there."""
    assert "fedbound.tasks.base" in GRAPH["fedbound.algorithms.base"]   # check_task's deferred import
