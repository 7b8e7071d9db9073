"""The import graph points one way: cli → runner → (checks, diagnosis) → harness → sandbox.

Every import counts, also those inside functions (they run too). The sandbox is a leaf, the
diagnosis never reaches into the hidden suites, nothing below the runner reaches the instructor
tools or the CLI, and no exercise module is imported by name anywhere.
"""
import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

GRADER = ROOT / "grader"
# lower number = lower layer; a module may import its own layer or lower ones
# the sandbox's self-check is a tool above it: it finds the pack whose files a worker must not read
LAYERS = [
    (0, ("grader.sandbox",)),
    (1, ("grader.pack", "grader.catalog", "grader.results", "grader.failures", "grader.policy", "grader.numerics",
         "grader")),
    (2, ("grader.harness", "grader.probes", "grader.sandbox.selfcheck", "grader.sandbox.__main__")),
    (3, ("grader.suites", "grader.diagnosis", "grader.checks")),
    (4, ("grader.runner",)),
    (5, ("grader.devcheck", "grader.cli", "grader.watch", "grader.screen", "grader.workspace", "grader.render",
         "grader.explain", "grader.instructor", "grader.__main__",
         "grader.htmlview", "grader.learner_report", "grader.diffview", "grader.notebook",
         "grader.interview", "grader.history")),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(name: str) -> int:
    best = None
    for rank, prefixes in LAYERS:
        for p in prefixes:
            if (name == p or name.startswith(p + ".")) and (best is None or len(p) > best[1]):
                best = (rank, len(p))
    assert best is not None, f"{name} is in no layer: add it to LAYERS"
    return best[0]


def edges() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(GRADER.rglob("*.py")):
        if "_kit" in path.parts:
            continue
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
                targets.add(base)
        graph[name] = {t for t in targets if t == "grader" or t.startswith("grader.")}
    return graph


# IPython's entry point: `%load_ext grader` calls grader.load_ipython_extension, which loads the notebook magic
EXTENSION = {("grader", "grader.notebook")}


def upward(graph: dict[str, set[str]]) -> list[str]:
    return [f"{a} -> {b}" for a, targets in graph.items() for b in targets
            if layer(b) > layer(a) and (a, b) not in EXTENSION]


def test_layers_point_down():
    assert not upward(edges()), upward(edges())


# `python -m grader.sandbox` checks that the current pack is hidden from workers: it alone may find the pack
SELF_CHECK = {("grader.sandbox.selfcheck", "grader.pack")}


def crossings(graph: dict[str, set[str]]) -> list[str]:
    return [f"{a} -> {b}" for a, targets in graph.items() for b in targets
            if (a.startswith("grader.sandbox") and not b.startswith("grader.sandbox") and (a, b) not in SELF_CHECK)
            or (a.startswith("grader.diagnosis") and b.startswith("grader.suites"))]


def test_sandbox_is_a_leaf_and_diagnosis_stays_out_of_the_suites():
    assert not crossings(edges()), crossings(edges())


def by_name(graph: dict[str, set[str]]) -> list[str]:
    return [f"{a} -> {b}" for a, targets in graph.items() for b in targets if b.startswith("grader.checks")]


def test_no_exercise_module_imported_by_name():
    assert not by_name(edges()), by_name(edges())


def test_each_guard_fires_on_a_graph_that_breaks_it():
    """The rules above are only worth something if they can fail: each one on an edge it forbids."""
    assert upward({"grader.harness": {"grader.runner", "grader.sandbox"}}) == ["grader.harness -> grader.runner"]
    assert upward({"grader": {"grader.notebook", "grader.cli"}}) == ["grader -> grader.cli"]  # one edge excepted
    assert crossings({"grader.sandbox.worker": {"grader.policy"}}) == ["grader.sandbox.worker -> grader.policy"]
    assert crossings({"grader.diagnosis.x": {"grader.suites.conftest"}})
    assert by_name({"grader.runner": {"grader.checks.ex06_gpt2_attention"}})
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    with pytest.raises(AssertionError, match="no layer"):
        layer("grader_elsewhere")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _no_parent_edges(graph):
    """A module importing its own package's __init__ (for a name it re-exports) is not a cycle."""
    return {a: {b for b in t if not a.startswith(b + ".")} for a, t in graph.items()}


def test_no_import_cycles_outside_the_sandbox():
    graph = _no_parent_edges(edges())
    cycles = [c for c in _cycles(graph) if not all(m.startswith("grader.sandbox") for m in c)]
    assert not cycles, cycles


def test_no_import_cycles_at_all():
    assert not _cycles(_no_parent_edges(edges()))
