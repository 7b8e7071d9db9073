"""What the submission's source says about a line (it is parsed, never run): the return after it, where the mask a
call applies was built, where a layer is created."""
from __future__ import annotations

import ast
from functools import lru_cache

MASKING = {"masked_fill", "masked_fill_", "where"}


_WALKS: dict[int, tuple] = {}  # id(node) -> (node, every node under it in ast.walk's order)
MAX_WALKS = 1 << 14


def walk(node) -> tuple:
    """ast.walk(node) as a tuple, kept for the trees parse() shares (never mutated): the rules walk the same tree
    and statements again and again, and ast.walk's generator was a third of a localization's CPU."""
    known = _WALKS.get(id(node))
    if known is None or known[0] is not node:
        if len(_WALKS) >= MAX_WALKS:
            _WALKS.clear()
        known = _WALKS[id(node)] = node, tuple(ast.walk(node))
    return known[1]


@lru_cache(maxsize=8)
def parse(source: str) -> ast.Module | None:
    """The submission's tree, parsed once per text and shared by every helper here: never mutate it."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def function_at(tree: ast.Module, line: int):
    """The innermost function holding the line, or None."""
    funcs = [n for n in walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return max(funcs, key=lambda n: n.lineno) if funcs else None


def return_after(source: str, line: int) -> int | None:
    """The first return statement after line in the function holding it."""
    tree = parse(source)
    inner = function_at(tree, line) if tree is not None else None
    if inner is None:
        return None
    returns = sorted(n.lineno for n in walk(inner) if isinstance(n, ast.Return) and n.lineno > line)
    return returns[0] if returns else None


def assigned_lines(scope, name: str) -> set[int]:
    """Lines of the statements in scope that assign the local name (also as part of a tuple or an augmented one)."""
    found = set()
    for node in walk(scope):
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        for t in targets:
            if any(isinstance(x, ast.Name) and x.id == name for x in walk(t)):
                found.add(node.lineno)
    return found


def mask_built_at(source: str, line: int) -> tuple[bool, int | None]:
    """Where the mask used by the masking call on `line` was built, when it is a local variable: (True, its one
    assignment's line), (True, None) when several assignments could be the one that is wrong, (False, None) when
    the call builds its mask in place (`mask == 0`, `~pad.view(...)`, `self.tril[:T, :T]`), indexes it, or there is
    no such call."""
    state, where, _, slicing = mask_value(source, line, attributes=False)
    if state == "here" or slicing != "none":
        return False, None
    return True, where


def buffers(tree: ast.Module) -> set[str]:
    """The names given to register_buffer("name", ...) in the file."""
    return {n.args[0].value for n in walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "register_buffer" and n.args and isinstance(n.args[0], ast.Constant)
            and isinstance(n.args[0].value, str)}


def called_name(call: ast.Call) -> str | None:
    """The name a call is made by: `masked_fill` of `s.masked_fill(...)`, `where` of `torch.where(...)` or `where(...)`."""
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def masking_calls(scope, line: int | None = None) -> list[ast.Call]:
    """The masking calls (masked_fill, where) with arguments in scope (a module or a statement), only those spanning
    `line` when it is given."""
    return [n for n in walk(scope) if isinstance(n, ast.Call) and called_name(n) in MASKING and n.args
            and (line is None or n.lineno <= line <= (n.end_lineno or n.lineno))]


def masking_lines(source: str) -> set[int]:
    """Lines of the file with a masking call (masked_fill, where)."""
    tree = parse(source)
    return {n.lineno for n in masking_calls(tree)} if tree is not None else set()


def applies_mask(source: str, line: int) -> bool:
    """The statement on `line` applies a mask: a masking call (masked_fill, where), or it reads a registered buffer
    (nanoGPT's self.bias, an additive self.attn_bias) or a name that says mask."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    if stmt is None:
        return False
    if masking_calls(stmt):
        return True
    held = buffers(tree)
    names = (n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else None for n in walk(stmt))
    return any(name is not None and (name in held or "mask" in name.lower()) for name in names)


def assignments(source: str) -> dict[str, int]:
    """Attribute name -> the line of its first `self.<name> = ...` in the file (where a layer is created)."""
    found, tree = {}, parse(source)
    for node in walk(tree) if tree is not None else ():
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                found.setdefault(t.attr, node.lineno)
    return found


def chosen_by_condition(source: str, line: int) -> bool:
    """The statement on `line` assigns a value picked by a condition (`self.w_o = nn.Linear(d, d) if project_out
    else nn.Identity()`): the condition, made elsewhere, is as likely wrong as what is picked."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    return isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.IfExp)


def statement_at(tree: ast.Module, line: int) -> ast.stmt | None:
    """The innermost simple statement spanning `line` (not a def, a class or the header of a block), or None."""
    stmts = [n for n in walk(tree) if isinstance(n, ast.stmt) and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
             ast.ClassDef, ast.For, ast.While, ast.If, ast.With, ast.Try)) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return min(stmts, key=lambda n: (n.end_lineno or n.lineno) - n.lineno) if stmts else None


def names_read_at(tree: ast.Module, line: int, bases: bool = False) -> list[str]:
    """Local names the statement on `line` reads as values (not the functions it calls, not modules such as math or
    torch, not the bounds of a slice; bases=True: also names whose attribute is read, `k` of `k.transpose(...)`)."""
    stmt = statement_at(tree, line)
    if stmt is None:
        return []
    called = {id(n.func) for n in walk(stmt) if isinstance(n, ast.Call)}
    based = {id(n.value) for n in walk(stmt) if isinstance(n, ast.Attribute)} if not bases else set()
    sliced = {id(x) for n in walk(stmt) if isinstance(n, ast.Subscript) for x in walk(n.slice)}  # x[:, j0:j1]
    found = []
    for n in walk(stmt):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in called | based | sliced \
                and n.id not in found:
            found.append(n.id)
    return found


def built_elsewhere(source: str, line: int, bases: bool = False) -> dict[str, int]:
    """{name: line} for the local names the statement on `line` reads that one other statement of the same function
    assigns (a scale, a size, a mask made the line before). A name assigned more than once, a parameter or a loop
    variable is left out: which assignment holds the value is not known from the text."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    if func is None:
        return {}
    params = {a.arg for a in walk(func.args) if isinstance(a, ast.arg)}
    loops = {x.id for n in walk(func) if isinstance(n, (ast.For, ast.comprehension)) for x in walk(n.target)
             if isinstance(x, ast.Name)}
    found = {}
    for name in names_read_at(tree, line, bases):
        if name in params or name in loops:
            continue
        where = assigned_lines(func, name)
        if len(where) == 1 and (a := where.pop()) != line:
            found[name] = a
    return found


def size_chosen_elsewhere(source: str, line: int) -> dict[str, int]:
    """{name: line} for the sizes the statement on `line` reads that another statement of a function holding it
    chose: a slice bound set by a statement making that one size (`seq = x.size(-1)`, `n = self.d_out`, then
    `mask[:seq, :seq]`), or a size assumed by a condition anywhere in it (`T = x.size(1) if cache is None else 1`,
    then a closure's `t.view(B, T, h, d)`; not the empty default of `P = 0 if cache is None else cache.size(2)`). When `line` raises on a shape, that choice is where it comes from; sizes
    unpacked together from a shape (`B, T, _ = x.shape`) are what they are."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    if stmt is None:
        return {}
    funcs = sorted((n for n in walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and n.lineno <= line <= (n.end_lineno or n.lineno)), key=lambda n: -n.lineno)
    bounds = {id(x) for n in walk(stmt) if isinstance(n, ast.Subscript) for x in walk(n.slice)}
    found = {}
    for n in walk(stmt):
        if not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)) or n.id in found:
            continue
        where = next((w for f in funcs if (w := assigned_lines(f, n.id))), set())
        if len(where) != 1 or (a := next(iter(where))) == line:
            continue
        value = getattr(statement_at(tree, a), "value", None)
        chosen = isinstance(value, ast.IfExp) and reads_size(source, a, conditional=True) and any(
            isinstance(b, ast.Constant) and isinstance(b.value, int) and b.value > 0 for b in (value.body, value.orelse))
        if chosen or id(n) in bounds and names_one_value(source, a) and reads_size(source, a):
            found[n.id] = a
    return found


def names_one_value(source: str, line: int) -> bool:
    """The statement on `line` assigns one local name (`d = x.shape[-1]`), not several at once (`B, T, C = x.shape`):
    a value made for its use, rather than one of several read together and picked from later."""
    tree = parse(source)
    stmts = [n for n in walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.lineno == line] if tree else []
    if len(stmts) != 1:
        return False
    targets = stmts[0].targets if isinstance(stmts[0], ast.Assign) else [stmts[0].target]
    return len(targets) == 1 and isinstance(targets[0], ast.Name)


def made_for(source: str, line: int, name: str) -> bool:
    """The statement on `line` unpacks `name` with other names that no other statement of its function reads but an
    assert (`*_, seq_k, d = value.shape`, seq_k only checked): it was written for the use of `name`."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    func = function_at(tree, line) if tree is not None else None
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], (ast.Tuple, ast.List)) \
            or func is None:
        return False
    others = {x.id for x in walk(stmt.targets[0]) if isinstance(x, ast.Name) and x.id != name}
    if name not in {x.id for x in walk(stmt.targets[0]) if isinstance(x, ast.Name)}:
        return False
    asserts = {id(x) for n in walk(func) if isinstance(n, ast.Assert) for x in walk(n)}
    return not any(isinstance(n, ast.Name) and n.id in others and isinstance(n.ctx, ast.Load) and id(n) not in asserts
                   for n in walk(func))


def mask_argument(source: str, line: int) -> str | None:
    """The local name a masking call on `line` takes as its mask (`s.masked_fill(blocked, ...)`), or None."""
    tree = parse(source)
    if tree is None:
        return None
    calls = masking_calls(tree, line)
    names = {c.args[0].id for c in calls if isinstance(c.args[0], ast.Name)}
    return names.pop() if calls and len(names) == 1 and len(calls) == 1 else None


def applies_root(source: str, line: int, name: str) -> bool:
    """The statement on `line` takes a square root or a power of `name` (math.sqrt(d), d ** 0.5, d ** -0.5)."""
    tree = parse(source)
    if tree is None:
        return False
    def is_name(x):  # a local name, or self.<name> spelled "self.<name>"
        return isinstance(x, ast.Name) and x.id == name or is_self_attribute(x) and f"self.{x.attr}" == name
    for n in walk(tree):
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
        and n.func.attr in ("sqrt", "rsqrt")) for n in walk(tree))


def read_lines(source: str, line: int, name: str) -> set[int]:
    """Lines of the function holding `line` that read the local name."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    if func is None:
        return set()
    return {n.lineno for n in walk(func) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)}


def class_at(tree: ast.Module, line: int):
    """The innermost class holding the line, or None."""
    classes = [n for n in walk(tree) if isinstance(n, ast.ClassDef) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return max(classes, key=lambda n: n.lineno) if classes else None


def is_self_attribute(node) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def attribute_defs(scope, name: str) -> dict[int, ast.AST]:
    """Line -> the value assigned to self.<name> in scope: `self.name = ...` or `self.register_buffer("name", ...)`."""
    found = {}
    for node in walk(scope):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(is_self_attribute(x) and x.attr == name for t in targets for x in walk(t)):
                found[node.lineno] = node.value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "register_buffer" \
                and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant) and node.args[0].value == name:
            found[node.args[1].lineno] = node.args[1]  # the value's own line, when the call spans several
    return found


def attribute_read_lines(scope, name: str) -> set[int]:
    """Lines of scope that read self.<name> as a value (not calling it: `self.proj(x)` is a layer)."""
    return {n.lineno for n in walk(scope) if is_self_attribute(n) and n.attr == name and isinstance(n.ctx, ast.Load)}


def called_attributes(scope) -> set[str]:
    return {n.func.attr for n in walk(scope) if isinstance(n, ast.Call) and is_self_attribute(n.func)}


def attributes_read_at(source: str, line: int) -> list[str]:
    """self.<name> values the statement on `line` reads (not layers it calls, not the bounds of a slice)."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    if stmt is None:
        return []
    called = {id(n.func) for n in walk(stmt) if isinstance(n, ast.Call)}
    sliced = {id(x) for n in walk(stmt) if isinstance(n, ast.Subscript) for x in walk(n.slice)}
    found = []
    for n in walk(stmt):
        if is_self_attribute(n) and isinstance(n.ctx, ast.Load) and id(n) not in called | sliced and n.attr not in found:
            found.append(n.attr)
    return found


def attribute_built_at(source: str, line: int, name: str) -> int | None:
    """Where self.<name>, read on `line`, is made, when one statement of the class makes it from something other than
    a plain copy of an argument (`self.d_out = d_out` is a setting, not a computed value): that line, or the line of
    the one local value it is made from (`future = torch.triu(...)`, `self.register_buffer("mask", future.bool())`)."""
    tree = parse(source)
    cls = class_at(tree, line) if tree is not None else None
    if cls is None or name in called_attributes(cls):
        return None
    defs = attribute_defs(cls, name)
    if len(defs) != 1:
        return None
    (a, value), = defs.items()
    func = function_at(tree, a)
    params = {x.arg for x in walk(func.args) if isinstance(x, ast.arg)} if func is not None else set()
    if isinstance(value, ast.Constant) or isinstance(value, ast.Name) and (value.id in params or func is None) \
            or isinstance(value, ast.Tuple) and all(isinstance(x, (ast.Name, ast.Constant)) for x in value.elts):
        return None  # `self.d = d`, `self.d, self.h = d, h`: settings
    if func is not None:
        made = [n.id for n in walk(value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                and n.id not in params]
        local = {n: assigned_lines(func, n) for n in made}
        local = {n: w for n, w in local.items() if w}
        if len(local) == 1 and len(w := next(iter(local.values()))) == 1:
            return next(iter(w))
    return a


INVERTING = {"logical_not", "eq", "ne", "bitwise_not"}
SHAPING = {"view", "reshape", "expand", "unsqueeze", "repeat", "permute", "transpose", "flatten", "unflatten", "narrow",
           "to", "new_ones", "new_zeros", "new_full", "expand_as", "view_as", "reshape_as"}


def mask_value(source: str, line: int, attributes: bool = True) -> tuple[str, int | None, bool, str]:
    """What the mask of the masking call on `line` is made from: (state, where, inverts, slicing).

    state: "here" when the call builds it in place from arguments and constants (or there is no such call), "one"
    when it reads one local name assigned once elsewhere (where: that line), "attribute" when it reads self.<name>
    made once in the class (where: that line), "several" when which assignment holds it is not known. inverts: the call's own expression
    flips it (`~m`, `m == 0`, `m.logical_not()`). slicing: "none", "prefix" (`m[:n, :n]`, the same bound on each
    dim: the same pattern at a smaller size) or "other" (any other index: the slice decides the pattern too).
    attributes=False leaves self.<name> to the call (a buffer of the full context size is the call's to slice)."""
    tree = parse(source)
    if tree is None:
        return "here", None, False, "none"
    calls = masking_calls(tree, line)
    if not calls or len({ast.dump(c.args[0]) for c in calls}) != 1:
        return "here", None, False, "none"
    expr = calls[0].args[0]
    func = function_at(tree, line) or tree
    params = {a.arg for a in walk(func.args) if isinstance(a, ast.arg)} if hasattr(func, "args") else set()
    sliced = {id(x) for n in walk(expr) if isinstance(n, ast.Subscript) for x in walk(n.slice)}
    called = {id(n.func) for n in walk(expr) if isinstance(n, ast.Call)}
    sizes = {id(x) for n in walk(expr) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr in SHAPING for a in n.args for x in walk(a)}  # pad.view(B, 1, 1, S): sizes, not the mask
    sliced |= sizes
    inverts = any(isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.Invert, ast.Not)) or isinstance(n, ast.Compare)
                  or isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name))
                  and getattr(n.func, "attr", getattr(n.func, "id", "")) in INVERTING for n in walk(expr))
    subs = [n for n in walk(expr) if isinstance(n, ast.Subscript)]
    slicing = "none"
    if subs:
        s = subs[0].slice
        dims = s.elts if isinstance(s, ast.Tuple) else [s]
        prefix = len(subs) == 1 and len(dims) >= 2 and all(isinstance(d, ast.Slice) and d.lower is None and d.step is None
                                                            and d.upper is not None for d in dims) \
            and len({ast.dump(d.upper) for d in dims}) == 1
        slicing = "prefix" if prefix else "other"
    names = {n.id for n in walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and id(n) not in sliced | called and n.id != "self" and n.id not in params}
    local = {n: assigned_lines(func, n) - {line} for n in names}
    local = {n: w for n, w in local.items() if w}
    attrs = {n.attr for n in walk(expr) if is_self_attribute(n) and isinstance(n.ctx, ast.Load) and id(n) not in sliced | called}
    if len(local) + len(attrs) > 1:
        return "several", None, inverts, slicing
    if local:
        (where,) = local.values()
        if len(where) != 1:
            return "several", None, inverts, slicing
        a = next(iter(where))
        if attributes and slicing == "none" and (picked := picks_attribute(tree, a)) is not None:
            built = attribute_built_at(source, a, picked[0])  # `m = self.mask.bool()[:T, :T]`: the buffer is the value
            if built is not None:
                return "attribute", built, inverts, picked[1]
        return "one", a, inverts, slicing
    if attrs and attributes:
        built = attribute_built_at(source, line, next(iter(attrs)))
        return ("attribute", built, inverts, slicing) if built is not None else ("here", None, inverts, slicing)
    return "here", None, inverts, slicing


def attribute_uses(source: str, line: int, name: str) -> set[int]:
    """Lines of the class holding `line` that read self.<name>."""
    tree = parse(source)
    cls = class_at(tree, line) if tree is not None else None
    return attribute_read_lines(cls, name) if cls is not None else set()


def calls_self(source: str, line: int) -> bool:
    """The statement on `line` calls a layer or a method of self (`Q, K, V = self._project(x)`): its tensors are
    traced on the lines of that call's body, not on this one."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    return stmt is not None and any(isinstance(n, ast.Call) and is_self_attribute(n.func) for n in walk(stmt))


def in_helper(source: str, line: int) -> bool:
    """The statement on `line` belongs to a function the file calls itself (`self._split_heads(k, B, T)`), and reads
    that function's parameters: what it works on is whatever a caller passed."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    if func is None:
        return False
    called = any(isinstance(n, ast.Call) and (isinstance(n.func, ast.Name) and n.func.id == func.name
                 or isinstance(n.func, ast.Attribute) and n.func.attr == func.name) for n in walk(tree))
    params = {a.arg for a in walk(func.args) if isinstance(a, ast.arg)} - {"self"}
    return called and bool(params & set(names_read_at(tree, line)))


def reads_size(source: str, line: int, conditional: bool = False) -> bool:
    """The statement on `line` only reads sizes (`d = q.shape[-1]`, `B, T, C = x.size()`, `n = len(x)`,
    `nh, hd = self.num_heads, self.head_dim`): values that are what they are. conditional=True: also a size chosen
    by a condition (`T = x.size(1) if cache is None else 1`)."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return False

    def size(v) -> bool:
        if isinstance(v, ast.Tuple):
            return all(size(x) for x in v.elts)
        if isinstance(v, ast.Starred):
            return size(v.value)
        if conditional and isinstance(v, ast.IfExp):
            return size(v.body) and size(v.orelse)
        if isinstance(v, ast.Subscript):
            v = v.value
        if isinstance(v, ast.Attribute):
            return v.attr == "shape" or is_self_attribute(v)
        if isinstance(v, ast.Call):
            f = v.func
            return isinstance(f, ast.Attribute) and f.attr in ("size", "dim") or isinstance(f, ast.Name) and f.id == "len"
        return isinstance(v, ast.Constant) and isinstance(v.value, int)
    return size(stmt.value)


def aliases(source: str, line: int) -> bool:
    """The statement on `line` only gives another name to a value (`src = x`, `kv = context`)."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
        and isinstance(stmt.value, ast.Name)


def assigned_before(source: str, line: int) -> dict[str, int]:
    """{name: line} for the local names the statement on `line` reads (with the names whose attributes it reads),
    each with its last assignment above `line` in the same function (`y = y.transpose(1, 2)` the line before)."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    if func is None:
        return {}
    found = {}
    for name in names_read_at(tree, line, bases=True):
        above = [a for a in assigned_lines(func, name) if a < line]
        if above:
            found[name] = max(above)
    return found


def bound_at(source: str, line: int, name: str) -> int | None:
    """The line where the value that `line` reads as `name` got its name: its last assignment above `line`, going
    back past updates of itself (`q = q.view(B, T, h, d).transpose(1, 2)` after `q, k, v = qkv.split(C, 2)`)."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    if func is None:
        return None
    lines = sorted(assigned_lines(func, name))
    at = line
    while True:
        above = [a for a in lines if a < at]
        if not above:
            return at if at != line else None
        at = max(above)
        stmt = statement_at(tree, at)
        value = getattr(stmt, "value", None)
        if value is None or not any(isinstance(n, ast.Name) and n.id == name for n in walk(value)):
            return at


def makes_tensor(source: str, line: int) -> bool:
    """The statement on `line` calls into torch (`i = torch.arange(n) % g`): a tensor made from constants."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    return stmt is not None and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                    and isinstance(n.func.value, ast.Name) and n.func.value.id == "torch"
                                    for n in walk(stmt))


PICKING = {"bool", "float", "to", "type_as", "contiguous", "detach", "clone"}


def picks_attribute(tree: ast.Module, line: int) -> tuple[str, str] | None:
    """(name, slicing) when the statement on `line` only takes self.<name> as it is, cast or cut to a prefix
    (`m = self.mask.bool()[:T, :T]`, `m = self.bias[:T, :T]`): the value is the attribute's. slicing as in mask_value()."""
    stmt = statement_at(tree, line)
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return None
    v, slicing = stmt.value, "none"
    while True:
        if isinstance(v, ast.Subscript) and slicing == "none":
            dims = v.slice.elts if isinstance(v.slice, ast.Tuple) else [v.slice]
            prefix = len(dims) >= 2 and all(isinstance(d, ast.Slice) and d.lower is None and d.step is None
                                            and d.upper is not None for d in dims) and len({ast.dump(d.upper) for d in dims}) == 1
            slicing, v = "prefix" if prefix else "other", v.value
        elif isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in PICKING \
                and not (v.func.attr == "to" and any(not isinstance(a, ast.Attribute) for a in v.args)):
            v = v.func.value
        else:
            break
    return (v.attr, slicing) if is_self_attribute(v) else None


def index_built_at(source: str, line: int) -> dict[str, int]:
    """{name: line} for the local names the statement on `line` indexes with (`k[:, kv_head]`, `x[idx]`; not the bounds
    of a slice), each with its last assignment above `line` in the same function."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    func = function_at(tree, line) if tree is not None else None
    if stmt is None or func is None:
        return {}
    found = {}
    for n in walk(stmt):
        if isinstance(n, ast.Subscript):
            for d in n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]:
                above = [a for a in assigned_lines(func, d.id) if a < line] if isinstance(d, ast.Name) else []
                if above:
                    found[d.id] = max(above)
    return found


def calls_file_function(source: str, line: int) -> bool:
    """The statement on `line` calls a function or a method of the file (`scale = _scale_factor(q, k, v)`,
    `self._project(x)`): its value is made in that function's body."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    if stmt is None:
        return False
    defined = {n.name for n in walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return any(isinstance(n, ast.Call) and (is_self_attribute(n.func) or called_name(n) in defined) for n in walk(stmt))


def in_called_function(source: str, line: int) -> bool:
    """The statement on `line` belongs to a function the file calls itself (a helper: `_update(state, s, v)`)."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    return func is not None and any(isinstance(n, ast.Call) and called_name(n) == func.name for n in walk(tree))


def binary_operands(source: str, line: int) -> tuple[str, list[str]] | None:
    """(operator, [left, right]) when the statement on `line` combines two local names (`s = s + ext`, `s += ext`)."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.BinOp):
        op, pair = stmt.value.op, [stmt.value.left, stmt.value.right]
    elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        op, pair = stmt.op, [stmt.target, stmt.value]
    else:
        return None
    if not all(isinstance(x, ast.Name) for x in pair):
        return None
    return type(op).__name__, [x.id for x in pair]


def passed_unshaped(source: str, line: int) -> bool:
    """The function holding `line` is called once in the file, with arguments its caller takes as they come: its own
    parameters, or a layer of self applied to them (`helper(self.W_query(x), self.W_key(x))`). What the function
    works on is then not shaped by the caller: a line of it that raises is its own."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    if func is None:
        return False
    calls = [n for n in walk(tree) if isinstance(n, ast.Call) and (isinstance(n.func, ast.Name) and n.func.id == func.name
             or isinstance(n.func, ast.Attribute) and n.func.attr == func.name)]
    if len(calls) != 1 or calls[0].keywords or not calls[0].args:
        return False
    caller = function_at(tree, calls[0].lineno)
    if caller is None or caller is func:
        return False
    params = {a.arg for a in walk(caller.args) if isinstance(a, ast.arg)} - {"self"}

    def taken(a) -> bool:
        return isinstance(a, ast.Name) and a.id in params

    return all(taken(a) or isinstance(a, ast.Call) and is_self_attribute(a.func) and not a.keywords and a.args
               and all(taken(b) for b in a.args) for a in calls[0].args)


def fill_written_at(source: str, line: int) -> bool:
    """The one masked_fill call on `line` gives its fill value there (-1e9, torch.finfo(torch.float32).min): it reads
    no name the file assigns (`NEG = -1e9` at the top, `neg = -1e9` before it, which may be the line to fix)."""
    tree = parse(source)
    calls = [c for c in masking_calls(tree, line) if called_name(c) in ("masked_fill", "masked_fill_")] if tree else []
    if len(calls) != 1 or len(calls[0].args) < 2:
        return False
    assigned = {t.id for n in walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) for t in walk(t) if isinstance(t, ast.Name)}
    return not any(isinstance(n, ast.Name) and n.id in assigned for n in walk(calls[0].args[1]))


RESHAPES = {"view", "reshape", "unflatten"}


def sizes_computed_elsewhere(source: str, line: int) -> set[int] | None:
    """The lines computing the sizes a reshape on `line` is given (`.view(b, t, self.num_heads, self.head_dim)`, with
    `self.head_dim = d_in // num_heads` in __init__, or a local `hd = C // nh`), when every size it is given is a
    bare name, a constant or a size read from a shape: the sizes settled elsewhere are what they are (`b, t, _ =
    x.shape`, `self.num_heads = num_heads`) and the computed ones are the ones to suspect. None when the statement
    reshapes nothing, works a size out itself (`self.h * 2`), reads one assigned more than once or one its
    function is passed."""
    tree = parse(source)
    stmt = statement_at(tree, line) if tree is not None else None
    func = function_at(tree, line) if tree is not None else None
    if stmt is None or func is None:
        return None
    calls = [n for n in walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in RESHAPES]
    if not calls:
        return None
    params = {x.arg for x in walk(func.args) if isinstance(x, ast.arg)}
    found = set()
    for call in calls:
        sizes = [x for a in call.args for x in (a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a])]
        for s in sizes:
            if isinstance(s, ast.UnaryOp) and isinstance(s.operand, ast.Constant):
                continue  # -1
            if isinstance(s, ast.Constant) and isinstance(s.value, int) or shape_read(s):
                continue
            if is_self_attribute(s):
                if len(attribute_defs(class_at(tree, line) or tree, s.attr)) != 1:
                    return None
                if (a := attribute_built_at(source, line, s.attr)) is not None:
                    found.add(a)
                continue
            if not isinstance(s, ast.Name):
                return None
            if s.id in params:
                return None  # a size the caller passes (`def split(self, t, B, T)`): which call is wrong is not known
            where = assigned_lines(func, s.id)
            if len(where) != 1:
                return None
            a = next(iter(where))
            if not reads_size(source, a):
                found.add(a)
    return found


def shape_read(node) -> bool:
    """`x.shape[1]`, `x.size(1)`: a size that is what it is."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"


def fill_made_at(source: str, line: int) -> int | None:
    """The line making the fill value the one masked_fill call on `line` reads from a local name, when that name is
    assigned once in the function, nowhere else in the file, to a value made of constants alone (`fill =
    torch.finfo(torch.float32).min`, `neg = -1e9`, `float("-1e4")`): a raise in half precision comes from that value,
    made for this use. A constant of the module (`NEG = -1e9` at the top) may be meant for other dtypes: None."""
    tree = parse(source)
    func = function_at(tree, line) if tree is not None else None
    calls = [c for c in masking_calls(tree, line) if called_name(c) in ("masked_fill", "masked_fill_")] if func else []
    if len(calls) != 1 or len(calls[0].args) < 2 or not isinstance(name := calls[0].args[1], ast.Name):
        return None
    where = assigned_lines(func, name.id)
    params = {x.arg for x in walk(func.args) if isinstance(x, ast.arg)}
    if len(where) != 1 or name.id in params or assigned_lines(tree, name.id) != where:
        return None
    stmt = statement_at(tree, a := next(iter(where)))
    ok = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
    return a if ok and fill_constant(stmt.value) else None


def fill_constant(v) -> bool:
    """-1e9, float("-inf"), torch.finfo(dtype).min, -torch.finfo(torch.float32).max: a value no tensor makes."""
    if isinstance(v, ast.UnaryOp):
        return fill_constant(v.operand)
    if isinstance(v, ast.Constant):
        return isinstance(v.value, (int, float)) and not isinstance(v.value, bool)
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "float" and len(v.args) == 1:
        return isinstance(v.args[0], ast.Constant) or fill_constant(v.args[0])
    return isinstance(v, ast.Attribute) and v.attr in ("min", "max") and isinstance(v.value, ast.Call) \
        and isinstance(v.value.func, ast.Attribute) and v.value.func.attr == "finfo"


def discarded_at(source: str, step: str) -> list[int]:
    """Lines of statements that make a step's result and drop it (`scores.masked_fill(mask, -inf)`, `self.dropout(w)`
    on a line of their own): step "mask" (masked_fill, where) or "dropout" (a layer named for dropout, F.dropout
    without inplace=True). The result is thrown away: that statement is the one to fix."""
    tree = parse(source)
    found = []
    for n in walk(tree) if tree is not None else ():
        if not isinstance(n, ast.Expr) or not isinstance(call := n.value, ast.Call):
            continue
        name, f = called_name(call), call.func
        inplace = any(k.arg == "inplace" and not (isinstance(k.value, ast.Constant) and not k.value.value) for k in call.keywords)
        if step == "mask" and name in ("masked_fill", "where") or step == "dropout" and not inplace and (
                name == "dropout" or is_self_attribute(f) and "drop" in f.attr.lower()):
            found.append(n.lineno)
    return sorted(found)


def loops_at(tree: ast.Module, line: int) -> list[ast.For | ast.While]:
    """The loops whose body holds `line`, outermost first, within its innermost function."""
    func = function_at(tree, line)
    if func is None:
        return []
    loops = [n for n in walk(func) if isinstance(n, (ast.For, ast.While)) and n.body
             and (n.body[0].lineno <= line <= (n.end_lineno or n.lineno) or n.lineno == line)]
    return sorted(loops, key=lambda n: n.lineno)


def count_made_at(source: str, loop: ast.For) -> int | None:
    """The line where how many times `for ... in range(...)` runs is decided: the header, when its range computes the
    bound itself (`range(0, S - bs + 1, bs)`); the one statement assigning the one local name it reads, when that
    statement computes it (`n = S // bs`, then `range(n)`); else None (a parameter, a size read as it is, a name
    assigned twice, an iterator that is no range)."""
    it = loop.iter
    tree = parse(source)
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id != "range":
        return helper_range(tree, it.func.id)
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and not it.keywords):
        return None
    if any(not isinstance(a, (ast.Name, ast.Constant)) for a in it.args):
        return loop.lineno
    func = function_at(tree, loop.lineno)
    params = {a.arg for a in walk(func.args) if isinstance(a, ast.arg)}
    made = []
    for a in it.args:
        if not isinstance(a, ast.Name):
            continue
        where = assigned_lines(func, a.id)
        loop_vars = {n.id for f in walk(func) if isinstance(f, ast.For) for n in walk(f.target) if isinstance(n, ast.Name)}
        if a.id in params or a.id in loop_vars or len(where) != 1:
            return None
        line = next(iter(where))
        if not reads_size(source, line):
            made.append(line)
    return made[0] if len(made) == 1 else None


def helper_range(tree: ast.Module, name: str) -> int | None:
    """The line of the one return of the file's function `name` when it returns a range computing its bound itself."""
    defs = [n for n in walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name]
    if len(defs) != 1:
        return None
    returns = [n for n in walk(defs[0]) if isinstance(n, ast.Return)]
    if len(returns) != 1:
        return None
    v = returns[0].value
    if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "range" and not v.keywords):
        return None
    return returns[0].lineno if any(not isinstance(a, (ast.Name, ast.Constant)) for a in v.args) else None


def skips_blocks(tree: ast.Module, loop: ast.For | ast.While, line: int) -> bool:
    """The loop may leave out iterations other than by its count: a break or continue of its own (unless its
    condition reads where a loop around it is, `if j0 > i0: break`: a triangle, as causal tiles cut), or an `if`
    between its header and the statement on `line` (the block may not be taken on every iteration)."""
    def own(node):  # the statements under node that belong to this loop, not to a loop nested in it
        for child in ast.iter_child_nodes(node):
            yield child
            if not isinstance(child, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from own(child)
    around = [n for n in loops_at(tree, loop.lineno) if n is not loop]
    where = {x.id for a in around if isinstance(a, ast.For) for x in walk(a.target) if isinstance(x, ast.Name)}
    where |= {x.id for a in around for st in a.body if not (st.lineno <= loop.lineno <= (st.end_lineno or st.lineno))
              for x in walk(st) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
    where -= {x.id for x in walk(loop.target) if isinstance(x, ast.Name)} if isinstance(loop, ast.For) else set()
    for test in (n.test for n in own(loop) if isinstance(n, ast.If)
                 and any(isinstance(b, (ast.Break, ast.Continue)) for b in n.body + n.orelse)):
        if not where & {x.id for x in walk(test) if isinstance(x, ast.Name)}:
            return True
    if any(isinstance(n, (ast.Break, ast.Continue)) for n in own(loop)
           if not any(isinstance(i, ast.If) and n in i.body + i.orelse for i in own(loop))):
        return True
    return any(isinstance(n, (ast.If, ast.Try, ast.With, ast.Match)) and n.lineno <= line <= (n.end_lineno or n.lineno)
               and loop.lineno < n.lineno for n in walk(loop))
