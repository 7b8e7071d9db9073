"""Code as the similarity check sees it: one spelling for each way of writing the same thing.

normal_form(source) parses a file and rewrites its syntax tree so that light disguises vanish:
imports resolve (`F.softmax`, `torch.softmax`, `x.softmax` and `torch.nn.functional.softmax` are one
operation), `a @ b`, `torch.matmul(a, b)`, `a.matmul(b)` and `torch.bmm` are one call, method and
function forms agree (`x.transpose(1, 2)` is `torch.transpose(x, 1, 2)`), keyword and positional
arguments agree (`dim=-1` or `-1`), `x.size(-1)` is `x.shape[-1]`, `** 0.5` is a square root,
in-place `masked_fill_` is an assignment, annotations, docstrings, asserts and prints are gone, small
helpers (a few assignments and a return) are inlined where they are called, and independent
statements are put in one canonical order. tokens() then reads the tree with the names people
choose replaced by placeholders; every token keeps the source line it came from.
"""
from __future__ import annotations

import ast
import builtins
import copy

VERSION = 1  # bump when the normal form changes: stored public fingerprints depend on it

OP = "@"  # prefix of a canonical operation's name; no Python identifier starts with it
LIBRARIES = ("torch.nn.functional.", "torch.special.", "torch.linalg.", "torch.", "math.", "numpy.", "np.")
SAME_OP = {"bmm": "matmul", "mm": "matmul", "masked_fill_": "masked_fill", "view": "reshape", "swapaxes": "transpose",
           "swapdims": "transpose", "concat": "cat", "concatenate": "cat", "true_divide": "div", "multiply": "mul",
           "subtract": "sub"}
ARITHMETIC = {"div": ast.Div, "mul": ast.Mult, "add": ast.Add, "sub": ast.Sub}  # torch.div(a, b) is a / b
# Tensor methods that are also torch functions taking the tensor first: x.f(a) is f(x, a).
METHODS = {"softmax", "log_softmax", "matmul", "bmm", "mm", "transpose", "masked_fill", "masked_fill_", "view",
           "reshape", "permute", "contiguous", "sum", "exp", "max", "min", "mean", "sqrt", "rsqrt", "split", "chunk",
           "unsqueeze", "squeeze", "expand", "repeat_interleave", "tril", "triu", "float", "to", "bool", "flatten",
           "unbind", "div", "mul", "add", "sub", "where", "masked_select", "swapaxes", "swapdims", "cos", "sin",
           "neg", "abs", "logical_not", "type_as", "expand_as", "view_as", "amax", "logsumexp", "unflatten", "clone",
           "detach"}
# Parameter order of the common operations, so a keyword argument lands where a positional one would.
POSITIONS = {"softmax": ["input", "dim"], "log_softmax": ["input", "dim"], "transpose": ["input", "dim0", "dim1"],
             "masked_fill": ["input", "mask", "value"], "matmul": ["input", "other"], "split": ["tensor",
             "split_size_or_sections", "dim"], "chunk": ["input", "chunks", "dim"], "cat": ["tensors", "dim"],
             "stack": ["tensors", "dim"], "sum": ["input", "dim"], "mean": ["input", "dim"], "max": ["input", "dim"],
             "amax": ["input", "dim"], "tril": ["input", "diagonal"], "triu": ["input", "diagonal"],
             "dropout": ["input", "p", "training"], "unsqueeze": ["input", "dim"], "squeeze": ["input", "dim"],
             "repeat_interleave": ["input", "repeats", "dim"], "where": ["condition", "input", "other"],
             "unbind": ["input", "dim"], "logsumexp": ["input", "dim"], "flatten": ["input", "start_dim", "end_dim"]}
KEEP = set(dir(builtins)) - {"print"}
USUAL_NAMES = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "math": "math"}
MAX_HELPER_STATEMENTS = 6
MAX_INLINED_NODES = 20000  # per file: h(h(h(...))) with `return x + x` would otherwise grow exponentially
MAX_REORDERED = 300  # statements in one block; a longer block keeps its order (the reordering is quadratic)


def qualified(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """The dotted name an attribute chain rooted at an imported name stands for (`F.softmax` ->
    torch.nn.functional.softmax), else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def op_name(dotted: str) -> str:
    for prefix in LIBRARIES:
        if dotted.startswith(prefix) and "." not in dotted[len(prefix):]:
            name = dotted[len(prefix):]
            return SAME_OP.get(name, name)
    return dotted


def _op(name: str, args: list[ast.expr], keywords: list[ast.keyword], like: ast.AST) -> ast.Call:
    name = SAME_OP.get(name, name)
    args, keywords = list(args), list(keywords)
    order = POSITIONS.get(name, [])
    for keyword in sorted(keywords, key=lambda k: order.index(k.arg) if k.arg in order else len(order)):
        if keyword.arg in order and order.index(keyword.arg) == len(args):
            args.append(keyword.value)
            keywords.remove(keyword)
    keywords.sort(key=lambda k: k.arg or "")
    return ast.copy_location(ast.Call(ast.copy_location(ast.Name(OP + name, ast.Load()), like), args, keywords), like)


def _is_const(node: ast.AST, value) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == value


def _infinity(node: ast.AST) -> float | None:
    """float("-inf") and the like as the value they spell."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float"
            and len(node.args) == 1):
        arg = node.args[0]
        text = str(arg.value).strip().lower() if isinstance(arg, ast.Constant) else ""
        if text.lstrip("+-") in ("inf", "infinity"):
            return float(text)
    return None


class Canon(ast.NodeTransformer):
    """One spelling per construct (see the module docstring); names are kept, tokens() hides them."""

    def __init__(self, aliases: dict[str, str]):
        self.aliases = aliases

    def visit_Import(self, node):
        return None

    visit_ImportFrom = visit_Import

    def visit_Expr(self, node):
        value = node.value
        if isinstance(value, ast.Constant):
            return None  # docstrings and stray strings
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print":
            return None
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr.endswith("_")
                and value.func.attr[:-1] in METHODS and isinstance(value.func.value, (ast.Name, ast.Attribute))):
            target = copy.deepcopy(value.func.value)
            for n in ast.walk(target):
                if isinstance(n, (ast.Name, ast.Attribute)):
                    n.ctx = ast.Load()
            _store(target)
            call = ast.Call(ast.Attribute(copy.deepcopy(value.func.value), value.func.attr[:-1], ast.Load()),
                            value.args, value.keywords)
            return self.visit(ast.copy_location(ast.Assign([target], ast.copy_location(call, node)), node))
        return self.generic_visit(node)

    def visit_Assert(self, node):
        return None

    def visit_Pass(self, node):
        return None

    def visit_AnnAssign(self, node):
        if node.value is None:
            return None
        return self.visit(ast.copy_location(ast.Assign([node.target], node.value), node))

    def visit_AugAssign(self, node):
        load = copy.deepcopy(node.target)
        for n in ast.walk(load):
            if hasattr(n, "ctx"):
                n.ctx = ast.Load()
        value = ast.copy_location(ast.BinOp(load, node.op, node.value), node)
        return self.visit(ast.copy_location(ast.Assign([node.target], value), node))

    def visit_FunctionDef(self, node):
        node.returns = None
        node.decorator_list = [d for d in node.decorator_list if qualified(d, self.aliases) is None]
        for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]:
            if a is not None:
                a.annotation = None
        self.generic_visit(node)
        node.body = node.body or [ast.Pass()]
        return node

    def generic_visit(self, node):
        super().generic_visit(node)
        if isinstance(getattr(node, "body", None), list) and not node.body:
            node.body = [ast.Pass()]
        return node

    def visit_Attribute(self, node):
        dotted = qualified(node, self.aliases)
        if dotted is not None:
            if dotted in ("math.inf", "torch.inf", "numpy.inf", "np.inf"):
                return ast.copy_location(ast.Constant(float("inf")), node)
            return ast.copy_location(ast.Name(OP + op_name(dotted), ast.Load()), node)
        self.generic_visit(node)
        if node.attr == "mT":
            return _op("transpose", [node.value, ast.Constant(-2), ast.Constant(-1)], [], node)
        return node

    def visit_Call(self, node):
        if _infinity(node) is not None:
            return ast.copy_location(ast.Constant(_infinity(node)), node)
        func = node.func
        if (isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "super"):
            func.args = []
        own = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
        if isinstance(func, ast.Attribute) and not own and qualified(func, self.aliases) is None:
            if func.attr == "size":
                obj = self.visit(func.value)
                shape = ast.copy_location(ast.Attribute(obj, "shape", ast.Load()), node)
                if node.args:
                    return ast.copy_location(ast.Subscript(shape, self.visit(node.args[0]), ast.Load()), node)
                return shape
            if func.attr in METHODS:
                obj = self.visit(func.value)
                args = [self.visit(a) for a in node.args]
                keywords = [self.visit(k) for k in node.keywords]
                if func.attr in ("view", "reshape", "permute", "expand") and len(args) == 1 and isinstance(
                        args[0], (ast.Tuple, ast.List)):
                    args = list(args[0].elts)
                return _op(func.attr, [obj, *args], keywords, node)
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id.startswith(OP):
            name = node.func.id[len(OP):]
            if name in ("view", "reshape", "permute") and len(node.args) == 2 and isinstance(
                    node.args[1], (ast.Tuple, ast.List)):
                node.args = [node.args[0], *node.args[1].elts]
            return _op(name, node.args, node.keywords, node)
        return node

    def visit(self, node):
        out = super().visit(node)
        if (isinstance(out, ast.Call) and isinstance(out.func, ast.Name) and out.func.id[len(OP):] in ARITHMETIC
                and out.func.id.startswith(OP) and len(out.args) == 2 and not out.keywords):
            return ast.copy_location(ast.BinOp(out.args[0], ARITHMETIC[out.func.id[len(OP):]](), out.args[1]), out)
        return out

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) and node.operand.value == float(
                "inf"):
            return ast.copy_location(ast.Constant(float("-inf")), node)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        if isinstance(node.op, ast.MatMult):
            return _op("matmul", [left, right], [], node)
        if isinstance(node.op, ast.Pow) and _is_const(right, 0.5):
            return _op("sqrt", [left], [], node)
        if isinstance(node.op, ast.Pow) and _is_const(right, -0.5):
            return _op("rsqrt", [left], [], node)
        if isinstance(node.op, ast.Mult) and _is_rsqrt(right):  # a * rsqrt(d), a * (1 / sqrt(d)) -> a / sqrt(d)
            return ast.copy_location(ast.BinOp(left, ast.Div(), _root_of(right)), node)
        return node


def _is_rsqrt(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == OP + "rsqrt":
        return True
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _is_const(node.left, 1)
            and isinstance(node.right, ast.Call) and isinstance(node.right.func, ast.Name)
            and node.right.func.id == OP + "sqrt")


def _root_of(node: ast.AST) -> ast.expr:
    if isinstance(node, ast.Call) and node.func.id == OP + "rsqrt":
        return _op("sqrt", node.args[:1], [], node)
    return node.right


def _store(node: ast.AST) -> None:
    node.ctx = ast.Store()


def aliases_of(tree: ast.Module) -> dict[str, str]:
    """Local name -> the module or object it was imported as (`F` -> torch.nn.functional); imports at the
    top of the file, of a class or of a function, over the usual names (torch, nn, F, math)."""
    found = dict(USUAL_NAMES)
    statements = list(tree.body)
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            statements += node.body
            statements += [s for n in node.body if isinstance(n, ast.FunctionDef) for s in n.body]
    for node in statements:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    found[a.asname] = a.name
                else:
                    found[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                if a.name != "*":
                    found[a.asname or a.name] = f"{node.module}.{a.name}"
    return found


# --- small helpers inlined where they are called ---------------------------------------------------------------

def _helper_body(fn: ast.FunctionDef) -> ast.expr | None:
    """The expression a helper returns, its local assignments substituted in; None if not a small helper."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not body or len(body) > MAX_HELPER_STATEMENTS or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        return None
    if fn.decorator_list or fn.args.vararg or fn.args.kwarg:
        return None
    result = copy.deepcopy(body[-1].value)
    for stmt in reversed(body[:-1]):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            return None
        result = _substitute(result, {stmt.targets[0].id: stmt.value})
    return result


def _substitute(expr: ast.expr, values: dict[str, ast.expr]) -> ast.expr:
    class Put(ast.NodeTransformer):
        def visit_Name(self, node):
            return copy.deepcopy(values[node.id]) if node.id in values and isinstance(node.ctx, ast.Load) else node
    return Put().visit(expr)


def _bind(fn: ast.FunctionDef, call: ast.Call, skip_self: bool) -> dict[str, ast.expr] | None:
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]][1 if skip_self else 0:]
    defaults = dict(zip(params[len(params) - len(fn.args.defaults):], fn.args.defaults)) if fn.args.defaults else {}
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(params) or fn.args.kwonlyargs:
        return None
    bound = dict(zip(params, call.args))
    for k in call.keywords:
        if k.arg is None or k.arg not in params or k.arg in bound:
            return None
        bound[k.arg] = k.value
    for p in params:
        if p not in bound:
            if p not in defaults:
                return None
            bound[p] = defaults[p]
    return bound


def _size(node: ast.AST) -> int:
    return sum(1 for _ in ast.walk(node))


def inline_helpers(tree: ast.Module) -> None:
    """Replace calls of small module functions and `self.` methods by what they return (two rounds), within
    a budget of MAX_INLINED_NODES; a helper some call still needs is kept."""
    budget = [MAX_INLINED_NODES]
    for _ in range(2):
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        methods = {}
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for n in cls.body:
                if isinstance(n, ast.FunctionDef) and n.args.args and not n.name.startswith("__"):
                    methods[n.name] = n
        bodies = {("f", k): _helper_body(v) for k, v in functions.items()}
        bodies |= {("m", k): _helper_body(v) for k, v in methods.items()}
        called = {("f", n.func.id) if isinstance(n.func, ast.Name) else ("m", n.func.attr)
                  for n in ast.walk(tree) if isinstance(n, ast.Call)
                  and (isinstance(n.func, ast.Name) or isinstance(n.func, ast.Attribute)
                       and isinstance(n.func.value, ast.Name) and n.func.value.id == "self")}
        if not any(bodies.get(key) is not None for key in called):
            return
        used: set[tuple[str, str]] = set()
        kept: set[tuple[str, str]] = set()

        class Inline(ast.NodeTransformer):
            def visit_Call(self, node):
                self.generic_visit(node)
                f = node.func
                if isinstance(f, ast.Name) and bodies.get(("f", f.id)) is not None:
                    key, fn, skip = ("f", f.id), functions[f.id], False
                elif (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self"
                      and bodies.get(("m", f.attr)) is not None):
                    key, fn, skip = ("m", f.attr), methods[f.attr], True
                else:
                    return node
                if key in self.inside:
                    return node
                bound = _bind(fn, node, skip)
                cost = _size(bodies[key]) * (1 + sum(_size(v) for v in bound.values())) if bound else 0
                if bound is None or cost > budget[0]:
                    kept.add(key)
                    return node
                budget[0] -= cost
                used.add(key)
                if skip:
                    bound[fn.args.args[0].arg] = ast.Name("self", ast.Load())
                inlined = _substitute(copy.deepcopy(bodies[key]), bound)
                return ast.copy_location(inlined, node) if not hasattr(inlined, "lineno") else inlined

        for top in tree.body:
            inliner = Inline()
            inliner.inside = {("f", top.name)} if isinstance(top, ast.FunctionDef) else set()
            if isinstance(top, ast.ClassDef):
                for fn in top.body:
                    if isinstance(fn, ast.FunctionDef):
                        inliner.inside = {("m", fn.name)}
                        inliner.visit(fn)
                continue
            inliner.visit(top)
        used -= kept
        if not used:
            return
        tree.body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and ("f", n.name) in used)]
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            cls.body = [n for n in cls.body if not (isinstance(n, ast.FunctionDef) and ("m", n.name) in used)]


# --- independent statements in one order ------------------------------------------------------------------------

def _effects(stmt: ast.stmt, memo: dict) -> tuple[set[str], set[str], bool]:
    """(names and self.attributes read, written; whether it must keep its place among other such statements)."""
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
        return set(), {stmt.name}, False
    known = memo.get(("effects", id(stmt)))
    if known is not None:
        return known
    reads, writes = set(), set()
    stack = [stmt]
    while stack:
        n = stack.pop()
        if n is not stmt and isinstance(n, ast.stmt):
            r, w, _ = _effects(n, memo)
            reads |= r
            writes |= w
            continue
        if isinstance(n, ast.Name):
            (writes if isinstance(n.ctx, (ast.Store, ast.Del)) else reads).add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            (writes if isinstance(n.ctx, (ast.Store, ast.Del)) else reads).add(f"{n.value.id}.{n.attr}")
        stack.extend(ast.iter_child_nodes(n))
    barrier = isinstance(stmt, (ast.Expr, ast.Return, ast.Raise, ast.Break, ast.Continue, ast.If, ast.For,
                                ast.While, ast.With, ast.Try, ast.Global, ast.Nonlocal, ast.Delete))
    memo[("effects", id(stmt))] = (reads, writes, barrier)
    return reads, writes, barrier


def canonical_order(body: list[ast.stmt], memo: dict[int, list] | None = None) -> list[ast.stmt]:
    """The statements in dependency order, ties broken by their placeholder text (so swapping two
    independent lines changes nothing)."""
    memo = {} if memo is None else memo
    for stmt in body:
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                setattr(stmt, field, canonical_order(inner, memo))
    if len(body) < 2 or len(body) > MAX_REORDERED:
        return body
    facts = [_effects(s, memo) for s in body]
    after: list[set[int]] = [set() for _ in body]
    waiting = [0] * len(body)
    for j in range(len(body)):
        rj, wj, bj = facts[j]
        for i in range(j):
            ri, wi, bi = facts[i]
            if (bi and bj) or wi & (rj | wj) or ri & wj or isinstance(body[j], (ast.Return, ast.Raise)):
                after[i].add(j)
                waiting[j] += 1
    keys: dict[int, str] = {}

    def key(i: int) -> tuple[str, int]:  # a statement's text is only needed when it competes with another
        if i not in keys:
            keys[i] = " ".join(t for t, _ in tokens_of(body[i], memo))
        return keys[i], i

    ready = [i for i in range(len(body)) if not waiting[i]]
    out = []
    while ready:
        i = ready[0] if len(ready) == 1 else min(ready, key=key)
        ready.remove(i)
        out.append(body[i])
        for j in after[i]:
            waiting[j] -= 1
            if not waiting[j]:
                ready.append(j)
    return out


# --- the token stream ------------------------------------------------------------------------------------------

def tokens_of(tree: ast.AST, memo: dict[int, list] | None = None) -> list[tuple[str, int]]:
    """(token, line) pairs: the tree's shape and operations, with chosen names as placeholders. memo keeps
    each statement's tokens by id() while its tree is alive and no longer changes below that statement."""
    out: list[tuple[str, int]] = []

    def visit(node: ast.AST, line: int) -> None:
        if memo is not None and isinstance(node, ast.stmt):
            known = memo.get(id(node))
            if known is None:
                start = len(out)
                shape(node, line)
                memo[id(node)] = out[start:]
            else:
                out.extend(known)
            return
        shape(node, line)

    def shape(node: ast.AST, line: int) -> None:
        line = getattr(node, "lineno", line) or line
        if isinstance(node, ast.expr_context):
            return
        if isinstance(node, ast.Name):
            name = node.id
            out.append((name if name.startswith(OP) or name in KEEP else "name", line))
        elif isinstance(node, ast.Constant):
            value = node.value
            out.append((f"const:{value}" if isinstance(value, float) and abs(value) == float("inf")
                        else f"const:{type(value).__name__}", line))
        elif isinstance(node, ast.arg):
            out.append(("arg", line))
        elif isinstance(node, ast.Attribute):
            visit(node.value, line)
            own = isinstance(node.value, ast.Name) and node.value.id == "self"
            out.append(("." + ("attr" if own else node.attr), line))
        elif isinstance(node, ast.keyword):
            out.append((f"{node.arg or '**'}=", line))
            visit(node.value, line)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.append((type(node).__name__, line))
            for child in ast.iter_child_nodes(node):
                visit(child, line)
            out.append(("end", getattr(node, "end_lineno", line) or line))
        else:
            out.append((type(node).__name__, line))
            for child in ast.iter_child_nodes(node):
                visit(child, line)

    visit(tree, 1)
    return out


def normal_form(source: str, memo: dict[int, list] | None = None) -> ast.Module:
    """The file's syntax tree in normal form (raises SyntaxError, ValueError or RecursionError); memo, if
    given, is filled with its statements' tokens for tokens_of."""
    tree = ast.parse(source)
    aliases = aliases_of(tree)
    tree = Canon(aliases).visit(tree)
    inline_helpers(tree)
    tree.body = canonical_order(tree.body, memo)
    return tree


def tokens(source: str) -> list[tuple[str, int]]:
    memo: dict[int, list] = {}
    return tokens_of(normal_form(source, memo), memo)
