"""Disguised copies, as someone hiding a copy would write them (tests/test_similarity.py, measurements)."""
import ast
import builtins

from grader.catalog import load_catalog

LIBRARIES = ("torch", "F")


def _torch(name: str) -> ast.Attribute:
    return ast.Attribute(ast.Name("torch", ast.Load()), name, ast.Load())


def _library_call(f: ast.expr) -> bool:
    return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in LIBRARIES


class Respell(ast.NodeTransformer):
    """Equivalent spellings: @ as torch.matmul, method and function forms swapped, keyword and positional
    dim swapped, math.sqrt(d) as d ** 0.5, x.size(i) as x.shape[i]."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult):
            return ast.Call(_torch("matmul"), [node.left, node.right], [])
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if not isinstance(f, ast.Attribute):
            return node
        if f.attr == "softmax" and _library_call(f) and node.args:
            dims = [k.value for k in node.keywords if k.arg == "dim"] or node.args[1:2]
            return ast.Call(ast.Attribute(node.args[0], "softmax", ast.Load()), dims, [])
        if f.attr == "softmax":
            dims = [ast.keyword("dim", a) for a in node.args[:1]]
            return ast.Call(_torch("softmax"), [f.value], dims + node.keywords)
        if f.attr == "transpose" and not _library_call(f):
            return ast.Call(_torch("transpose"), [f.value, *node.args], node.keywords)
        if f.attr == "sqrt" and isinstance(f.value, ast.Name) and f.value.id == "math":
            return ast.BinOp(node.args[0], ast.Pow(), ast.Constant(0.5))
        if f.attr == "size" and node.args:
            return ast.Subscript(ast.Attribute(f.value, "shape", ast.Load()), node.args[0], ast.Load())
        return node


def _names(stmt: ast.stmt, ctx: type) -> set[str]:
    return ({n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}
            | {n.attr for n in ast.walk(stmt) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ctx)})


def swap_independent(tree: ast.Module) -> ast.Module:
    """In each function, swap the first two adjacent assignments that do not use each other's names."""
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        body = fn.body
        for i in range(len(body) - 1):
            a, b = body[i], body[i + 1]
            if not (isinstance(a, ast.Assign) and isinstance(b, ast.Assign)):
                continue
            if (_names(a, ast.Store) & (_names(b, ast.Load) | _names(b, ast.Store))
                    or _names(b, ast.Store) & _names(a, ast.Load)):
                continue
            body[i], body[i + 1] = b, a
            break
    return tree


class _FirstSoftmax(ast.NodeTransformer):
    """Replaces the first softmax call by normalise_rows(its input); keeps the call in self.call."""
    call = None

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if self.call is not None or not (isinstance(f, ast.Attribute) and f.attr == "softmax"):
            return node
        self.call = node
        if _library_call(f):
            scores, node.args[0] = node.args[0], ast.Name("scores", ast.Load())
        else:
            scores, f.value = f.value, ast.Name("scores", ast.Load())
        return ast.Call(ast.Name("normalise_rows", ast.Load()), [scores], [])


def extract_helper(tree: ast.Module) -> ast.Module:
    """Move the first softmax call into a module-level helper, called where it was."""
    finder = _FirstSoftmax()
    tree = finder.visit(tree)
    if finder.call is not None:
        helper = ast.parse("def normalise_rows(scores):\n    return 0").body[0]
        helper.body[0].value = finder.call
        at = max(i for i, n in enumerate(tree.body) if isinstance(n, (ast.Import, ast.ImportFrom))) + 1
        tree.body.insert(at, helper)
    return tree


class Rename(ast.NodeTransformer):
    """Every variable and argument renamed, and the attributes (and buffers) the file itself creates, except
    the contract's parameter names."""

    def __init__(self, number: int, tree: ast.Module):
        self.contract = set(load_catalog().get(number).roles.values())
        self.keep = set(dir(builtins)) | {"torch", "nn", "math", "F", "self", "normalise_rows"}
        self.keep |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        self.own = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
        self.own |= {c.args[0].value for c in ast.walk(tree)
                     if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                     and c.func.attr == "register_buffer" and isinstance(c.args[0], ast.Constant)}

    def visit_Constant(self, node):
        if isinstance(node.value, str) and node.value in self.own and node.value not in self.contract:
            node.value = f"hidden_{node.value}"
        return node

    def visit_Name(self, node):
        if node.id not in self.keep:
            node.id = f"my_{node.id}_var"
        return node

    def visit_arg(self, node):
        if node.arg != "self":
            node.arg = f"my_{node.arg}_var"
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        mine = isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in self.own
        if mine and node.attr not in self.contract:
            node.attr = f"hidden_{node.attr}"
        return node


def disguised(ex) -> str:
    """The reference respelled, two independent lines swapped, softmax moved into a helper, every chosen name
    renamed, a docstring, comments, prints and blank lines added; it still runs."""
    return disguise(ex.solution_path.read_text(), ex.number)


def disguise(text: str, number: int) -> str:
    """disguised() for any source of exercise `number`."""
    tree = ast.parse(text)
    tree = Rename(number, tree).visit(extract_helper(swap_independent(Respell().visit(tree))))
    code = ast.unparse(ast.fix_missing_locations(tree))
    lines = []
    for line in code.splitlines():
        if line.strip().startswith("return ") and line.startswith("        "):
            lines.append(line[: len(line) - len(line.lstrip())] + "print('debug')")
        lines.append(line)
    return '"""All my own work."""\n# started from a blank file\n\n' + "\n\n".join(lines) + "\n"
