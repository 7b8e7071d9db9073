"""The submission's language: a subset of Python defined by allowlist, checked on the syntax tree before any
of its code runs (SECURITY.md, layer 1, writes the rules down).

The first of two layers (the second is the sandbox worker's runtime isolation). Imports, builtins, the
attributes of modules (grader/reachable.py) and of values (torch's and Python's public API, or names the file
gives its own objects) come from allowlists; modules are never values; frames, generators' internals, code,
tracebacks, dunders and private names are unreachable; attributes are set only through a method's receiver;
no class factory, no pattern matching, no callback special methods. Every rule here closed a route that a
red-team round of issue 19 found, and each route is kept in tests/adversarial/.

The policy is instructor-extensible, never by the submission's author:

* the kit's metadata file (exercises/info.toml): top-level ``allowed_imports`` and a ``[policy]`` table;
* an instructor's TOML file given explicitly (``grade exercise --policy FILE``, ``load_policy(FILE)``),
  with the same keys at top level or under ``[policy]``.

Keys: ``allowed_imports`` (replaces the allowlist), ``extra_allowed_imports``, ``denied_names`` and
``denied_attributes`` (added to the built-in lists), ``allowed_names`` and ``allowed_attributes``
(lift a built-in denial, at the instructor's own risk), and ``static_check = false``, which turns
the unsafe-code rules off altogether and leaves only the runtime isolation (for trusted code, and
for the kit's own tests of that isolation). Nothing is read from the environment or from files
beside the submission. Per-exercise forbidden APIs stay in info.toml (``forbidden``) and always apply.
The keys are typed (grader/schema.py PolicyTable): a malformed table is a PolicyError of one line naming the
file and the key, which the CLI exits with as a usage error (2).
"""
from __future__ import annotations

import ast
import builtins
import re
import tomllib
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from grader import reachable, receivers

DENIED_CALLS = frozenset({
    "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars", "getattr", "setattr",
    "delattr", "breakpoint", "input", "exit", "quit", "help", "memoryview", "classmethod_descriptor",
    "get_type_hints", "ForwardRef",
})
DENIED_ATTRIBUTES = frozenset({
    "os", "sys", "subprocess", "builtins", "importlib", "ctypes", "socket", "shutil", "pathlib", "signal",
    "multiprocessing", "threading", "hub", "load", "save", "cpp_extension", "compile", "jit", "library",
    "ops", "distributed", "testing", "inspect", "set_printoptions", "from_file", "storage",
    # torch.utils holds a shell (collect_env.run), code strings (benchmark.Timer), file readers
    # (data.datapipes), compilers (cpp_extension) and downloads (model_zoo); attention code needs none
    "utils", "collect_env", "benchmark", "datapipes", "model_zoo", "package", "serialization", "export", "onnx",
    "profiler", "classes", "load_library", "numpy", "tofile", "fromfile", "dump", "dumps",
    "get_type_hints", "ForwardRef", "evaluate_forward_ref",
    # torch APIs that import or hand back whatever a string or an error names (storage.type("os.x") imports os;
    # the AttributeError it raises carries the module as .obj): found by the red-team round of issue 19
    "untyped_storage", "typed_storage", "storage_type", "obj", "set_default_tensor_type",
    # nn.ParameterDict's p[key] and p[key] = v are getattr and setattr by a run-time string (red-team round 6)
    "ParameterDict",
})
ALLOWED_DUNDERS = frozenset({"__init__", "__name__", "__main__"})
# Attribute names that are escape hatches wherever they are found, even on the file's own objects
ESCAPES = DENIED_CALLS | frozenset({
    "attrname", "fget", "fset", "fdel", "system", "popen", "environ", "spawn", "execv", "execve", "import_module",
    "CDLL", "PyDLL", "dlopen", "LoadLibrary", "modules", "builtins", "getframe",
    # torch calls that run a Python callable from C++ or the autograd engine, beneath the worker's torch-function
    # modes (the forbidden-API watch, the emulated device): the worker refuses them at run time too (red-team
    # round of the ninth session: multi_head_attention_forward called inside an apply_ callback scored 24/24)
    "apply_", "map_", "map2_", "backward", "register_hook", "register_post_accumulate_grad_hook",
})
# Special methods a submission's own classes may define: construction, representation, containers, operators.
# Not the hooks through which Python or torch call back into a class on their own (__torch_function__,
# __torch_dispatch__, __getattr__, __getattribute__, __init_subclass__, __set_name__, __class_getitem__, __del__,
# __new__, __reduce__, ...).
DEFINABLE_DUNDERS = frozenset({
    "__init__", "__post_init__", "__call__", "__repr__", "__str__", "__len__", "__getitem__", "__setitem__",
    "__iter__", "__next__", "__contains__", "__enter__", "__exit__", "__bool__", "__hash__", "__eq__", "__ne__",
    "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__sub__", "__mul__", "__truediv__", "__matmul__", "__neg__",
})
# The built-in names a submission may use (unless it binds the name itself): values, types, exceptions.
ALLOWED_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "callable", "chr", "classmethod", "complex", "dict", "divmod", "enumerate",
    "filter", "float", "format", "frozenset", "hasattr", "hash", "int", "isinstance", "issubclass", "iter", "len",
    "list", "map", "max", "min", "next", "object", "ord", "pow", "print", "property", "range", "repr", "reversed",
    "round", "set", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type", "zip", "bin", "hex",
    "oct", "bytes", "id", "NotImplemented", "Ellipsis", "None", "True", "False", "__name__",
    *(name for name in dir(builtins) if name.endswith(("Error", "Exception", "Warning"))),
    "StopIteration", "BaseException",
})
DEFAULT_ALLOWED_IMPORTS = frozenset({"torch", "math", "typing", "dataclasses", "functools", "itertools",
                                     "collections", "numbers", "__future__"})
_DUNDER_IN_TEXT = re.compile(r"__\w+__")
_ATTRIBUTE_IN_TEXT = re.compile(r"\.(\w+)")


class PolicyError(ValueError):
    """An instructor's policy file is malformed: one line naming the file and the key (a usage error, exit 2)."""


@dataclass(frozen=True)
class Policy:
    allowed_imports: frozenset[str] = DEFAULT_ALLOWED_IMPORTS
    denied_names: frozenset[str] = DENIED_CALLS
    denied_attributes: frozenset[str] = DENIED_ATTRIBUTES
    static_check: bool = True  # False: only the exercise's forbidden APIs are checked
    origin: tuple[str, ...] = ("built-in",)
    lifted: frozenset[str] = frozenset()  # allowed_attributes: names or module.name paths beyond grader.reachable

    def extended(self, table: dict, origin: str) -> "Policy":
        """This policy with an instructor's table applied (see the module docstring for the keys)."""
        from grader.schema import SchemaError, read_policy

        try:
            t = read_policy(table, origin)
        except SchemaError as exc:
            raise PolicyError(str(exc)) from None
        allowed = frozenset(t.allowed_imports) if isinstance(t.allowed_imports, list) else self.allowed_imports
        return replace(
            self,
            allowed_imports=allowed | frozenset(t.extra_allowed_imports),
            denied_names=(self.denied_names | frozenset(t.denied_names)) - frozenset(t.allowed_names),
            denied_attributes=(self.denied_attributes | frozenset(t.denied_attributes))
            - frozenset(t.allowed_attributes),
            static_check=t.static_check if "static_check" in table else self.static_check,
            origin=(*self.origin, origin),
            lifted=self.lifted | frozenset(t.allowed_attributes),
        )


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(f"cannot read policy file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"policy file {path} is not valid TOML: {exc}") from None


@lru_cache(maxsize=8)
def _load(kit_file: str, kit_mtime: float, extra: str | None, extra_mtime: float) -> Policy:
    policy = Policy()
    data = _read_toml(Path(kit_file)) if kit_file else {}
    if "allowed_imports" in data:
        policy = policy.extended({"allowed_imports": data["allowed_imports"]}, kit_file)
    if "policy" in data:
        policy = policy.extended(data["policy"], f"{kit_file} [policy]")
    if extra:
        table = _read_toml(Path(extra))
        table = table["policy"] if set(table) == {"policy"} else table
        policy = policy.extended(table, extra)
    return policy


def load_policy(extra: Path | str | None = None) -> Policy:
    """The built-in policy, then the kit's info.toml, then the instructor's file extra (if given)."""
    from grader.catalog import kit_dir

    kit = kit_dir("exercises") / "info.toml"
    kit_file = str(kit) if kit.is_file() else ""
    if extra is not None and not Path(extra).is_file():
        raise PolicyError(f"no such policy file: {extra}")

    def mtime(p):
        return Path(p).stat().st_mtime if p else 0.0

    return _load(kit_file, mtime(kit_file), str(extra) if extra else None, mtime(extra))


@dataclass(frozen=True)
class Violation:
    line: int
    rule: str  # "forbidden_api" | "unsafe_code"
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


def _dotted(node: ast.AST) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _docstrings(nodes: list[ast.AST]) -> set[int]:
    """ids of the string constants that are docstrings (never evaluated, so free to mention dunders)."""
    found = set()
    for node in nodes:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def _own_private_attributes(nodes: list[ast.AST]) -> set[str]:
    """Private names the submission gives its own objects (self._cache = ..., def _split_heads): reading
    them back through self is fine."""
    own = set()
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr.startswith("_") \
                and isinstance(node.value, ast.Name) and node.value.id == "self":
            own.add(node.attr)
        elif isinstance(node, ast.ClassDef):
            own.update(item.name for item in node.body
                       if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("_"))
    return own


NAMING_CALLS = frozenset({"register_buffer", "register_parameter", "register_module", "add_module"})


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _bindings(nodes: list[ast.AST]):
    """Each name the file binds, once per binding (variables, parameters, functions, classes, imports, except
    targets)."""
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            yield node.id
        elif isinstance(node, ast.arg):
            yield node.arg
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, ast.alias):
            yield node.asname or node.name.split(".")[0]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name


def _bound_names(nodes: list[ast.AST]) -> set[str]:
    """Every name the file binds: a built-in name the file rebinds is its own value, not the built-in."""
    return set(_bindings(nodes))


def _own_attributes(nodes: list[ast.AST]) -> set[str]:
    """The attribute names the file gives its own objects: attributes it assigns (self.q_proj = ...), what its
    classes define (methods, fields), buffers and submodules it registers by name, namedtuple fields. Never
    a keyword argument or a variable's name (NAMES = dict(getattr=1) must not make .getattr the file's own)."""
    own = set()
    for node in nodes:
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            own.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Call) and _called(node) in NAMING_CALLS and node.args:
            first = node.args[0]  # self.register_buffer("mask", ...) names self.mask
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                own.add(first.value)
        elif isinstance(node, ast.Call) and _called(node) == "namedtuple":
            for arg in node.args[1:2]:
                for sub in ast.walk(arg):
                    if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                        own.update(re.findall(r"\w+", sub.value))
    for cls in (n for n in nodes if isinstance(n, ast.ClassDef)):  # fields: class-level names
        for item in cls.body:
            targets = item.targets if isinstance(item, ast.Assign) else [item.target] if isinstance(item, ast.AnnAssign) else []
            own.update(t.id for t in targets if isinstance(t, ast.Name))
    return own


def _folded(node: ast.AST) -> str | None:
    """The string a + of string constants (or an f-string's constant parts) makes, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _folded(node.left), _folded(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "" for v in node.values)
    return None


STORE_ROOTS = frozenset({"self", "ctx", "cls"})  # a method's receiver: whose attributes a submission may set


def _bound_once(nodes: list[ast.AST]) -> set[str]:
    """The names the file binds exactly once (_bindings, and a match pattern's captures); a name declared global or
    nonlocal anywhere is never bound once."""
    count: dict[str, int] = {}
    captures = (n.name if isinstance(n, (ast.MatchAs, ast.MatchStar)) else n.rest for n in nodes
                if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name or isinstance(n, ast.MatchMapping) and n.rest)
    for name in (*_bindings(nodes), *captures):
        count[name] = count.get(name, 0) + 1
    declared = {name for n in nodes if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    return {name for name, n in count.items() if n == 1 and name not in declared}


def _plain_methods(nodes: list[ast.AST]) -> dict[str, set[str]]:
    """Own class -> the methods that take an instance (not static or class methods)."""
    out = {}
    for cls in (n for n in nodes if isinstance(n, ast.ClassDef)):
        out[cls.name] = {f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                         and not any(_dotted(d) in (["staticmethod"], ["classmethod"]) for d in f.decorator_list)}
    return out


def _inherited_plain_methods(nodes: list[ast.AST], own: dict[str, set[str]]) -> dict[str, set[str]]:
    """Own class -> its plain methods and those it inherits from own bases (Sub.put(anything) reaches Base.put)."""
    out = {name: set(methods) for name, methods in own.items()}
    bases = {n.name: [b.id for b in n.bases if isinstance(b, ast.Name)] for n in nodes if isinstance(n, ast.ClassDef)}
    changed = True
    while changed:
        changed = False
        for name, of in bases.items():
            extra = set().union(*(out.get(b, set()) for b in of)) - out[name]
            if extra:
                out[name] |= extra
                changed = True
    return out


def _is_setattr(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
            and len(node.args) == 3 and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args))


def _literal_setattrs(nodes: list[ast.AST]) -> dict[int, tuple[str, ...]]:
    """setattr(R, NAME, value) calls whose NAME is a string constant, or the variable of an enclosing for loop over a
    literal tuple or list of string constants that nothing else binds: id(call) -> the names it can set. Each is
    R.<name> = value spelled otherwise, and is checked as that (the policy's checker)."""
    stores = {}
    for n in nodes:
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
    rebound = {n.arg for n in nodes if isinstance(n, ast.arg)}
    rebound |= {name for n in nodes if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    # a def, class, except ... as, import ... as binds a name too (a decorated def n() can make it any run-time string)
    rebound |= {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler))
                and n.name}
    rebound |= {(a.asname or a.name).split(".")[0] for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    out = {}
    for n in nodes:
        if _is_setattr(n) and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str):
            out[id(n)] = (n.args[1].value,)
        elif isinstance(n, ast.For) and isinstance(n.target, ast.Name) and isinstance(n.iter, (ast.Tuple, ast.List)) \
                and n.iter.elts and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in n.iter.elts) \
                and stores.get(n.target.id) == 1 and n.target.id not in rebound:
            names = tuple(e.value for e in n.iter.elts)
            for sub in (s for stmt in n.body for s in ast.walk(stmt)):
                if _is_setattr(sub) and isinstance(sub.args[1], ast.Name) and sub.args[1].id == n.target.id:
                    out[id(sub)] = names
    return out


def _root(node: ast.AST) -> str | None:
    """The name an attribute or subscript chain starts from (self in self.cache[0].k), None for an expression."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


class _Checker(ast.NodeVisitor):
    def __init__(self, policy: Policy, forbidden: tuple[str, ...], tree: ast.AST):
        self.policy = policy
        self.allowed = policy.allowed_imports
        self.forbidden = {f: f.rsplit(".", 1)[-1] for f in forbidden}
        self.aliases: dict[str, str] = {}
        self.found: list[Violation] = []
        nodes = list(ast.walk(tree))  # walked once: every table below reads the same list
        self.docstrings = _docstrings(nodes)
        self.in_class = {id(item) for cls in nodes if isinstance(cls, ast.ClassDef) for item in cls.body
                         if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}  # methods, by node
        self.own_private = _own_private_attributes(nodes)
        stored = {n.attr for n in nodes if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)}
        self.own_methods = {item.name for cls in nodes if isinstance(cls, ast.ClassDef) for item in cls.body
                            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))} - stored
        once = _bound_once(nodes)
        self.class_functions = {(cls.name, item.name) for cls in nodes if isinstance(cls, ast.ClassDef)
                                and cls.name in once for item in cls.body
                                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                                and item.name in self.own_methods}  # Own.name: a class the file binds once, its def
        self.methods: list[str | None] = []  # per enclosing function: its receiver (first parameter) if a method
        self.parameters: list[set[str]] = []  # per enclosing function body: its parameters' names
        self.declared = {name for n in nodes if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
        self.unbound = _plain_methods(nodes)  # own class name -> its plain methods (reached only through an instance)
        self.inherited = _inherited_plain_methods(nodes, self.unbound)
        self.bound = _bound_names(nodes)
        self.setattrs = _literal_setattrs(nodes)
        named = {name for names in self.setattrs.values() for name in names}
        self.own = {n for n in _own_attributes(nodes) | named if not reachable.introspective(n) and n not in ESCAPES}
        self.derefd = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}  # x in x.name
        self.called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}  # f in f(...)
        self.proven = receivers.proven_selves(tree)  # self names certainly bound to an own nn.Module's instance

    def reachable(self, node, path: list[str]) -> bool:
        """Each step of a dotted path through modules must be in grader.reachable's allowlist."""
        for i in range(1, len(path)):
            module, name = ".".join(path[:i]), path[i]
            ok = reachable.allowed(module, name)
            if ok is None:
                return True  # past the modules: the value's attributes are checked by the deny-list
            absent = reachable.namespace(module) is not None and name not in reachable.namespace(module)
            if absent:
                return True  # an AttributeError when it runs (torch.functional.softmax), as it would be unchecked
            if not ok and name not in self.policy.lifted and f"{module}.{name}" not in self.policy.lifted:
                self.flag(node, "unsafe_code", f"{module}.{name} is not among the attributes a submission may use")
                return False
        return True

    def flag(self, node, rule, message):
        self.found.append(Violation(getattr(node, "lineno", 0), rule, message))

    def check_forbidden(self, node, dotted: str):
        for full, leaf in self.forbidden.items():
            root = dotted.split(".")[0]
            if dotted == full or dotted.endswith("." + leaf) and (root in self.aliases or root in self.allowed):
                self.flag(node, "forbidden_api", f"{full} is not allowed in this exercise: write the computation yourself")
                return True
        return False

    def check_module_path(self, node, dotted: str) -> bool:
        """torch.utils.collect_env, torch._C: an import may not name what an attribute may not reach."""
        for part in dotted.split(".")[1:]:
            if part in self.policy.denied_attributes or part.startswith("_"):
                self.flag(node, "unsafe_code", f"import of {dotted!r} is not allowed in a submission")
                return True
        return not self.reachable(node, dotted.split("."))

    def bind(self, node, name: str | None):
        if name == "self":
            self.flag(node, "unsafe_code", "the name self may only be a method's first parameter")

    def visit_Import(self, node):
        for alias in node.names:
            root = alias.name.split(".")[0]
            if root not in self.allowed:
                self.flag(node, "unsafe_code", f"import of {alias.name!r} is not allowed (allowed: {', '.join(sorted(self.allowed))})")
            elif self.check_module_path(node, alias.name):
                continue
            self.bind(node, alias.asname)
            self.aliases[alias.asname or root] = alias.name if alias.asname else root
            self.check_forbidden(node, alias.name)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if node.level or module.split(".")[0] not in self.allowed:
            self.flag(node, "unsafe_code", f"import from {'.' * node.level + module!r} is not allowed")
            return
        if self.check_module_path(node, module):
            return
        for alias in node.names:
            if alias.name == "*":
                self.flag(node, "unsafe_code", f"'from {module} import *' is not allowed: import the names you use")
                continue
            full = f"{module}.{alias.name}"
            if self.check_forbidden(node, full):
                pass
            elif alias.name in self.policy.denied_attributes or alias.name in self.policy.denied_names \
                    or alias.name.startswith("_"):
                self.flag(node, "unsafe_code", f"importing {alias.name!r} from {module} is not allowed")
            else:
                self.reachable(node, full.split("."))
            self.bind(node, alias.asname or alias.name)
            self.aliases[alias.asname or alias.name] = full

    def visit_Name(self, node):
        if node.id.startswith("__") and node.id not in ALLOWED_DUNDERS:
            self.flag(node, "unsafe_code", f"the name {node.id} is not allowed")
        elif node.id in self.policy.denied_names and not self.parameter(node.id):
            self.flag(node, "unsafe_code", f"{node.id}() is not allowed in a submission")
        elif node.id == "self" and not isinstance(node.ctx, ast.Load):
            self.bind(node, "self")
        elif node.id in self.aliases:
            if not self.check_forbidden(node, self.aliases[node.id]) and id(node) not in self.derefd \
                    and reachable.is_module(self.aliases[node.id]):
                self.flag(node, "unsafe_code", f"the module {node.id} may only be used as {node.id}.<name>, not as a value")
        elif node.id == "type" and node.id not in self.bound and id(node) not in self.called:
            self.flag(node, "unsafe_code", "type may only be called as type(x), not kept as a value (type(name, bases, "
                                           "namespace) builds any class)")
        elif isinstance(node.ctx, ast.Load) and node.id not in self.bound and hasattr(builtins, node.id) \
                and node.id not in ALLOWED_BUILTINS and node.id not in self.policy.lifted:
            self.flag(node, "unsafe_code", f"the built-in {node.id} is not among those a submission may use")

    def visit_Attribute(self, node):
        dotted = _dotted(node)
        name = node.attr
        own = dotted == ["self", name] and name in self.own_private
        shown = ".".join(dotted) if dotted else f"(...).{name}"
        # self.eval(), self.modules(), self.<a name the file forgot to define> on a proven nn.Module instance
        proven = isinstance(node.ctx, ast.Load) and id(node.value) in self.proven
        if name.startswith("__"):
            if name not in ALLOWED_DUNDERS:
                self.flag(node, "unsafe_code", f"the attribute {name} is not allowed (no dunder attribute walks)")
        elif proven and name in receivers.MODULE_METHODS and name not in self.policy.denied_attributes:
            pass  # an instructor's denied_attributes still apply
        elif reachable.introspective(name):
            self.flag(node, "unsafe_code", f"{shown} is not allowed: frames, code, generators' internals and the "
                                           "class hierarchy are out of a submission's reach")
        elif name in self.policy.denied_attributes or name in ESCAPES or (name.startswith("_") and not own):
            self.flag(node, "unsafe_code", f"{shown} is not allowed in a submission")
        elif dotted and dotted[0] in self.aliases:
            resolved = [*self.aliases[dotted[0]].split("."), *dotted[1:]]
            if self.check_forbidden(node, ".".join(resolved)) or not self.step(node, resolved, shown):
                return
        elif name in self.forbidden.values() and not (dotted == ["self", name] and name in self.own_methods) \
                and not (len(dotted) == 2 and (dotted[0], name) in self.class_functions):
            # self.name or Own.name is the file's own method of that name (litgpt's scaled_dot_product_attention)
            # only when it is defined in a class and never assigned; the worker refuses the forbidden kernel at run
            # time anyway
            self.flag(node, "forbidden_api", f"{name} is not allowed in this exercise: write the computation yourself")
            return
        elif not self.value_attribute(name) and not proven:
            self.flag(node, "unsafe_code", f"{shown}: {name} is not an attribute of torch's tensors and modules, "
                                           "Python's built-in types or a name this file defines")
        if not isinstance(node.ctx, ast.Load) and not self.own_receiver(_root(node)):
            self.flag(node, "unsafe_code", f"{shown}: a submission sets attributes only on its own objects, through "
                                           "a method's self (or ctx in an autograd Function), never on a library's")
        if isinstance(node.value, ast.Name) and name in self.inherited.get(node.value.id, ()):
            self.flag(node, "unsafe_code", f"{shown}: call a method through an instance, not through its class (there "
                                           "self could be any object)")
        if isinstance(node.value, ast.Call) and _called(node.value) == "type" and name != "__name__":
            self.flag(node, "unsafe_code", f"{shown}: the class of an object is only for isinstance() and __name__")
        self.generic_visit(node)

    def parameter(self, name: str) -> bool:
        """Whether name is, where it is read, a parameter of an enclosing function (forward(self, input)): its own
        value, not the built-in of that name. Never where a global or nonlocal statement could rebind it."""
        return name not in self.declared and any(name in names for names in self.parameters)

    def body(self, node, params: list[ast.arg | None]):
        """A function's body, with its parameters in scope; its decorators, defaults and annotations are evaluated
        outside it and visited before."""
        for field, value in ast.iter_fields(node):
            if field != "body":
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, ast.AST):
                        self.visit(item)
        self.parameters.append({p.arg for p in params if p is not None})
        for item in node.body if isinstance(node.body, list) else [node.body]:
            self.visit(item)
        self.parameters.pop()

    def own_receiver(self, root: str | None) -> bool:
        """Whether root is the self (or ctx, cls) of the method being checked: the only objects a file may change."""
        return root in STORE_ROOTS and bool(self.methods) and self.methods[-1] == root

    def value_attribute(self, name: str) -> bool:
        return name in reachable.value_attributes() or name in self.own or name in self.policy.lifted

    def step(self, node, path: list[str], shown: str) -> bool:
        """The last step of a module-rooted path: on a module, by grader.reachable's table; on a value, by the
        value allowlist. A module reached this way may only be dereferenced further, never kept as a value."""
        module, name = ".".join(path[:-1]), path[-1]
        if reachable.is_module(module):
            if not self.reachable(node, path):
                return False
            if reachable.is_module(".".join(path)) and id(node) not in self.derefd:
                self.flag(node, "unsafe_code", f"the module {shown} may only be used as {shown}.<name>, not as a value")
                return False
            return True
        if reachable.is_module(".".join(path[:-2])) and path[-2][:1].isupper():
            self.flag(node, "unsafe_code", f"{shown}: a library class may be called, subclassed or used in isinstance(), "
                                           "but its attributes are reached through an instance (there self could be "
                                           "any object)")
            return False
        if not self.value_attribute(name):
            self.flag(node, "unsafe_code", f"{shown}: {name} is not an attribute of torch's tensors and modules, "
                                           "Python's built-in types or a name this file defines")
            return False
        return True

    def visit_ClassDef(self, node):
        """In the class body a method is a plain function: called or kept there, its self could be anything."""
        self.bind(node, node.name)
        methods = self.unbound.get(node.name, set())
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for sub in ast.walk(item):
                if isinstance(sub, ast.Name) and sub.id in methods and isinstance(sub.ctx, ast.Load):
                    self.flag(sub, "unsafe_code", f"{sub.id}: a method is called through an instance, not used as a "
                                                  "plain function in its class body")
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in item.decorator_list:
                    for sub in ast.walk(dec):
                        if isinstance(sub, ast.Name) and sub.id in methods:
                            self.flag(sub, "unsafe_code", f"{sub.id}: a method may not decorate another")
        self.generic_visit(node)

    def visit_Match(self, node):
        self.flag(node, "unsafe_code", "match statements are not part of a submission's language (a class pattern "
                                       "looks attributes up by name); use if/elif")

    def visit_Call(self, node):
        receiver = node.args[0] if _is_setattr(node) else None
        if id(node) in self.setattrs and "setattr" not in self.bound and isinstance(receiver, ast.Name) \
                and self.own_receiver(receiver.id):
            for name in self.setattrs[id(node)]:  # setattr(self, "q", v) is self.q = v, and is checked as that
                target = ast.Attribute(value=ast.Name(id=receiver.id, ctx=ast.Load()), attr=name, ctx=ast.Store())
                self.visit_Attribute(ast.fix_missing_locations(ast.copy_location(target, node)))
            for arg in node.args:
                self.visit(arg)
            return
        if isinstance(node.func, ast.Name) and node.func.id == "type" and node.func.id not in self.bound and (
                len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred)):
            self.flag(node, "unsafe_code", "type() may only ask for an object's type (type(x)), not build a class")
        self.generic_visit(node)

    def visit_BinOp(self, node):
        """"__glob" + "als__": a string built from pieces is checked as the whole it makes."""
        text = _folded(node)
        if text is not None:
            self.visit_Constant(ast.copy_location(ast.Constant(text), node))
        self.generic_visit(node)

    def visit_Await(self, node):
        self.flag(node, "unsafe_code", "coroutines (async/await) are not part of a submission's language")

    visit_AsyncFor = visit_AsyncWith = visit_Await

    def visit_Constant(self, node):
        if isinstance(node.value, str) and id(node) not in self.docstrings:
            for name in _ATTRIBUTE_IN_TEXT.findall(node.value):
                if reachable.introspective(name):
                    self.flag(node, "unsafe_code", f"the string {node.value[:60]!r} names .{name}, which str.format "
                                                   "would look up; not allowed")
                    return
            for name in _DUNDER_IN_TEXT.findall(node.value):
                if name not in ALLOWED_DUNDERS:
                    self.flag(node, "unsafe_code", f"the string {node.value[:60]!r} names {name}, which looks like a "
                                                   "dunder lookup and is not allowed")
                    break

    def check_annotation(self, annotation):
        """typing.get_type_hints and functools.singledispatch evaluate string annotations: none allowed."""
        if annotation is None:
            return
        for sub in ast.walk(annotation):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                self.flag(sub, "unsafe_code", "string annotations are not allowed (they can be evaluated as code); "
                                              "write the type itself, or leave it out")
                return

    def visit_arg(self, node):
        self.check_annotation(node.annotation)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node):
        self.bind(node, node.name)
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        self.bind(node, node.name)  # a decorated def self(): ... rebinds self to what the decorator returns
        if node.name.startswith("__") and node.name.endswith("__") and node.name not in DEFINABLE_DUNDERS:
            self.flag(node, "unsafe_code", f"a submission may not define {node.name}: Python or torch would call it on "
                                           "their own")
        self.check_annotation(node.returns)
        params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg, node.args.kwarg]
        receiver = params[0].arg if params[0] is not None and id(node) in self.in_class else None
        if receiver == "self" and any(_dotted(d) == ["staticmethod"] for d in node.decorator_list):
            receiver = None  # a static method's self is whatever its caller passes (Box.put(torch.Tensor, ...))
        for i, arg in enumerate(p for p in params if p is not None):
            if arg.arg in ("self", "cls") and (i or receiver is None):
                self.flag(arg, "unsafe_code", f"{arg.arg} may only be the first parameter of a method")
        self.methods.append(receiver)
        self.body(node, params)
        self.methods.pop()

    def visit_Lambda(self, node):
        self.methods.append(None)
        a = node.args
        self.body(node, [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg])
        self.methods.pop()

    def visit_AsyncFunctionDef(self, node):
        self.visit_Await(node)

    def visit_AnnAssign(self, node):
        self.check_annotation(node.annotation)
        self.generic_visit(node)


def check(source: str, *, allowed_imports=None, forbidden=(), policy: Policy | None = None) -> list[Violation]:
    """Return the policy violations in source; raises SyntaxError when it does not parse.

    policy defaults to load_policy() (built-in rules plus the kit's info.toml); allowed_imports,
    when given, replaces its import allowlist.
    """
    policy = policy or load_policy()
    if allowed_imports is not None:
        policy = replace(policy, allowed_imports=frozenset(allowed_imports))
    try:
        tree = ast.parse(source)
        compile(tree, "submission.py", "exec", dont_inherit=True)  # errors ast.parse lets through ('return' outside def)
        checker = _Checker(policy, tuple(forbidden), tree)
        checker.visit(tree)
    except SyntaxError:
        raise
    except Exception as exc:  # noqa: BLE001 - RecursionError, MemoryError, null bytes: a file we cannot read is refused
        return [Violation(0, "unsafe_code", f"the file could not be analysed ({_why(exc)}), so it is not run")]
    found = checker.found if policy.static_check else [v for v in checker.found if v.rule == "forbidden_api"]
    return sorted(found, key=lambda v: v.line)


def _why(exc: Exception) -> str:
    if isinstance(exc, (RecursionError, MemoryError)):
        return "an expression is nested too deeply"
    return f"{type(exc).__name__}: {str(exc)[:120]}"
