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


def buffers(tree: ast.Module) -> set[str]:
    """The names given to register_buffer("name", ...) in the file."""
    return {n.args[0].value for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "register_buffer" and n.args and isinstance(n.args[0], ast.Constant)
            and isinstance(n.args[0].value, str)}


def applies_mask(source: str, line: int) -> bool:
    """The statement on `line` applies a mask: a masking call (masked_fill, where), or it reads a registered buffer
    (nanoGPT's self.bias, an additive self.attn_bias) or a name that says mask."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    if stmt is None:
        return False
    held = buffers(tree)
    for n in ast.walk(stmt):
        name = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else None
        if isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name)) and \
                (n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id) in MASKING:
            return True
        if name is not None and (name in held or "mask" in name.lower()):
            return True
    return False


def assignments(source: str) -> dict[str, int]:
    """Attribute name -> the line of its first `self.<name> = ...` in the file (where a layer is created)."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                found.setdefault(t.attr, node.lineno)
    return found



def statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost simple statement spanning `line` (not a def, a class or the header of a block), or None."""
    stmts = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
             ast.ClassDef, ast.For, ast.While, ast.If, ast.With, ast.Try)) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return min(stmts, key=lambda n: (n.end_lineno or n.lineno) - n.lineno) if stmts else None


def names_read_at(tree: ast.Module, line: int) -> list[str]:
    """Local names the statement on `line` reads as values (not the functions it calls, not modules such as math or
    torch, not the bounds of a slice)."""
    stmt = statement_at(tree, line)
    if stmt is None:
        return []
    called = {id(n.func) for n in ast.walk(stmt) if isinstance(n, ast.Call)}
    bases = {id(n.value) for n in ast.walk(stmt) if isinstance(n, ast.Attribute)}
    sliced = {id(x) for n in ast.walk(stmt) if isinstance(n, ast.Subscript) for x in ast.walk(n.slice)}  # x[:, j0:j1]
    found = []
    for n in ast.walk(stmt):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in called | bases | sliced \
                and n.id not in found:
            found.append(n.id)
    return found


def built_elsewhere(source: str, line: int) -> dict[str, int]:
    """{name: line} for the local names the statement on `line` reads that one other statement of the same function
    assigns (a scale, a size, a mask made the line before). A name assigned more than once, a parameter or a loop
    variable is left out: which assignment holds the value is not known from the text."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    if func is None:
        return {}
    params = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    loops = {x.id for n in ast.walk(func) if isinstance(n, (ast.For, ast.comprehension)) for x in ast.walk(n.target)
             if isinstance(x, ast.Name)}
    found = {}
    for name in names_read_at(tree, line):
        if name in params or name in loops:
            continue
        where = assigned_lines(func, name)
        if len(where) == 1 and (a := where.pop()) != line:
            found[name] = a
    return found


def names_one_value(source: str, line: int) -> bool:
    """The statement on `line` assigns one local name (`d = x.shape[-1]`), not several at once (`B, T, C = x.shape`):
    a value made for its use, rather than one of several read together and picked from later."""
    tree = parse(source)
    stmts = [n for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.lineno == line] if tree else []
    if len(stmts) != 1:
        return False
    targets = stmts[0].targets if isinstance(stmts[0], ast.Assign) else [stmts[0].target]
    return len(targets) == 1 and isinstance(targets[0], ast.Name)


def mask_argument(source: str, line: int) -> str | None:
    """The local name a masking call on `line` takes as its mask (`s.masked_fill(blocked, ...)`), or None."""
    tree = parse(source)
    if tree is None:
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= line <= (n.end_lineno or n.lineno)
             and isinstance(n.func, ast.Attribute) and n.func.attr in MASKING and n.args]
    names = {c.args[0].id for c in calls if isinstance(c.args[0], ast.Name)}
    return names.pop() if calls and len(names) == 1 and len(calls) == 1 else None


def applies_root(source: str, line: int, name: str) -> bool:
    """The statement on `line` takes a square root or a power of `name` (math.sqrt(d), d ** 0.5, d ** -0.5)."""
    tree = parse(source)
    if tree is None:
        return False
    def is_name(x):
        return isinstance(x, ast.Name) and x.id == name
    for n in ast.walk(tree):
        if not (hasattr(n, "lineno") and n.lineno <= line <= (getattr(n, "end_lineno", None) or n.lineno)):
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("sqrt", "rsqrt") \
                and n.args and is_name(n.args[0]):
            return True
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and is_name(n.left):
            return True
    return False


def takes_root(source: str, line: int) -> bool:
    """The statement on `line` takes a square root or a power of something (`scale = 1 / math.sqrt(d)`)."""
    tree = parse(source)
    if tree is None:
        return False
    return any(hasattr(n, "lineno") and n.lineno <= line <= (getattr(n, "end_lineno", None) or n.lineno) and (
        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
        and n.func.attr in ("sqrt", "rsqrt")) for n in ast.walk(tree))


def read_lines(source: str, line: int, name: str) -> set[int]:
    """Lines of the function holding `line` that read the local name."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    if func is None:
        return set()
    return {n.lineno for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)}
