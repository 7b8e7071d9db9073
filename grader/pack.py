"""Exercise packs: a folder laid out like the kit, and the loader of an exercise's own module.

A pack is

    PACK/exercises/info.toml      the metadata (grader/catalog.py validates it)
    PACK/exercises/NN_slug.py     the skeletons, handed out
    PACK/solutions/NN_slug.py     the references, read only by the grader process (private)
    PACK/checks/<module>.py       an exercise's own module, named by its info.toml entry (hidden)
    PACK/corpus/NN/*.py           optional labelled submissions (`# expect: <diagnosis id>`), for `grade dev check`

The kit is the default pack: its checks are grader/checks/ and its corpus tests/corpus/ (in a checkout).
ATTENTION_KIT_PACK=DIR (or `--pack DIR`) makes DIR the default pack of a process and of its children.

An exercise module may define (all optional):

    test_*(kit, ex[, init])  pytest-style checks with @check(category, evidence=...) from grader.suites, run
                             for this exercise only, beside the generic suites (grader/suites/)
    diagnose(ex, kit, verdict) -> list[Diagnosis]
                             the exercise's own diagnosis rules, replacing the generic behavioural step
                             (grader/diagnosis/behaviour.py has the helpers: run probes, match variants)
    MISTAKES = {bug: description}
                             the exercise's own mistakes, each a variant's bug name ("with ..." phrase)
    ALIASES = {bug: diagnosis id}
                             the diagnosis a mistake is reported as (default: the bug name itself)
    EXCLUSIVE = [{bug, ...}] mistakes that are never combined when matching variants
    DIAGNOSES = {id: {title, explanation, hint}}
                             texts of diagnoses the kit's grader/diagnosis/catalog.toml does not have
    trace_call(ex, kit) -> {"init", "params", "args", "kwargs"[, "scalars"]} (or a list of them)
                             for a custom_* call: the call traced to point a failing verdict at a line (a list:
                             each traced while the ones before it reproduce every stage)
                             (grader/diagnosis/localize/); the reference marks its stages `# stage: name`

The module is loaded by file path, never imported by name: the core does not know which exercises exist.
It is a submodule of a package made for the pack's checks/ folder, so it can share code with a helper
module beside it by a relative import (`from .helpers import qkv`); a helper no exercise names is fine as
long as an exercise module imports it (`grade dev check`). An error raised in (or through) the pack's
checks/ folder is the pack's, reported with its file and line (PackCodeError, exit 2), not the kit's.
docs/pack-authors.md is the author's guide.
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
ENV = "ATTENTION_KIT_PACK"


def kit_root(name: str) -> Path:
    """exercises/, solutions/ or templates/ of the kit: inside the wheel (grader/_kit) or beside the package."""
    installed = PACKAGE_DIR / "_kit" / name
    return installed if installed.is_dir() else PACKAGE_DIR.parent / name


@dataclass(frozen=True)
class Pack:
    root: Path
    exercises: Path
    solutions: Path
    checks: Path
    corpus: Path
    builtin: bool = False

    @property
    def info(self) -> Path:
        return self.exercises / "info.toml"

    @property
    def hidden(self) -> tuple[str, ...]:
        """What a sandbox worker must not read of this pack: all of it (the kit's copies are hidden anyway)."""
        return () if self.builtin else (str(self.root),)

    @classmethod
    def kit(cls) -> "Pack":
        return cls(PACKAGE_DIR.parent, kit_root("exercises"), kit_root("solutions"), PACKAGE_DIR / "checks",
                   PACKAGE_DIR.parent / "tests" / "corpus", builtin=True)

    @classmethod
    def at(cls, root: Path) -> "Pack":
        root = Path(root).resolve()
        return cls(root, root / "exercises", root / "solutions", root / "checks", root / "corpus")


class PackError(Exception):
    """A pack folder that is missing or not laid out like the kit (exit code 2)."""


class PackCodeError(PackError):
    """The pack's own code (its checks/*.py) raised or does not import: the pack's error, with its file and line
    (exit code 2), never an internal error of the kit."""


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pack_fault(exc: BaseException, checks: Path) -> str | None:
    """'FILE:LINE (in FUNCTION): Type: message' when exc was raised in, or passed through, code in the folder
    checks (a pack's checks/), at its innermost frame there; None otherwise, and always for the kit's own
    grader/checks/ (a bug there is the kit's)."""
    checks = Path(checks).resolve()
    if checks.is_relative_to(PACKAGE_DIR):
        return None
    found = None
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve().is_relative_to(checks):
        found = (exc.filename, exc.lineno, "")  # the line that does not parse, not the import that read it
    tb = None if found else exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if Path(code.co_filename).resolve().is_relative_to(checks):
            found = (code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    if found is None:
        return None
    path, line, function = found
    where = f"{path}:{line}" + (f" (in {function})" if function and function != "<module>" else "")
    text = exc.msg if isinstance(exc, SyntaxError) else str(exc)  # a SyntaxError's str repeats file and line
    detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if isinstance(exc, AssertionError) and type(exc) is AssertionError:
        detail += " (a check fails the submission with expect(condition, message, code), not assert)"
    return _one_line(f"{where}: {detail} (an error in the pack's own code)", 400)


def default_pack() -> Pack:
    """The pack named by ATTENTION_KIT_PACK, else the kit."""
    where = os.environ.get(ENV, "").strip()
    if not where:
        return Pack.kit()
    pack = Pack.at(Path(where))
    if not pack.info.is_file():
        raise PackError(f"{ENV}={where}: no exercises/info.toml there; a pack is laid out like the kit")
    return pack


def use_pack(root: Path | None) -> None:
    """Make root the default pack of this process and of the processes it starts (None: the kit)."""
    if root is None:
        os.environ.pop(ENV, None)
        return
    pack = Pack.at(root)
    if not pack.info.is_file():
        raise PackError(f"--pack {root}: no exercises/info.toml there; a pack is laid out like the kit")
    os.environ[ENV] = str(pack.root)


def _checks_package(folder: Path) -> str:
    """A package (made once per process) whose only path is folder: its modules can import each other relatively."""
    name = f"attention_kit_checks_{hashlib.sha1(str(folder).encode()).hexdigest()[:10]}"
    if name not in sys.modules:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(folder)]
        sys.modules[name] = importlib.util.module_from_spec(spec)
    return name


@cache
def load_module(path: Path):
    """Import an exercise module from its file, under a name no `import` statement can reach (a submodule of
    _checks_package(its folder)). A pack's module that does not import raises PackCodeError with its line."""
    name = f"{_checks_package(path.parent)}.{path.stem}"
    if name in sys.modules:  # a helper an exercise module has imported already
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        fault = pack_fault(exc, path.parent)
        if fault is None:
            raise
        raise PackCodeError(f"{path.name} does not import: {fault}") from exc
    return module


# -- an exercise's own module, read once -----------------------------------------------------------
@dataclass(frozen=True)
class ExerciseModule:
    """What an exercise's own module brings (the names listed at the top of this file), read and checked once
    when the module is loaded; each hook is optional (empty, or None). The core reads these fields, never the
    module's attributes."""
    path: Path
    checks: tuple  # (name, function) of its test_* functions, in file order
    mistakes: dict
    aliases: dict
    exclusive: tuple  # frozensets of bug names never combined
    diagnoses: dict  # id -> {title, explanation, hint[, explains]}
    diagnose: object = None  # diagnose(ex, kit, verdict) -> list[Diagnosis]
    trace_call: object = None  # trace_call(ex, kit) -> dict | list[dict] | None


_MODULES: dict[Path, ExerciseModule] = {}


def exercise_module(ex) -> ExerciseModule | None:
    """ex's own module (info.toml `module`) as an ExerciseModule, built once per process; None without one.
    A module whose names have the wrong shape raises PackCodeError naming its file and the name."""
    path = ex.module_path
    if path is None:
        return None
    if path not in _MODULES:
        _MODULES[path] = _read_module(path, load_module(path))
    return _MODULES[path]


def _read_module(path: Path, module) -> ExerciseModule:
    def bad(name: str, what: str):
        raise PackCodeError(f"{path.name}: {name}: {what}")

    def table(name: str, check) -> dict:
        value = getattr(module, name, {})
        if not isinstance(value, dict) or not all(isinstance(k, str) and check(v) for k, v in value.items()):
            bad(name, "must be a dict from names to " + check.__doc__)
        return dict(value)

    def text(v):
        """strings"""
        return isinstance(v, str)

    def anything(v):
        """descriptions"""
        return True

    def texts(v):
        """{title, explanation, hint} tables of strings"""
        return isinstance(v, dict) and all(isinstance(v.get(k), str) for k in ("title", "explanation", "hint"))

    exclusive = getattr(module, "EXCLUSIVE", [])
    if not isinstance(exclusive, (list, tuple)) or not all(
            isinstance(group, (set, frozenset, list, tuple)) and all(isinstance(b, str) for b in group) for group in exclusive):
        bad("EXCLUSIVE", "must be a list of sets of bug names")
    hooks = {}
    for name in ("diagnose", "trace_call"):
        hook = getattr(module, name, None)
        if hook is not None and not callable(hook):
            bad(name, "must be a function")
        hooks[name] = hook
    checks = tuple((name, fn) for name, fn in vars(module).items() if name.startswith("test_") and callable(fn))
    return ExerciseModule(path, checks, table("MISTAKES", anything), table("ALIASES", text),
                          tuple(frozenset(g) for g in exclusive), table("DIAGNOSES", texts), **hooks)


def own_diagnosis_texts(id: str) -> dict | None:
    """The texts of a diagnosis id that an exercise module loaded in this process brings (its DIAGNOSES)."""
    return next((m.diagnoses[id] for m in _MODULES.values() if id in m.diagnoses), None)
