"""`grade release DIR`: the handout learners or candidates receive.

DIR/README.md            how to set up and check work (learners) or what is graded (candidates),
                         the contracts, the rules and the file names to hand in
DIR/exercises/*.py       the skeletons, with their # TODO
DIR/exercises/info.toml  the exercise metadata (for the selected exercises)
DIR/.attention-kit.json  (learners) makes the handout a workspace: `grade exercise 1` works inside it

Never the reference solutions, never the hidden suites: only files copied from exercises/.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from grader import workspace
from grader.catalog import Exercise, kit_dir, load_catalog
from grader.instructor import UsageError, select_exercises

AUDIENCES = ("learners", "candidates")
DEFAULT_INSTALL = "pip install attention-kit"


def metadata_for(exercises: list[Exercise]) -> str:
    """info.toml with only the selected [[exercise]] tables (comments and shared settings kept)."""
    text = (kit_dir("exercises") / "info.toml").read_text(encoding="utf-8")
    head, *blocks = text.split("\n[[exercise]]\n")
    wanted = {ex.number for ex in exercises}
    kept = [b for b in blocks if tomllib.loads(b)["number"] in wanted]
    return "\n[[exercise]]\n".join([head, *kept]).rstrip("\n") + "\n"


def readme(exercises: list[Exercise], *, audience: str, install: str, title: str) -> str:
    env = Environment(loader=FileSystemLoader(str(kit_dir("templates") / "release")), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["cell"] = lambda s: str(s).replace("|", "\\|")
    groups: dict[tuple[str, ...], list[int]] = {}
    for ex in exercises:
        if ex.forbidden:
            groups.setdefault(ex.forbidden, []).append(ex.number)
    forbidden = [(numbers, names) for names, numbers in groups.items()]
    return env.get_template("README.md").render(
        exercises=exercises, audience=audience, install=install, title=title, forbidden=forbidden,
        allowed_imports=load_catalog().allowed_imports)


def release(*, directory: Path, audience: str = "learners", install: str = DEFAULT_INSTALL,
            exercises: str | None = None, title: str = "Attention exercises", force: bool = False) -> list[Path]:
    """Write the handout into directory; returns the files written."""
    if audience not in AUDIENCES:
        raise UsageError(f"unknown audience {audience!r}; choose learners or candidates")
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} exists and is not a folder")
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise UsageError(f"{directory} is not empty; choose a new folder or pass --force to write into it")
    selected = select_exercises(exercises)
    (directory / "exercises").mkdir(parents=True, exist_ok=True)
    written = []
    for ex in selected:
        target = directory / "exercises" / ex.file
        target.write_text(ex.skeleton_path.read_text(encoding="utf-8"), encoding="utf-8")
        written.append(target)
    info = directory / "exercises" / "info.toml"
    info.write_text(metadata_for(selected), encoding="utf-8")
    doc = directory / "README.md"
    doc.write_text(readme(selected, audience=audience, install=install, title=title), encoding="utf-8")
    written = [doc, info, *written]
    if audience == "learners":
        ws = workspace.Workspace(directory.resolve())
        ws.save()
        written.append(ws.state_path)
    return written
