"""Static policy check on a submission's syntax tree, run before any of its code executes."""
from __future__ import annotations

import ast
from dataclasses import dataclass

DENIED_CALLS = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "getattr", "setattr",
    "delattr", "breakpoint", "input", "exit", "quit", "help", "memoryview", "classmethod_descriptor",
})
DENIED_ATTRIBUTES = frozenset({
    "os", "sys", "subprocess", "builtins", "importlib", "ctypes", "socket", "shutil", "pathlib", "signal",
    "multiprocessing", "threading", "hub", "load", "save", "cpp_extension", "compile", "jit", "library",
    "ops", "distributed", "testing", "inspect", "set_printoptions", "from_file", "storage",
})
ALLOWED_DUNDERS = frozenset({"__init__", "__name__", "__main__"})


@dataclass(frozen=True)
class Violation:
    line: int
    rule: str  # "forbidden_api" | "unsafe_code"
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def _dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


class _Checker(ast.NodeVisitor):
    def __init__(self, allowed_imports: frozenset[str], forbidden: tuple[str, ...]):
        self.allowed = allowed_imports
        self.forbidden = {f: f.rsplit(".", 1)[-1] for f in forbidden}
        self.aliases: dict[str, str] = {}
        self.found: list[Violation] = []

    def flag(self, node, rule, message):
        self.found.append(Violation(getattr(node, "lineno", 0), rule, message))

    def check_forbidden(self, node, dotted: str):
        for full, leaf in self.forbidden.items():
            if dotted == full or dotted.endswith("." + leaf) and dotted.split(".")[0] in self.aliases:
                self.flag(node, "forbidden_api", f"{full} is not allowed in this exercise: write the computation yourself")
                return True
        return False

    def visit_Import(self, node):
        for alias in node.names:
            root = alias.name.split(".")[0]
            if root not in self.allowed:
                self.flag(node, "unsafe_code", f"import of {alias.name!r} is not allowed (allowed: {', '.join(sorted(self.allowed))})")
            self.aliases[alias.asname or root] = alias.name if alias.asname else root
            self.check_forbidden(node, alias.name)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if node.level or module.split(".")[0] not in self.allowed:
            self.flag(node, "unsafe_code", f"import from {'.' * node.level + module!r} is not allowed")
            return
        for alias in node.names:
            if alias.name == "*":
                self.flag(node, "unsafe_code", f"'from {module} import *' is not allowed: import the names you use")
                continue
            if alias.name in DENIED_ATTRIBUTES or alias.name.startswith("_"):
                self.flag(node, "unsafe_code", f"importing {alias.name!r} from {module} is not allowed")
            full = f"{module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = full
            self.check_forbidden(node, full)

    def visit_Name(self, node):
        if node.id.startswith("__") and node.id not in ALLOWED_DUNDERS:
            self.flag(node, "unsafe_code", f"the name {node.id} is not allowed")
        elif node.id in DENIED_CALLS:
            self.flag(node, "unsafe_code", f"{node.id}() is not allowed in a submission")
        elif node.id in self.aliases:
            self.check_forbidden(node, self.aliases[node.id])

    def visit_Attribute(self, node):
        dotted = _dotted(node)
        if node.attr.startswith("__") and node.attr not in ALLOWED_DUNDERS:
            self.flag(node, "unsafe_code", f"the attribute {node.attr} is not allowed (no dunder attribute walks)")
        elif dotted and dotted[0] != "self" and (node.attr in DENIED_ATTRIBUTES or node.attr.startswith("_")):
            self.flag(node, "unsafe_code", f"{'.'.join(dotted)} is not allowed in a submission")
        elif dotted and dotted[0] in self.aliases:
            resolved = ".".join([self.aliases[dotted[0]], *dotted[1:]])
            if self.check_forbidden(node, resolved):
                return
        elif node.attr in self.forbidden.values():
            self.flag(node, "forbidden_api", f"{node.attr} is not allowed in this exercise: write the computation yourself")
            return
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and node.value.startswith("__") and node.value.endswith("__") \
                and node.value not in ALLOWED_DUNDERS:
            self.flag(node, "unsafe_code", f"the string {node.value!r} looks like a dunder lookup and is not allowed")


def check(source: str, *, allowed_imports, forbidden=()) -> list[Violation]:
    """Return the policy violations in source; raises SyntaxError when it does not parse."""
    tree = ast.parse(source)
    compile(tree, "submission.py", "exec", dont_inherit=True)  # errors ast.parse lets through ('return' outside def)
    checker = _Checker(frozenset(allowed_imports), tuple(forbidden))
    checker.visit(tree)
    return sorted(checker.found, key=lambda v: v.line)
