"""The attributes a submission may reach: allowlists, read from torch's own sources.

A submission may name ``torch.softmax`` or ``nn.Linear``, but not ``typing.operator`` (whose
``attrgetter`` looks attributes up by string), ``torch.overrides`` (whose tables hand out every torch
function), ``torch.fx`` or ``torch.ops``. For each module of the import allowlist this says which
attributes exist for attention code; anything else is refused by the policy. torch's lists come from
files in its installed package (the op stubs, ``torch/functional.py``'s ``__all__``, the ``def``s of
``nn.functional`` and ``nn.init``), read as text so that checking a file does not import torch.

``value_attributes()`` is the second allowlist: the attribute names a submission may use on values that
are not modules (a tensor, a layer, a list, a dtype): the public API of torch's tensor and module classes
and of Python's built-in types. A name the submission defines itself is added by the policy;
``INTROSPECTION`` (frames, generators, coroutines, code objects, tracebacks, the MRO) never is.
"""
from __future__ import annotations

import ast
import importlib.util
import re
from functools import cache
from pathlib import Path

ANY_PUBLIC = None  # every public name: modules that hold only functions and constants (math, itertools)
TORCH_EXTRA = frozenset({
    "Tensor", "Size", "dtype", "device", "Generator", "finfo", "iinfo", "no_grad", "enable_grad",
    "set_grad_enabled", "inference_mode", "is_grad_enabled", "get_default_dtype", "manual_seed",
    "default_generator", "is_tensor", "float64", "float32", "float16", "bfloat16", "double", "float", "half",
    "int64", "int32", "int16", "int8", "uint8", "long", "int", "short", "bool", "complex64", "complex128",
    "cfloat", "cdouble", "inf", "nan", "pi", "e", "newaxis", "nn", "autograd", "linalg", "special", "fft",
    # the legacy tensor types (torch.BoolTensor(mask), x.type(torch.FloatTensor)) and guards real code wears
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
    "CharTensor", "ByteTensor", "BoolTensor", "autocast", "promote_types", "result_type", "broadcast_shapes",
    "get_default_device", "uint16", "uint32", "uint64", "complex32", "chalf",
    "functional",  # torch.functional: its __all__ only (it also holds torch, nn.functional as F, operator)
    "cuda", "backends",  # a device helper's availability questions only (the table below)
})
TYPING = frozenset({
    "Any", "Optional", "Union", "List", "Tuple", "Dict", "Set", "FrozenSet", "Callable", "Sequence", "Iterable",
    "Iterator", "Mapping", "Type", "TypeVar", "Generic", "Literal", "Final", "ClassVar", "NamedTuple",
    "Protocol", "overload", "cast", "TYPE_CHECKING", "Annotated", "NoReturn", "Collection", "Self", "TypeAlias",
})
STDLIB = {
    "math": ANY_PUBLIC,
    "itertools": ANY_PUBLIC,
    "typing": TYPING,
    # not fields/asdict/astuple: a field's default is whatever getattr(cls, name) found, a library method included
    "dataclasses": frozenset({"dataclass", "field", "replace", "InitVar", "is_dataclass", "KW_ONLY", "MISSING"}),
    # not wraps/update_wrapper: their assigned/updated arguments get and set any attribute named by a string
    "functools": frozenset({"partial", "reduce", "lru_cache", "cache", "cached_property",
                            "total_ordering", "partialmethod"}),
    "collections": frozenset({"OrderedDict", "defaultdict", "namedtuple", "deque", "Counter", "ChainMap", "abc"}),
    # the abstract classes themselves, never their metaclass (ABCMeta("C", bases, namespace) builds any class)
    "collections.abc": frozenset({"Iterable", "Iterator", "Reversible", "Sized", "Container", "Collection", "Callable",
                                  "Sequence", "MutableSequence", "Mapping", "MutableMapping", "Set", "MutableSet",
                                  "Hashable", "Generator"}),
    "numbers": frozenset({"Number", "Complex", "Real", "Rational", "Integral"}),
    "__future__": frozenset({"annotations"}),
}


# Attributes that lead from an object to the interpreter's machinery: never allowed, whoever defines them.
INTROSPECTION = frozenset({
    "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "f_trace_lines", "f_trace_opcodes",
    "f_lasti", "f_lineno", "f_generator", "mro", "func_globals", "func_code", "im_func", "im_self", "exc_info",
    "last_traceback", "last_value", "last_type", "modules", "builtins", "frame",
})
INTROSPECTION_PREFIXES = ("gi_", "cr_", "ag_", "tb_", "co_")
BUILTIN_TYPES = (str, bytes, list, tuple, dict, set, frozenset, int, float, complex, bool, slice, range,
                 BaseException, property, type(None), enumerate, zip, map, filter, reversed)
# Public API of library values a submission meets that torch's sources below do not spell out.
EXTRA_VALUE_ATTRIBUTES = frozenset({
    "func", "args", "keywords",  # functools.partial
    "name", "type", "default", "default_factory", "init", "repr", "compare", "kw_only", "metadata",  # fields()
    "cache_info", "cache_clear",  # functools.lru_cache
    "most_common", "elements", "subtract", "total", "move_to_end", "appendleft", "popleft", "extendleft",
    "rotate", "maxlen", "default_factory", "maps", "new_child", "parents",  # collections
    "setter", "getter", "deleter",  # property (not fget/fset/fdel: a library's getter called on any object)
    "real", "imag", "numerator", "denominator", "start", "stop", "step",
})


def introspective(name: str) -> bool:
    """Whether name reaches frames, code, generators' internals or the MRO (never allowed)."""
    return name in INTROSPECTION or name.startswith(INTROSPECTION_PREFIXES)


def _torch_dir() -> Path | None:
    spec = importlib.util.find_spec("torch")
    return Path(spec.origin).parent if spec is not None and spec.origin else None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def _defs(text: str) -> set[str]:
    """Functions a module defines at top level, by def or by assignment (torch's docstring-wrapped ops)."""
    return set(re.findall(r"^def ([a-z]\w*)", text, re.M)) | set(re.findall(r"^([a-z]\w*) = ", text, re.M))


@cache
def table() -> dict[str, frozenset[str] | str | None]:
    """module path -> allowed attribute names (a set), "Capitalised" (classes only) or ANY_PUBLIC."""
    out = dict(STDLIB)
    torch = _torch_dir()
    if torch is None:
        return out  # no torch installed here: torch's attributes fall back to the deny-list
    listed = re.search(r"^__all__ = \[(.*?)\]", _text(torch / "functional.py"), re.S | re.M)
    top = _defs(_text(torch / "_C" / "_VariableFunctions.pyi"))
    top |= set(re.findall(r'"(\w+)"', listed[1])) if listed else set()
    out["torch"] = frozenset(top | TORCH_EXTRA)
    out["torch.functional"] = frozenset(re.findall(r'"(\w+)"', listed[1])) if listed else frozenset()
    out["torch.nn"] = "Capitalised+functional+init"
    out["torch.nn.functional"] = frozenset(_defs(_text(torch / "nn" / "functional.pyi")) |
                                           _defs(_text(torch / "nn" / "functional.py")))
    out["torch.nn.init"] = frozenset(_defs(_text(torch / "nn" / "init.py")))
    out["torch.autograd"] = frozenset({"Function", "function"})  # not grad: it runs hooks beneath the worker's modes
    out["torch.autograd.function"] = frozenset({"Function", "FunctionCtx", "once_differentiable"})  # custom backward
    # a device helper asks whether a device is there, nothing else (no set_device, seeding, memory or streams)
    out["torch.cuda"] = frozenset({"is_available"})
    out["torch.backends"] = frozenset({"mps"})
    out["torch.backends.mps"] = frozenset({"is_available"})
    for sub in ("linalg", "special", "fft"):
        out[f"torch.{sub}"] = frozenset(re.findall(r"^(\w+) = _add_docstr", _text(torch / sub / "__init__.py"), re.M))
    return out


@cache
def value_attributes() -> frozenset[str]:
    """Attribute names a submission may use on non-module values (public, never introspective)."""
    names = set(EXTRA_VALUE_ATTRIBUTES)
    for kind in BUILTIN_TYPES:
        names.update(dir(kind))
    torch = _torch_dir()
    if torch is not None:
        texts = [_text(torch / "_C" / "__init__.pyi"), _text(torch / "_tensor.py"), _text(torch / "types.py"),
                 _text(torch / "autograd" / "function.py"), _text(torch / "nn" / "parameter.py"),
                 _text(torch / "_C" / "_autograd.pyi")]
        texts += [_text(f) for f in sorted((torch / "nn" / "modules").glob("*.py"))]
        for text in texts:
            names.update(re.findall(r"^\s*def (\w+)", text, re.M))  # methods
            names.update(re.findall(r"^\s+(\w+)\s*:", text, re.M))  # annotated attributes (stubs, classes)
            names.update(re.findall(r"^\s+(\w+)\s*=", text, re.M))  # class attributes
            names.update(re.findall(r"\bself\.(\w+)\s*(?::[^=\n]*)?=[^=]", text))  # instance attributes
    return frozenset(n for n in names if not n.startswith("_") and not introspective(n))


@cache
def namespace(module: str) -> frozenset[str] | None:
    """Every name module could hold, for the modules whose whole namespace is read from their source (a superset:
    every name bound anywhere in the file, and a module's own dunders); None for the others. A name outside it is
    an AttributeError at run time, not a route: ``F.softmax`` on ``torch.functional`` fails as it would unchecked."""
    torch = _torch_dir()
    if module != "torch.functional" or torch is None:
        return None
    text = _text(torch / "functional.py")
    if not text:
        return None
    names = set(dir(type(re))) | {"__builtins__", "__file__", "__cached__", "__loader__", "__spec__", "__package__",
                                  "__path__", "__all__", "__doc__", "__name__"}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)  # __all__, setattr(module, "name", ...), globals()["name"]
    return frozenset(names)


@cache
def module_classes() -> frozenset[str]:
    """The classes torch.nn's modules folder defines that derive from Module (Module, Linear, LayerNorm, ...; read from
    the class statements, a test checks each is an nn.Module subclass): the library bases the policy accepts for a
    class whose methods' self it can prove."""
    torch = _torch_dir()
    if torch is None:
        return frozenset()
    bases = {}
    for f in sorted((torch / "nn" / "modules").glob("*.py")):
        for name, listed in re.findall(r"^class ([A-Z]\w*)\(([^)]*)\)", _text(f), re.M):
            bases[name] = {b.strip().rsplit(".", 1)[-1] for b in listed.split(",")}
    found = {"Module"}
    while grown := {name for name, of in bases.items() if name not in found and of & found}:
        found |= grown
    return frozenset(found)


def is_module(path: str) -> bool:
    """Whether path names a module the table covers (a bare use of it is a module object in a variable)."""
    return path in table()


def allowed(module: str, name: str) -> bool | None:
    """Whether module.name may be used; None when the table does not cover module (the deny-list applies)."""
    rule = table().get(module, "absent")
    if rule == "absent":
        return None
    if name.startswith("_"):
        return False
    if rule is ANY_PUBLIC:
        return True
    if isinstance(rule, str):
        return name[:1].isupper() or name in rule.split("+")[1:]
    return name in rule
