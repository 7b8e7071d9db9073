"""Disguised copies of the reference solutions, as someone hiding a copy would write them (tests and bench)."""
import ast
import builtins

from grader.catalog import load_catalog


class Respell(ast.NodeTransformer):
    """Equivalent spellings: @ -> torch.matmul, method <-> function forms, keyword <-> positional dim, ** 0.5."""
    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult):
            return ast.Call(ast.Attribute(ast.Name("torch", ast.Load()), "matmul", ast.Load()), [node.left, node.right], [])
        return node
    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "softmax" and isinstance(f.value, ast.Name) and f.value.id in ("torch", "F") and node.args:
            dims = [k.value for k in node.keywords if k.arg == "dim"] or node.args[1:2]
            return ast.Call(ast.Attribute(node.args[0], "softmax", ast.Load()), dims, [])
        if isinstance(f, ast.Attribute) and f.attr == "softmax":
            return ast.Call(ast.Attribute(ast.Name("torch", ast.Load()), "softmax", ast.Load()), [f.value], [ast.keyword("dim", a) for a in node.args[:1]] + node.keywords)
        if isinstance(f, ast.Attribute) and f.attr == "transpose" and not (isinstance(f.value, ast.Name) and f.value.id == "torch"):
            return ast.Call(ast.Attribute(ast.Name("torch", ast.Load()), "transpose", ast.Load()), [f.value, *node.args], node.keywords)
        if isinstance(f, ast.Attribute) and f.attr == "sqrt" and isinstance(f.value, ast.Name) and f.value.id == "math":
            return ast.BinOp(node.args[0], ast.Pow(), ast.Constant(0.5))
        if isinstance(f, ast.Attribute) and f.attr == "size" and node.args:
            return ast.Subscript(ast.Attribute(f.value, "shape", ast.Load()), node.args[0], ast.Load())
        return node

def swap_independent(tree):
    """Swap the first two adjacent assignments of each function that do not use each other's names."""
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        body = fn.body
        for i in range(len(body) - 1):
            a, b = body[i], body[i + 1]
            if not (isinstance(a, ast.Assign) and isinstance(b, ast.Assign)):
                continue
            names = lambda s, ctx: {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)} | {
                n.attr for n in ast.walk(s) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ctx)}
            if names(a, ast.Store) & (names(b, ast.Load) | names(b, ast.Store)) or names(b, ast.Store) & names(a, ast.Load):
                continue
            body[i], body[i + 1] = b, a
            break
    return tree

def extract_helper(tree):
    """Move the first softmax call into a module-level helper."""
    class Find(ast.NodeTransformer):
        done = False
        def visit_Call(self, node):
            self.generic_visit(node)
            f = node.func
            if not self.done and isinstance(f, ast.Attribute) and f.attr == "softmax" and len(node.args) + len(node.keywords) >= 1:
                self.done = True
                self.call = node
                return ast.Call(ast.Name("normalise_rows", ast.Load()), [node.args[0] if node.args and isinstance(f.value, ast.Name) and f.value.id in ("torch", "F") else f.value], [])
            return node
    finder = Find()
    tree = finder.visit(tree)
    if finder.done:
        call = finder.call
        f = call.func
        if isinstance(f.value, ast.Name) and f.value.id in ("torch", "F"):
            call.args[0] = ast.Name("scores", ast.Load())
        else:
            f.value = ast.Name("scores", ast.Load())
        helper = ast.parse("def normalise_rows(scores):\n    return 0").body[0]
        helper.body[0].value = call
        at = max(i for i, n in enumerate(tree.body) if isinstance(n, (ast.Import, ast.ImportFrom))) + 1
        tree.body.insert(at, helper)
    return tree

class Rename(ast.NodeTransformer):
    keep = set(dir(builtins)) | {"torch", "nn", "math", "F", "self", "normalise_rows"}
    def __init__(self, number, tree):
        self.contract = set(load_catalog().get(number).roles.values())
        self.keep = self.keep | {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        self.own = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)}
        self.own |= {c.args[0].value for c in ast.walk(tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
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
        if isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in self.own and node.attr not in self.contract:
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
    ast.fix_missing_locations(tree)
    code = ast.unparse(tree)
    lines = []
    for line in code.splitlines():
        lines.append(line)
        if line.strip().startswith("return ") and line.startswith("        "):
            lines.insert(len(lines) - 1, line[: len(line) - len(line.lstrip())] + "print('debug')")
    return '"""All my own work."""\n# started from a blank file\n\n' + "\n\n".join(lines) + "\n"
