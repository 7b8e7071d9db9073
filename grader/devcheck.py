"""`grade dev check`: lint the kit or a pack the way rustlings' `dev check` does.

Metadata valid (grader/catalog.py: keys, entry, signature, explainer topics, forbidden names that resolve),
hints, no stray files (a helper module in checks/ is one an exercise module imports), every exercise
module loads and says what its checks and mistakes are, each skeleton fails as not started, each
solution passes, and each file of the pack's dev corpus (corpus/NN/*.py, `# expect: <id>`) gets
its label first. One line per problem; the grades fork from one warm server.
"""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

from grader.catalog import CatalogError, read_catalog
from grader.pack import Pack, PackError, load_module

CHECK_PARAMETERS = ("kit", "ex", "init")  # what test_own_check (grader/suites/test_exercise_module.py) passes


def metadata_problems(pack: Pack):
    """(catalog or None, problems) without grading anything."""
    try:
        catalog = read_catalog(pack)
        catalog.check_forbidden()
    except CatalogError as exc:
        return None, [str(exc)]
    problems = []
    files = {ex.file for ex in catalog.exercises}
    modules = shared_modules(pack.checks, {ex.module for ex in catalog.exercises if ex.module})
    for path in sorted(pack.exercises.glob("*.py")):
        if path.name not in files:
            problems.append(f"{path}: stray file: no exercise in {pack.info.name} names it")
    for path in sorted(pack.solutions.glob("*.py")):
        if path.name not in files:
            problems.append(f"{path}: a solution without an exercise")
    for path in sorted(pack.checks.glob("*.py")) if pack.checks.is_dir() else []:
        if path.stem not in modules and path.name != "__init__.py":
            problems.append(f"{path}: a module no exercise names (info.toml `module`) and no exercise module "
                            "imports (`from .helpers import ...`)")
    for ex in catalog.exercises:
        where = f"{pack.info}: exercise {ex.number} ({ex.slug})"
        if len(ex.hints) < 3:
            problems.append(f"{where}: hints: {len(ex.hints)} hint(s), at least 3 expected")
        if ex.module_path is not None:
            problems += module_problems(ex, where, catalog.categories)
    return catalog, problems


def shared_modules(checks: Path, named: set[str]) -> set[str]:
    """The modules named by info.toml and those they import from their folder, transitively (`from .helpers import
    x`, `from . import helpers`): a shared helper is part of the pack, not a stray file."""
    found, todo = set(), list(named)
    while todo:
        stem = todo.pop()
        if stem in found:
            continue
        found.add(stem)
        try:
            tree = ast.parse((checks / f"{stem}.py").read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue  # reported when the module is loaded
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
                todo += [n for n in names if (checks / f"{n}.py").is_file()]
    return found


def module_problems(ex, where: str, categories: tuple[str, ...]) -> list[str]:
    from grader.diagnosis.diagnoses import known

    try:
        module = load_module(ex.module_path)
    except PackError as exc:  # its file and line (grader/pack.py pack_fault)
        return [str(exc)]
    except Exception as exc:  # noqa: BLE001 - the author's module: report, do not crash
        return [f"{ex.module_path}: does not import: {type(exc).__name__}: {exc}"]
    problems = []
    extra = set(getattr(module, "DIAGNOSES", {}))
    for name, fn in vars(module).items():
        if name.startswith("test_") and callable(fn):
            unknown = [p for p in inspect.signature(fn).parameters if p not in CHECK_PARAMETERS]
            if unknown:
                problems.append(f"{ex.module_path}: {name}: takes {', '.join(unknown)}; a check takes only "
                                f"{', '.join(CHECK_PARAMETERS)}")
                continue
            marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "check"]
            if not marks or marks[0].args[0] not in categories:
                problems.append(f"{ex.module_path}: {name}: needs @check(category) with one of {', '.join(categories)} "
                                "(a pack declares its own categories in info.toml's [points])")
                continue
            declared = marks[0].kwargs.get("evidence") or {}
            ids = [declared] if isinstance(declared, str) else list(declared.values())
            problems += [f"{ex.module_path}: {name}: evidence {i!r} is no known diagnosis"
                         for i in ids if not (known(i) or i in extra)]
    if ex.kind.startswith("custom_") and not callable(getattr(module, "diagnose", None)):
        problems.append(f"{ex.module_path}: a {ex.kind} exercise's module needs diagnose(ex, kit, verdict): the "
                        "generic rules cannot call it")
    aliases = getattr(module, "ALIASES", {})
    for bug in getattr(module, "MISTAKES", {}):
        target = aliases.get(bug, bug)
        if not (known(target) or target in extra):
            problems.append(f"{ex.module_path}: MISTAKES: {bug!r} is reported as {target!r}, which has no text "
                            "(add it to DIAGNOSES or ALIASES)")
    return problems


def label(path: Path) -> str | None:
    first = path.read_text(encoding="utf-8", errors="replace").splitlines()[:1]
    return first[0].removeprefix("# expect: ").strip() if first and first[0].startswith("# expect: ") else None


def grading_problems(catalog, *, corpus: bool = True, time_s: float = 12.0) -> list[str]:
    from grader.runner import grade, keep_warm
    from grader.sandbox import Limits

    keep_warm()
    limits = Limits(time_s=time_s)
    problems = []
    for ex in catalog.exercises:
        v = grade(exercise=ex, path=ex.skeleton_path, limits=limits, warm=True, allow_weak_sandbox=True)
        if v.state != "not_started":
            got = v.diagnoses[0].id if v.diagnoses else ("passed" if v.passed else "no diagnosis")
            problems.append(f"{ex.skeleton_path}: the skeleton should fail as not started, got {got}")
        v = grade(exercise=ex, path=ex.solution_path, limits=limits, warm=True, allow_weak_sandbox=True)
        if not v.passed:
            first = v.failures()[0]
            problems.append(f"{ex.solution_path}: the solution fails {first.name}: {first.message[:160]}")
    if not corpus or not catalog.pack.corpus.is_dir():
        return problems
    numbers = {f"{ex.number:02d}": ex for ex in catalog.exercises}
    for path in sorted(catalog.pack.corpus.glob("[0-9][0-9]/*.py")):  # the dev corpus only, not its subfolders
        ex = numbers.get(path.parent.name)
        want = label(path)
        if ex is None or want is None:
            problems.append(f"{path}: " + ("no such exercise" if ex is None else "must start with '# expect: <id>'"))
            continue
        v = grade(exercise=ex, path=path, limits=limits, warm=True, allow_weak_sandbox=True)
        got = "pass" if v.passed else (v.diagnoses[0].id if v.diagnoses else "no diagnosis")
        if got != want:
            problems.append(f"{path}: expected {want}, got {got}")
    return problems


def check(pack: Pack, *, grading: bool = True, corpus: bool = True) -> list[str]:
    """Every problem of the pack, one line each; [] when it is fine."""
    catalog, problems = metadata_problems(pack)
    if catalog is None or problems or not grading:
        return problems
    return grading_problems(catalog, corpus=corpus)


def readme_table(catalog) -> str:
    """The README's exercise table: one row per exercise, from info.toml's title and brief."""
    rows = ["| # | slug | title | contract |", "|---|---|---|---|"]
    for ex in catalog.exercises:
        rows.append(f"| {ex.number} | `{ex.slug}` | {ex.title} | {ex.brief.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"
