"""What the submission's source says about a line (it is parsed, never run): the return after it, where the mask a
call applies was built, where a layer is created."""
from __future__ import annotations

import ast

MASKING = {"masked_fill", "masked_fill_", "where"}


def parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def function_at(tree: ast.Module, line: int):
    """The innermost function holding the line, or None."""
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return max(funcs, key=lambda n: n.lineno) if funcs else None


def return_after(source: str, line: int) -> int | None:
    """The first return statement after line in the function holding it."""
    tree = parse(source)
    inner = function_at(tree, line) if tree is not None else None
    if inner is None:
        return None
    returns = sorted(n.lineno for n in ast.walk(inner) if isinstance(n, ast.Return) and n.lineno > line)
    return returns[0] if returns else None


def assigned_lines(scope, name: str) -> set[int]:
    """Lines of the statements in scope that assign the local name (also as part of a tuple or an augmented one)."""
    found = set()
    for node in ast.walk(scope):
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for t in targets:
            if any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(t)):
                found.add(node.lineno)
    return found


def mask_built_at(source: str, line: int) -> tuple[bool, int | None]:
    """Where the mask used by the masking call on `line` was built, when it is a local variable: (True, its one
    assignment's line), (True, None) when several assignments could be the one that is wrong, (False, None) when
    the call builds its mask in place (`mask == 0`, `~pad.view(...)`, `self.tril[:T, :T]`) or there is no such call."""
    tree = parse(source)
    if tree is None:
        return False, None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= line <= (n.end_lineno or n.lineno)
             and isinstance(n.func, ast.Attribute) and n.func.attr in MASKING and n.args]
    names = [c.args[0].id for c in calls if isinstance(c.args[0], ast.Name)]
    if not calls or len(names) != len(calls) or len(set(names)) != 1:
        return False, None
    found = assigned_lines(function_at(tree, line) or tree, names[0])
    found.discard(line)
    if not found:  # an argument, or built on this line: the call itself is where the mask is used wrongly
        return False, None
    return True, (found.pop() if len(found) == 1 else None)


def assignments(source: str) -> dict[str, int]:
    """Attribute name -> the line of its first `self.<name> = ...` in the file (where a layer is created)."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                found.setdefault(t.attr, node.lineno)
    return found

