"""Where the policy can prove that ``self`` is an instance of the file's own ``nn.Module`` class.

There, ``self.eval()`` and ``self.modules()`` are nn.Module's methods (elsewhere ``eval`` and ``modules`` are escape
names: the built-in, ``sys.modules``), and an attribute the file never names (``self.W_value`` in a file that forgot
to define it) is an AttributeError at run time or a buffer or submodule registered under a computed name, never a
route. The proof (SECURITY.md, "Proven receivers"):

* a *module class* is a class of the module's body (not nested) whose every base is a torch.nn module class (``nn.Module``, ``nn.Linear``;
  grader.reachable.module_classes) or another module class, with no keyword (``metaclass=``), no decorator, and a
  name the file binds once;
* its class object never becomes a value: its name is only called, subclassed, given to ``isinstance``/``issubclass``
  or as ``super``'s first argument, or dereferenced for a name that is not a function of an own class (so never
  ``C.forward(anything)``, ``E = C``, ``[C]``, ``deco(C)``); it has no classmethod (whose ``cls`` would be the class);
  every own class deriving from it is a module class too (it inherits its methods); and the file never keeps
  ``type(x)`` (only ``type(x).__name__`` or a comparison);
* a *proven method* is a function in such a class's body whose first positional parameter is named ``self`` (which
  nothing may rebind) and whose decorators are only ``property`` or torch's grad-mode and autocast decorators, which
  call it with the arguments they are given.

Then a method can only be reached through an instance (or ``super()`` with one), so its ``self`` is one: its class's
attributes are the file's own names and torch.nn's public API (a test checks there is nothing else), and the
instance's are the ones the file set.
"""
from __future__ import annotations

import ast
from collections import Counter

from grader import reachable

TRUSTED_DECORATORS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.enable_grad", "torch.autocast",
                                "torch.set_grad_enabled", "property"})
# nn.Module methods whose names are escape names elsewhere (builtins.eval, sys.modules)
MODULE_METHODS = frozenset({"eval", "modules"})


def _dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def _bindings(nodes: list[ast.AST]) -> Counter:
    """How many times the file binds each name (a name bound twice can be anything)."""
    count = Counter()
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            count[node.id] += 1
        elif isinstance(node, ast.arg):
            count[node.arg] += 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            count[node.name] += 1
        elif isinstance(node, ast.alias):
            count[node.asname or node.name.split(".")[0]] += 1
        elif isinstance(node, ast.ExceptHandler) and node.name:
            count[node.name] += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                count[name] += 2
    return count


class _File:
    def __init__(self, tree: ast.AST):
        self.nodes = list(ast.walk(tree))
        self.parent = {id(child): node for node in self.nodes for child in ast.iter_child_nodes(node)}
        self.count = _bindings(self.nodes)
        self.imports = {}
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.imports[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    self.imports[a.asname or a.name] = f"{node.module}.{a.name}"
        self.classes = {n.name: n for n in self.nodes if isinstance(n, ast.ClassDef)}
        # only a class of the module's body can be proven: a nested one is reached as Outer.A, not by its name
        self.top = {n.name for n in getattr(tree, "body", []) if isinstance(n, ast.ClassDef)}
        self.functions = {f.name for c in self.classes.values() for f in c.body
                          if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def resolve(self, node: ast.AST) -> str | None:
        """The library path a name or dotted name means (torch.nn.Module for nn.Module), if the file binds its root
        exactly once, by an import."""
        parts = _dotted(node)
        if not parts or parts[0] not in self.imports or self.count[parts[0]] != 1:
            return None
        return ".".join([self.imports[parts[0]], *parts[1:]])

    def library_module_base(self, node: ast.AST) -> bool:
        path = self.resolve(node)
        return bool(path) and path.rsplit(".", 1)[0] == "torch.nn" and path.rsplit(".", 1)[1] in reachable.module_classes()

    def keeps_a_type(self) -> bool:
        """Whether type(x) is used as anything but type(x).__name__ or an operand of a comparison."""
        for node in self.nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type":
                up = self.parent.get(id(node))
                if not (isinstance(up, ast.Attribute) and up.attr == "__name__" or isinstance(up, ast.Compare)):
                    return True
        return False

    def value_uses(self, name: str) -> bool:
        """Whether the class name is used as a value: anything but C(...), a base, isinstance(x, C), super(C, ...),
        or C.attr for an attr that is no own class's function."""
        for node in self.nodes:
            if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
                continue
            up = self.parent.get(id(node))
            if isinstance(up, ast.Tuple):
                up, node = self.parent.get(id(up)), up
            if isinstance(up, ast.Call) and up.func is node and isinstance(node, ast.Name):
                continue
            if isinstance(up, ast.ClassDef) and node in up.bases:
                continue
            if isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id in ("isinstance", "issubclass") \
                    and self.count[up.func.id] == 0 and len(up.args) == 2 and up.args[1] is node:
                continue
            if isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id == "super" \
                    and self.count["super"] == 0 and up.args and up.args[0] is node and isinstance(node, ast.Name):
                continue
            if isinstance(up, ast.Attribute) and up.value is node and up.attr not in self.functions:
                continue
            return True
        return False

    def builtin(self, node: ast.AST, name: str) -> bool:
        """Whether node is the built-in name itself (the file never binds that name)."""
        return isinstance(node, ast.Name) and node.id == name and self.count[name] == 0

    def trusted(self, decorator: ast.AST) -> bool:
        if self.builtin(decorator, "property"):
            return True
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self.resolve(target) in TRUSTED_DECORATORS


def _literal(node: ast.AST | None) -> bool:
    """A class-level value that is data (layer_count = 0, a docstring), never a callable such as classmethod(f)."""
    if node is None:
        return True
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _rebinds_self(method: ast.FunctionDef, receiver: ast.arg) -> bool:
    """Whether anything inside the method binds the name self again (a lambda's parameter, an except target...)."""
    for node in ast.walk(method):
        if node is receiver:
            continue
        if isinstance(node, ast.arg) and node.arg == "self" \
                or isinstance(node, ast.Name) and node.id == "self" and not isinstance(node.ctx, ast.Load) \
                or isinstance(node, ast.ExceptHandler) and node.name == "self" \
                or isinstance(node, ast.alias) and (node.asname or node.name) == "self" \
                or isinstance(node, (ast.Global, ast.Nonlocal)) and "self" in node.names:
            return True
    return False


def module_classes(tree: ast.AST) -> set[str]:
    """The file's own classes whose methods' self the policy can prove is an instance of them (see above)."""
    return _module_classes(_File(tree))


def _module_classes(f: _File) -> set[str]:
    if f.keeps_a_type():
        return set()
    found: set[str] = set()
    changed = True
    while changed:  # bases first: a class is a module class once all its bases are
        changed = False
        for name, cls in f.classes.items():
            if name in found or name not in f.top or f.count[name] != 1 or cls.keywords or cls.decorator_list \
                    or not cls.bases:
                continue
            if all(f.library_module_base(b) or isinstance(b, ast.Name) and b.id in found for b in cls.bases):
                found.add(name)
                changed = True
    changed = True
    while changed:  # then drop those whose class object can become a value, or whose subclasses are not proven
        changed = False
        for name in sorted(found):
            cls = f.classes[name]
            # methods decorated only by trusted decorators or staticmethod (cm = classmethod; @cm would hand out the
            # class, an own decorator the plain function), and literal data
            plain = all(isinstance(item, ast.FunctionDef) and all(f.trusted(d) or f.builtin(d, "staticmethod")
                                                                  for d in item.decorator_list)
                        or isinstance(item, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Pass))
                        and _literal(getattr(item, "value", None))
                        for item in cls.body)
            subclasses = [c for c in f.classes.values() if any(isinstance(b, ast.Name) and b.id == name for b in c.bases)]
            if not plain or f.value_uses(name) or any(c.name not in found for c in subclasses):
                found.discard(name)
                changed = True
    return found


def proven_selves(tree: ast.AST) -> set[int]:
    """ids of the ``self`` names (loads) inside proven methods, nested functions and comprehensions included (they
    close over the method's self), not inside a nested class."""
    f = _File(tree)
    classes = _module_classes(f)
    out: set[int] = set()
    for name in classes:
        for item in f.classes[name].body:
            if not isinstance(item, ast.FunctionDef) or not all(f.trusted(d) for d in item.decorator_list):
                continue
            positional = [*item.args.posonlyargs, *item.args.args]
            if not positional or positional[0].arg != "self" or _rebinds_self(item, positional[0]):
                continue
            stack = list(item.body)
            while stack:
                node = stack.pop()
                if isinstance(node, ast.ClassDef):
                    continue
                if isinstance(node, ast.Name) and node.id == "self" and isinstance(node.ctx, ast.Load):
                    out.add(id(node))
                stack.extend(ast.iter_child_nodes(node))
    return out
