"""The exercise catalog: reads a pack's exercises/info.toml, checks it, and finds the pack's files.

Validation happens at load time: an unknown key, an unknown feature, a missing skeleton, solution or
exercise module, or another format_version raise CatalogError naming the file and the key.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path

from grader.pack import PACKAGE_DIR, Pack, PackError, default_pack, kit_root

FORMAT_VERSION = 2
KINDS = ("module", "function", "custom_module", "custom_function")
# Behaviour the generic suites check, by feature. Anything particular to one exercise belongs in its module.
FEATURES = {
    "unbatched": "forward also takes 2-D (tokens, d_in) input",
    "causal": "token t attends to tokens 0..t only (masking tests, causal variants)",
    "dropout": "dropout on the attention weights, in training mode only (needs dims.dropout)",
    "divisible_check": "construction raises when dims.output is not divisible by dims.heads",
}
ROLES = ("q", "k", "v", "o", "qkv")
DIMS = ("input", "output", "heads", "kv_heads", "context", "context_width", "dropout")
LIMITS = ("memory_mb", "cpu_s")
TOP_KEYS = {"format_version", "allowed_imports", "points", "policy", "exercise"}
CATEGORIES = ("policy", "api", "shape", "numerics", "masking", "dropout", "device")

__all__ = ["Catalog", "CatalogError", "Exercise", "PACKAGE_DIR", "Pack", "UnknownExercise", "kit_dir", "load_catalog"]


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


# -- validation -------------------------------------------------------------------------------------------
REQUIRED = ("number", "slug", "title", "file", "kind", "entry", "signature", "contract", "config", "hints")
TYPES = {"number": int, "slug": str, "title": str, "file": str, "kind": str, "entry": str, "signature": list,
         "contract": str, "config": dict, "hints": list, "brief": str, "features": list, "forbidden": list,
         "topics": list, "roles": dict, "dims": dict, "sweep": list, "probe": dict, "limits": dict, "module": str}
KEYS_OF = {"roles": ROLES, "dims": DIMS, "limits": LIMITS}


def _check_exercise(e: dict, where: str, pack: Pack) -> None:
    def bad(key: str, what: str):
        raise CatalogError(f"{where}: {key}: {what}")

    for key in e:
        if key not in TYPES:
            bad(key, f"unknown key (known: {', '.join(TYPES)})")
    for key in REQUIRED:
        if key not in e:
            bad(key, "missing")
    for key, value in e.items():
        if not isinstance(value, TYPES[key]) or isinstance(value, bool) and TYPES[key] is int:
            bad(key, f"must be a {TYPES[key].__name__}, not {type(value).__name__}")
    if e["kind"] not in KINDS:
        bad("kind", f"unknown kind {e['kind']!r} (known: {', '.join(KINDS)})")
    for f in e.get("features", []):
        if f not in FEATURES:
            bad("features", f"unknown feature {f!r} (known: {', '.join(FEATURES)})")
    for key, allowed in KEYS_OF.items():
        for name in e.get(key, {}):
            if name not in allowed:
                bad(f"{key}.{name}", f"unknown {key} entry (known: {', '.join(allowed)})")
    for key, value in e.get("dims", {}).items():
        if value not in e["config"]:
            bad(f"dims.{key}", f"{value!r} is not a key of config")
    if "dropout" in e.get("features", []) and "dropout" not in e.get("dims", {}):
        bad("features", "'dropout' needs dims.dropout")
    if "divisible_check" in e.get("features", []) and not {"output", "heads"} <= set(e.get("dims", {})):
        bad("features", "'divisible_check' needs dims.output and dims.heads")
    if len(e["hints"]) < 1 or not all(isinstance(h, str) and h.strip() for h in e["hints"]):
        bad("hints", "needs at least one non-empty hint")
    for folder, key in ((pack.exercises, "file"), (pack.solutions, "file")):
        if not (folder / e["file"]).is_file():
            bad(key, f"{folder / e['file']} does not exist")
    if e.get("module") and not (pack.checks / f"{e['module']}.py").is_file():
        bad("module", f"{pack.checks / (e['module'] + '.py')} does not exist")


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
    for key in data:
        if key not in TOP_KEYS:
            raise CatalogError(f"{path}: {key}: unknown key (known: {', '.join(sorted(TOP_KEYS))})")
    if data.get("format_version") != FORMAT_VERSION:
        raise CatalogError(f"{path}: format_version: {data.get('format_version')!r}, this grader reads {FORMAT_VERSION}")
    for key in ("points", "allowed_imports", "exercise"):
        if key not in data:
            raise CatalogError(f"{path}: {key}: missing")
    for cat in data["points"]:
        if cat not in CATEGORIES:
            raise CatalogError(f"{path}: points.{cat}: unknown category (known: {', '.join(CATEGORIES)})")
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
