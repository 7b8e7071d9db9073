"""The shapes of the files the kit reads and writes, as msgspec types: info.toml here, the JSON outputs beside it.

msgspec, because it checks types and unknown keys in one pass at C speed (an info.toml of 12 exercises in well
under a millisecond, the import about 5 ms: the cold grade pays for it), and derives the JSON Schemas published
in docs/schemas/ (`python -m grader.schema DIR` writes them; a test keeps them current). What a type cannot say
(a dims value must be a config key, entry must exist in the solution, ...) grader/catalog.py checks next.

read_info(data, path) turns a type error into one line naming the file, the exercise and the key, like every
other catalog error: "exercises/info.toml: exercise 3 (causal_attention): features[0]: 'casual' is not one of ...".
"""
from __future__ import annotations

import inspect
import json
import re
import sys
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

Kind = Literal["module", "function", "custom_module", "custom_function"]
Feature = Literal["unbatched", "causal", "dropout", "divisible_check"]
Level = Literal["easy", "medium", "hard"]  # how hard an exercise is in an interview (`grade interview --level`)
LEVELS = Level.__args__
Value = int | float | bool | str
CATEGORY_PATTERN = r"^[a-z][a-z0-9_]{0,30}$"  # a pack's own point category: a key of [points]


class Roles(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Which parameter holds each projection (qkv: one fused projection whose output is [q | k | v])."""
    q: str | UnsetType = UNSET
    k: str | UnsetType = UNSET
    v: str | UnsetType = UNSET
    o: str | UnsetType = UNSET
    qkv: str | UnsetType = UNSET


class Dims(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Which constructor argument means each size, so one generic suite serves every module."""
    input: str | UnsetType = UNSET
    output: str | UnsetType = UNSET
    heads: str | UnsetType = UNSET
    kv_heads: str | UnsetType = UNSET
    context: str | UnsetType = UNSET
    context_width: str | UnsetType = UNSET
    dropout: str | UnsetType = UNSET


class Limits(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Sandbox limits replacing the defaults for this exercise."""
    memory_mb: int | UnsetType = UNSET
    cpu_s: float | UnsetType = UNSET


class ExerciseSpec(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """One [[exercise]] table."""
    number: int
    slug: str
    title: str
    file: str
    kind: Kind
    entry: str
    signature: list[str]
    contract: str
    config: dict[str, Value]
    hints: list[str]
    brief: str = ""
    features: list[Feature] = []
    forbidden: list[str] = []
    topics: list[str] = []
    roles: Roles = msgspec.field(default_factory=Roles)
    dims: Dims = msgspec.field(default_factory=Dims)
    sweep: list[dict[str, Value]] = []
    probe: dict[str, Value] = {}
    limits: Limits = msgspec.field(default_factory=Limits)
    module: str = ""
    level: Level | UnsetType = UNSET


# -- an instructor's sandbox policy (`grade exercise --policy FILE`, or info.toml's [policy]) -----------------------
Name = Annotated[str, msgspec.Meta(min_length=1)]


class PolicyTable(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The keys of a policy file (at its top level or under [policy]); grader/policy.py applies them."""
    allowed_imports: list[Name] | UnsetType = UNSET  # replaces the built-in allowlist of imports
    extra_allowed_imports: list[Name] = []
    denied_names: list[Name] = []  # added to the built-in denied calls
    denied_attributes: list[Name] = []
    allowed_names: list[Name] = []  # lift a built-in denial, at the instructor's own risk
    allowed_attributes: list[Name] = []  # names or module.name paths beyond grader/reachable.py
    static_check: bool = True  # false: only the exercise's forbidden APIs are checked (trusted code)


class InfoFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A pack's exercises/info.toml."""
    format_version: Literal[2]
    allowed_imports: list[str]
    points: dict[Annotated[str, msgspec.Meta(pattern=CATEGORY_PATTERN)], Annotated[int, msgspec.Meta(ge=0)]]
    exercise: list[ExerciseSpec]
    policy: PolicyTable = msgspec.field(default_factory=PolicyTable)  # applied by grader/policy.py


def field_names(struct: type) -> tuple[str, ...]:
    return tuple(f.name for f in msgspec.structs.fields(struct))


class SchemaError(ValueError):
    """A file does not have the shape its schema gives: one line, the file, the key."""


AT = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)


def where(path: str, raw: dict) -> tuple[str, str]:
    """msgspec's `$.exercise[2].dims.foo` as (the exercise's label, its key path): ("exercise 3 (slug)", "dims.foo")."""
    m = re.match(r"\.exercise\[(\d+)\]\.?(.*)", path)
    if not m:
        return "", path.lstrip(".")
    i = int(m.group(1))
    entries = raw.get("exercise") if isinstance(raw.get("exercise"), list) else []
    e = entries[i] if i < len(entries) and isinstance(entries[i], dict) else {}
    number = e.get("number")
    label = f"exercise {number}" if isinstance(number, int) and not isinstance(number, bool) else f"exercise #{i + 1}"
    if isinstance(e.get("slug"), str):
        label += f" ({e['slug']})"
    return label, m.group(2)


def plain(what: str, key: str) -> tuple[str, str]:
    """msgspec's wording made the catalog's: an unknown key names the keys it knows, a bad value the choices."""
    unknown = re.match(r"Object contains unknown field `(\w+)`", what)
    if unknown:
        return f"{key}.{unknown.group(1)}" if key else unknown.group(1), "unknown key (known: {known})"
    missing = re.match(r"Object missing required field `(\w+)`", what)
    if missing:
        return f"{key}.{missing.group(1)}" if key else missing.group(1), "missing"
    choice = re.match(r"Invalid enum value (.+)", what)
    if choice:
        return key, f"{choice.group(1)} is not one of {{choices}}"
    typed = re.match(r"Expected `(.+?)`, got `(.+?)`", what)
    if typed:
        expected = typed.group(1).replace(" | null", "")  # TOML has no null: an optional key is simply left out
        if key.endswith("[...]"):  # msgspec does not name the key of a table's value
            return key.removesuffix("[...]"), f"each value must be {expected}, not {typed.group(2)}"
        return key, f"must be {expected}, not {typed.group(2)}"
    return key, what


def _struct_in(tp) -> type | None:
    """The Struct a field's type holds: itself, or inside list[...], dict[..., ...], X | None."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return tp
    for arg in typing.get_args(tp):
        found = _struct_in(arg)
        if found is not None:
            return found
    return None


def _literal_in(tp) -> tuple | None:
    if typing.get_origin(tp) is Literal:
        return typing.get_args(tp)
    for arg in typing.get_args(tp):
        found = _literal_in(arg)
        if found is not None:
            return found
    return None


def landing(struct: type, key: str) -> tuple[type, Any]:
    """The struct a key path (rows[0].exercises[1].status) lands in, and the type of its last key."""
    parts = [p for p in re.sub(r"\[[^\]]*\]", "", key).split(".") if p]
    for name in parts[:-1]:
        inner = _struct_in({f.name: f.type for f in msgspec.structs.fields(struct)}.get(name))
        if inner is None:
            break
        struct = inner
    last = {f.name: f.type for f in msgspec.structs.fields(struct)}.get(parts[-1]) if parts else None
    return struct, last


def known_keys(struct: type, key: str) -> str:
    """The field names of the struct a key path lands in, for 'unknown key (known: ...)'."""
    return ", ".join(field_names(landing(struct, key)[0]))


def choices(struct: type, key: str) -> str:
    options = _literal_in(landing(struct, key)[1])
    return ", ".join(map(str, options)) if options else "the allowed values"


def describe(exc: msgspec.ValidationError, struct: type, prefix: str = "") -> str:
    """msgspec's error against struct as one line, "key: what is wrong" (prefix: where the checked value sits)."""
    m = AT.match(str(exc))
    key, what = plain(m.group("what"), (m.group("path") or "").lstrip("."))
    what = what.format(known=known_keys(struct, key), choices=choices(struct, key))
    shown = f"{prefix}.{key}" if prefix and key else prefix or key
    return f"{shown}: {what}" if shown else what


def read_info(raw: dict, path: Path) -> InfoFile:
    """raw (parsed TOML) as an InfoFile, or SchemaError naming path, the exercise and the key."""
    try:
        return msgspec.convert(raw, InfoFile, strict=True)
    except msgspec.ValidationError as exc:
        m = AT.match(str(exc))
        label, key = where(m.group("path") or "", raw)
        key, what = plain(m.group("what"), key)
        struct = ExerciseSpec if label else InfoFile
        what = what.format(known=known_keys(struct, key), choices=choices(struct, key))
        raise SchemaError(": ".join(str(part) for part in (path, label, key, what) if part)) from None


# -- what `grade exercise N --json` prints (schema_version 1; fields are only ever added) -------------------------
Status = Literal["passed", "failed", "error", "timeout", "skipped"]


class TestJSON(msgspec.Struct, forbid_unknown_fields=True):
    """One check's result. line/cell/cell_line: where the submission raised (a notebook's cell and line in it);
    code: a failure code (docs/pack-authors.md lists them); explained_by: the diagnosis id it follows from."""
    name: str
    category: str
    status: Status
    message: str
    points: int
    score: int
    line: int | None
    cell: int | None
    cell_line: int | None
    code: str
    explained_by: str | None
    repro: dict[str, Any] | None


class DiagnosisJSON(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    title: str
    explanation: str
    hint: str
    evidence: list[str]


class LocalizationJSON(msgspec.Struct, forbid_unknown_fields=True):
    """Where the computation first parts from the reference (feedback only)."""
    line: int
    stage: str
    matched_through: str | None
    evidence: str
    cell: int | None = None
    cell_line: int | None = None


class Budget(msgspec.Struct, forbid_unknown_fields=True):
    cpu_s: float
    wall_backstop_s: float
    memory_mb: int


class Provenance(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """What produced the verdict; empty when nothing was graded (an unreadable file)."""
    kit: str | UnsetType = UNSET
    torch: str | UnsetType = UNSET
    python: str | UnsetType = UNSET
    source_sha256: str | UnsetType = UNSET
    budget: Budget | UnsetType = UNSET
    device: str | UnsetType = UNSET
    sandbox: str | UnsetType = UNSET


class VerdictJSON(msgspec.Struct, forbid_unknown_fields=True):
    """`grade exercise N --json`: one document, nothing else on stdout."""
    schema_version: Literal[1]
    exercise: int
    slug: str
    passed: bool
    score: int
    max_score: int
    state: str
    tests: list[TestJSON]
    diagnoses: list[DiagnosisJSON]
    device: str
    duration_s: float
    output: str
    topics: list[str]
    localization: LocalizationJSON | None
    notes: list[str]
    provenance: Provenance
    sandbox: list[str] | UnsetType = UNSET  # what the worker's isolation gave up, when it gave something up


def read_verdict(doc: dict) -> VerdictJSON:
    """A --json document checked against the published shape (SchemaError: what differs, one line)."""
    try:
        return msgspec.convert(doc, VerdictJSON, strict=True)
    except msgspec.ValidationError as exc:
        raise SchemaError(f"not a verdict document: {exc}") from None


def read_policy(table: dict, origin: str) -> PolicyTable:
    """A policy table (parsed TOML) as a PolicyTable, or SchemaError: "origin: key: what is wrong"."""
    try:
        return msgspec.convert(table, PolicyTable, strict=True)
    except msgspec.ValidationError as exc:
        raise SchemaError(f"{origin}: {describe(exc, PolicyTable)}") from None


SCHEMAS = {"info.schema.json": InfoFile, "verdict.schema.json": VerdictJSON, "policy.schema.json": PolicyTable}


def schemas(types: dict[str, type] = SCHEMAS) -> dict[str, dict]:
    """Each published JSON Schema by file name (the gradebook's are in grader/instructor/gradebook.py SCHEMAS)."""
    return {name: _cleaned(msgspec.json.schema(t)) for name, t in types.items()}


def _cleaned(doc):
    """Descriptions dedented as inspect.cleandoc does: msgspec 0.23 does it itself, earlier versions kept the
    docstrings' indentation, and the published files must not depend on which one is installed."""
    if isinstance(doc, dict):
        return {k: inspect.cleandoc(v) if k == "description" and isinstance(v, str) else _cleaned(v)
                for k, v in doc.items()}
    if isinstance(doc, list):
        return [_cleaned(v) for v in doc]
    return doc


def write(folder: Path, types: dict[str, type] = SCHEMAS) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, doc in schemas(types).items():
        target = folder / name
        target.write_text(json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
        out.append(target)
    return out


if __name__ == "__main__":  # python -m grader.schema docs/schemas
    for written in write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas")):
        print(written)
