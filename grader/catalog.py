"""The exercise catalog: reads a pack's exercises/info.toml, checks it, and finds the pack's files.

Validation happens at load time: an unknown key, an unknown feature, a missing skeleton, solution or
exercise module, or another format_version raise CatalogError naming the file and the key. So do an
`entry` that the solution or the skeleton does not define, a `signature` other than the solution's,
`config`/`sweep`/`probe` keys that the entry point's constructor does not take (read from the solution
with `ast`: it is never imported here), a probe too small for the one-hot trick and an unknown explainer
topic. `forbidden` names must resolve to real attributes (check_forbidden): that imports their modules
(torch), so it runs at load only when they are already imported, and always before a grade runs a check
(runner.grade), in `grade dev check` and before `grade batch` (docs/pack-authors.md).
"""
from __future__ import annotations

import ast
import builtins
import importlib
import re
import sys
import tomllib
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path

from grader import schema
from grader.pack import PACKAGE_DIR, Pack, PackError, default_pack, kit_root

MODULE_KINDS = ("module", "custom_module")  # an nn.Module class: config, sweep and probe are its constructor's arguments
PROBE_MIN = 5  # the structural probe's one-hot trick needs d_in and head_dim >= PROBE_TOKENS + 1 (grader/probes.py)

FORMAT_VERSION = 2
KINDS = schema.Kind.__args__
# Behaviour the generic suites check, by feature. Anything particular to one exercise belongs in its module.
FEATURES = {
    "unbatched": "forward also takes 2-D (tokens, d_in) input",
    "causal": "token t attends to tokens 0..t only (masking tests, causal variants)",
    "dropout": "dropout on the attention weights, in training mode only (needs dims.dropout)",
    "divisible_check": "construction raises when dims.output is not divisible by dims.heads",
}
ROLES = schema.field_names(schema.Roles)
DIMS = schema.field_names(schema.Dims)
LIMITS = schema.field_names(schema.Limits)
TOP_KEYS = set(schema.field_names(schema.InfoFile))
CATEGORIES = ("policy", "api", "shape", "numerics", "masking", "dropout", "device")
CATEGORY_NAME = re.compile(schema.CATEGORY_PATTERN)  # a pack declares its own categories as keys of [points]
LEVELS = schema.LEVELS  # how hard an exercise is in an interview (`grade interview --level`)

__all__ = ["Catalog", "CatalogError", "Exercise", "PACKAGE_DIR", "Pack", "UnknownExercise", "check_forbidden", "kit_dir",
           "load_catalog"]


class UnknownExercise(LookupError):
    """Raised for an exercise number or slug the catalog does not know."""


class CatalogError(PackError):
    """info.toml (or a file it names) is wrong: one line naming the file and the key."""


def kit_dir(name: str) -> Path:
    """exercises/ or solutions/ of the default pack; templates/ always of the kit."""
    if name in ("exercises", "solutions"):
        return getattr(default_pack(), name)
    return kit_root(name)


@dataclass(frozen=True)
class Exercise:
    number: int
    slug: str
    title: str
    file: str
    kind: str
    entry: str
    signature: tuple[str, ...]
    contract: str
    config: dict
    hints: tuple[str, ...]
    brief: str = ""  # one line for the README's table (markdown)
    features: frozenset[str] = frozenset()
    forbidden: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    roles: dict = field(default_factory=dict)
    dims: dict = field(default_factory=dict)
    sweep: tuple[dict, ...] = ()
    probe: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)  # sandbox limits this exercise needs (memory_mb, cpu_s)
    module: str = ""  # the exercise's own module in the pack's checks/ folder (grader/pack.py)
    level: str = ""  # one of LEVELS, or "" (then `grade interview --level` never draws it)
    pack: Pack = field(default_factory=Pack.kit, compare=False, repr=False)

    @property
    def skeleton_path(self) -> Path:
        return self.pack.exercises / self.file

    @property
    def solution_path(self) -> Path:
        return self.pack.solutions / self.file

    @property
    def module_path(self) -> Path | None:
        return self.pack.checks / f"{self.module}.py" if self.module else None

    def has(self, feature: str) -> bool:
        return feature in self.features

    def dim(self, role: str, init: dict | None = None):
        """The value of a constructor argument by its role (input, output, heads, context, dropout)."""
        key = self.dims.get(role)
        return None if key is None else (init or self.config).get(key)


@dataclass(frozen=True)
class Catalog:
    exercises: tuple[Exercise, ...]
    points: dict
    allowed_imports: tuple[str, ...]
    pack: Pack = field(default_factory=Pack.kit, compare=False)

    @property
    def categories(self) -> tuple[str, ...]:
        """The kit's categories, then those the pack declares in [points], in its order."""
        return CATEGORIES + tuple(c for c in self.points if c not in CATEGORIES)

    def get(self, key: str | int) -> Exercise:
        """Look an exercise up by number ("3", 3, "03") or slug ("causal_attention")."""
        text = str(key).strip()
        for ex in self.exercises:
            if text == ex.slug or (text.isdigit() and int(text) == ex.number):
                return ex
        known = ", ".join(f"{ex.number} ({ex.slug})" for ex in self.exercises)
        raise UnknownExercise(f"unknown exercise {text!r}; choose one of {known}")

    def next_after(self, ex: Exercise) -> Exercise | None:
        later = [e for e in self.exercises if e.number > ex.number]
        return later[0] if later else None

    def check_forbidden(self) -> None:
        """Raise CatalogError unless every exercise's forbidden names resolve (imports their modules)."""
        for ex in self.exercises:
            check_forbidden(ex)


# -- validation -------------------------------------------------------------------------------------------
TYPES = schema.field_names(schema.ExerciseSpec)  # an [[exercise]] table's keys; their types: grader/schema.py


def _check_exercise(e: dict, where: str, pack: Pack) -> None:
    """What the schema cannot say: keys that must agree with each other, with files and with the solution."""
    def bad(key: str, what: str):
        raise CatalogError(f"{where}: {key}: {what}")

    for key, value in e.get("dims", {}).items():
        if value not in e["config"]:
            bad(f"dims.{key}", f"{value!r} is not a key of config")
    if "dropout" in e.get("features", []) and "dropout" not in e.get("dims", {}):
        bad("features", "'dropout' needs dims.dropout")
    if "divisible_check" in e.get("features", []) and not {"output", "heads"} <= set(e.get("dims", {})):
        bad("features", "'divisible_check' needs dims.output and dims.heads")
    features, dims = set(e.get("features", [])), e.get("dims", {})
    for f in sorted(features & {"unbatched", "causal", "dropout"}):
        if e["kind"] != "module":
            bad("features", f"{f!r} is checked by the generic module suites: only for kind \"module\"")
    if "divisible_check" in features and e["kind"] not in MODULE_KINDS:
        bad("features", f"'divisible_check' constructs the module: only for kind {' or '.join(MODULE_KINDS)}")
    if "causal" in features and "context" not in dims:
        bad("features", "'causal' needs dims.context")
    if e["kind"] == "module":
        for role in ("input", "output"):
            if role not in dims:
                bad("dims", f"a module exercise needs dims.{role} (the generic suites build its inputs from it)")
    if e["kind"].startswith("custom_") and not e.get("module"):
        bad("module", f"a {e['kind']} exercise needs its own module: its checks and its diagnose()")
    if e["kind"] == "function" and not {"L", "S", "d_k", "d_v"} <= set(e["config"]):
        missing = ", ".join(sorted({"L", "S", "d_k", "d_v"} - set(e["config"])))
        bad("config", f"a function exercise's generic suites need config L, S, d_k and d_v (missing: {missing})")
    if len(e["hints"]) < 1 or not all(isinstance(h, str) and h.strip() for h in e["hints"]):
        bad("hints", "needs at least one non-empty hint")
    for folder, key in ((pack.exercises, "file"), (pack.solutions, "file")):
        if not (folder / e["file"]).is_file():
            bad(key, f"{folder / e['file']} does not exist")
    if e.get("module") and not (pack.checks / f"{e['module']}.py").is_file():
        bad("module", f"{pack.checks / (e['module'] + '.py')} does not exist")
    for name in e.get("forbidden", []):
        if not isinstance(name, str) or not DOTTED.fullmatch(name):
            bad("forbidden", f"{name!r} is not a dotted name such as torch.nn.functional.scaled_dot_product_attention")
    topics = kit_root("templates") / "explain" / "en"
    for topic in e.get("topics", []):
        if not isinstance(topic, str) or not (topics / f"{topic}.toml").is_file():
            known = ", ".join(sorted(p.stem for p in topics.glob("*.toml") if not p.stem.startswith("_")))
            bad("topics", f"no explainer topic {topic!r} (known: {known})")
    _check_against_solution(e, bad, pack)


DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _parameters(path: Path, entry: str, bad) -> tuple[list[str], set[str], bool] | None:
    """(parameter names, those without a default, takes **kwargs) of entry in path, read with ast (a class: its
    __init__ without self); None when entry is bound another way (an assignment, an import, an inherited __init__)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        bad("file", f"{path} does not parse: {exc}")
    node = None
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == entry:
            node = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == entry for t in targets):
                node = stmt
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == entry for a in stmt.names):
                node = stmt
    if node is None:
        bad("entry", f"{path} defines no {entry!r} at its top level")
    if isinstance(node, ast.ClassDef):
        node = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        skip = 1
    else:
        skip = 0
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    a = node.args
    positional = [p.arg for p in a.posonlyargs + a.args]
    names = positional[skip:] + [p.arg for p in a.kwonlyargs]
    defaulted = set(positional[len(positional) - len(a.defaults):]) if a.defaults else set()
    defaulted |= {p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None}
    return names, {n for n in names if n not in defaulted}, a.kwarg is not None


def _check_against_solution(e: dict, bad, pack: Pack) -> None:
    """entry defined by the solution and the skeleton; signature, config, sweep and probe against the solution's."""
    solution = _parameters(pack.solutions / e["file"], e["entry"], bad)
    skeleton = _parameters(pack.exercises / e["file"], e["entry"], bad)
    for path, found in ((pack.solutions / e["file"], solution), (pack.exercises / e["file"], skeleton)):
        if found is not None and found[0] != list(e["signature"]):
            bad("signature", f"{e['signature']} but {e['entry']} in {path} takes {found[0]}")
    if e["kind"] not in MODULE_KINDS:
        for key in ("sweep", "probe"):
            if e.get(key):
                bad(key, f"only module exercises ({', '.join(MODULE_KINDS)}) have constructor arguments to {key}")
        return
    names, required, var_kw = solution or (list(e["signature"]), set(), True)
    for key, cases in (("config", [e["config"]]), ("sweep", e.get("sweep", [])), ("probe", [e.get("probe", {})])):
        for i, case in enumerate(cases):
            label = f"sweep[{i}]" if key == "sweep" else key
            if not isinstance(case, dict):
                bad(label, f"must be a table of constructor arguments, not {type(case).__name__}")
            for name in case:
                if name not in names and not var_kw:
                    bad(f"{label}.{name}", f"{e['entry']}() takes no argument {name!r} (it takes {', '.join(names)})")
            if key != "sweep" and case and not required <= {*case, *(e["config"] if key == "probe" else ())}:
                missing = ", ".join(sorted(required - set(case)))
                bad(key, f"{e['entry']}() needs {missing}, which {key} does not give")
    if e["kind"] == "module" and not e.get("probe"):
        bad("probe", "missing: a module exercise needs the structural probe's constructor arguments")
    probe = e.get("probe") or {}
    if probe:
        dims = e.get("dims", {})
        for role in ("input", "output"):
            if role not in dims:
                bad("dims", f"the probe needs dims.{role}")
        d_in, d_out = probe.get(dims["input"]), probe.get(dims["output"])
        heads = probe.get(dims["heads"], 1) if "heads" in dims else 1
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (d_in, d_out, heads)) or heads < 1 \
                or d_in < PROBE_MIN or d_out // heads < PROBE_MIN:
            bad("probe", f"needs {dims['input']} >= {PROBE_MIN} and {dims['output']} / heads >= {PROBE_MIN} "
                         "(one-hot values read the attention weights off the output)")


def forbidden_problem(name: str) -> str | None:
    """Why a forbidden name does not resolve, or None: its longest importable prefix is imported and the rest
    looked up with getattr ("torch.nn.functional has no attribute scaled_dot_product_attentoin")."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        module_name = ".".join(parts[:i])
        try:
            obj = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (module_name == exc.name or module_name.startswith(exc.name + ".")):
                continue  # not a module (or not installed): try a shorter prefix
            return f"importing {module_name} failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - a module that raises on import: say so, in one line
            return f"importing {module_name} failed: {type(exc).__name__}: {exc}"
        for j, attr in enumerate(parts[i:]):
            if not hasattr(obj, attr):
                return f"{'.'.join(parts[:i + j])} has no attribute {attr}"
            obj = getattr(obj, attr)
        return None
    if len(parts) == 1 and hasattr(builtins, name):
        return None
    return f"no module named {parts[0]} (is it installed?)"


_RESOLVED: set = set()


def check_forbidden(ex: Exercise) -> None:
    """Raise CatalogError unless every name in ex.forbidden resolves to a real attribute: a misspelt ban would
    silently ban nothing. Imports the names' modules (torch): runner.grade calls it once torch is imported."""
    key = (ex.pack.info, ex.number, ex.forbidden)
    if key in _RESOLVED:
        return
    for name in ex.forbidden:
        problem = forbidden_problem(name)
        if problem is not None:
            raise CatalogError(f"{ex.pack.info}: exercise {ex.number} ({ex.slug}): forbidden: {problem}")
    _RESOLVED.add(key)


def _exercise(e: dict, pack: Pack) -> Exercise:
    known = {f.name for f in fields(Exercise)}
    values = {k: v for k, v in e.items() if k in known}
    values.update(
        signature=tuple(e["signature"]),
        contract=" ".join(e["contract"].split()),
        features=frozenset(e.get("features", ())),
        forbidden=tuple(e.get("forbidden", ())),
        topics=tuple(e.get("topics", ())),
        hints=tuple(e["hints"]),
        sweep=tuple(dict(s) for s in e.get("sweep", ())),
    )
    return Exercise(**values, pack=pack)


def read_catalog(pack: Pack) -> Catalog:
    """Load and validate a pack's info.toml (uncached)."""
    path = pack.info
    if not path.is_file():
        raise CatalogError(f"{path}: no such file")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: not valid TOML: {exc}") from None
    if data.get("format_version") != FORMAT_VERSION:
        raise CatalogError(f"{path}: format_version: {data.get('format_version')!r}, this grader reads {FORMAT_VERSION}")
    for cat, value in (data["points"] if isinstance(data.get("points"), dict) else {}).items():
        if cat not in CATEGORIES and not CATEGORY_NAME.fullmatch(cat):
            raise CatalogError(f"{path}: points.{cat}: a category of its own is a lower-case name like 'window' "
                               f"(the kit's: {', '.join(CATEGORIES)})")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CatalogError(f"{path}: points.{cat}: {value!r} is not a whole number of points >= 0")
    try:
        schema.read_info(data, path)
    except schema.SchemaError as exc:
        raise CatalogError(str(exc)) from None
    seen: dict = {}
    exercises = []
    for i, e in enumerate(data["exercise"]):
        label = f"exercise {e.get('number', f'#{i + 1}')}" + (f" ({e['slug']})" if "slug" in e else "")
        _check_exercise(e, f"{path}: {label}", pack)
        for key in ("number", "slug", "file"):
            if (key, e[key]) in seen:
                raise CatalogError(f"{path}: {label}: {key}: {e[key]!r} is also used by {seen[key, e[key]]}")
            seen[key, e[key]] = label
        exercises.append(_exercise(e, pack))
    exercises.sort(key=lambda ex: ex.number)
    for ex in exercises:  # resolving a name is free once its module is imported; else runner.grade does it
        if all(name.split(".")[0] in sys.modules for name in ex.forbidden):
            check_forbidden(ex)
    return Catalog(tuple(exercises), dict(data["points"]), tuple(data["allowed_imports"]), pack)


@cache
def _cached(pack: Pack) -> Catalog:
    return read_catalog(pack)


def load_catalog(pack: Pack | Path | None = None) -> Catalog:
    """The catalog of a pack (a Pack or its folder), by default of ATTENTION_KIT_PACK's pack or the kit."""
    if pack is None:
        pack = default_pack()
    elif not isinstance(pack, Pack):
        pack = Pack.at(Path(pack))
    return _cached(pack)
