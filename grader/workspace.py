"""A learner's workspace: a folder of exercise files plus a small progress file."""
from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from grader.catalog import Catalog, Exercise
from grader.history import exercise_key

STATE_FILE = ".attention-kit.json"


class WorkspaceError(Exception):
    """A workspace operation cannot proceed (the message says what to do)."""


@dataclass
class Workspace:
    root: Path
    passed: set[int] = field(default_factory=set)  # ever passed: keeps the solution unlocked
    hint_level: dict[int, int] = field(default_factory=dict)
    failing: set[int] = field(default_factory=set)  # passed once, failing since the last grade
    diagnosis: dict[int, dict] = field(default_factory=dict)  # the last grade's named mistake: {"id", "shown"}
    last: int | None = None  # the exercise graded last here (grade exercise, grade all, watch)
    pack: str | None = None  # the pack the workspace was made from (`grade init --pack`); None: the kit's exercises

    @property
    def state_path(self) -> Path:
        return self.root / STATE_FILE

    def file_for(self, ex: Exercise) -> Path:
        return self.root / "exercises" / ex.file

    def save(self) -> None:
        data = {"version": 1, "passed": sorted(self.passed), "hint_level": {str(k): v for k, v in self.hint_level.items()},
                "failing": sorted(self.failing), "diagnosis": {str(k): v for k, v in self.diagnosis.items()}}
        if self.last is not None:
            data["last"] = self.last
        if self.pack is not None:
            data["pack"] = self.pack
        self.state_path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    def record(self, ex: Exercise, passed: bool) -> None:
        """A grade's outcome. Passing is never taken back (the solution stays unlocked); a later failure is noted."""
        self.last = ex.number
        if passed:
            self.passed.add(ex.number)
            self.failing.discard(ex.number)
        elif ex.number in self.passed:
            self.failing.add(ex.number)
        self.save()

    def status(self, ex: Exercise) -> str:
        if ex.number in self.passed:
            return "passed, failing now" if ex.number in self.failing else "passed"
        path = self.file_for(ex)
        started = path.exists() and path.read_text(encoding="utf-8", errors="replace").split() != \
            ex.skeleton_path.read_text(encoding="utf-8").split()
        return "in progress" if started else "not started"

    def current(self, catalog: Catalog) -> Exercise:
        """The exercise being worked on: the one graded last here while it is not passed yet, else the first
        not passed (as watch starts), else the one graded last (all passed). `grade hint`, `explain`,
        `solution` and `watch` without a number use it."""
        last = next((e for e in catalog.exercises if e.number == self.last), None)
        if last is not None and last.number not in self.passed:
            return last
        return next((e for e in catalog.exercises if e.number not in self.passed), last or catalog.exercises[0])

    def next_exercise(self, catalog: Catalog, after: Exercise) -> Exercise | None:
        """The first exercise not passed after `after`, else the first not passed before it; None when every
        exercise is passed. What watch's n goes to and a passing `grade exercise` names as next."""
        pending = [e for e in catalog.exercises if e.number not in self.passed and e.number != after.number]
        return next((e for e in pending if e.number > after.number), pending[0] if pending else None)

    def owns(self, path: Path, ex: Exercise) -> bool:
        """Whether path is this workspace's file for ex (only then does grading it count as progress)."""
        return Path(path).resolve() == self.file_for(ex).resolve()


def find(start: Path | None = None) -> Workspace | None:
    """The workspace containing start (default: the current directory), or None."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        state = folder / STATE_FILE
        if state.is_file():
            try:
                data = json.loads(state.read_text(encoding="utf-8"))
                return Workspace(folder, set(data.get("passed", [])),
                                 {int(k): int(v) for k, v in data.get("hint_level", {}).items()},
                                 set(data.get("failing", [])),
                                 {int(k): dict(v) for k, v in data.get("diagnosis", {}).items()},
                                 int(data["last"]) if data.get("last") is not None else None,
                                 str(data["pack"]) if data.get("pack") is not None else None)
            except (ValueError, TypeError, AttributeError):
                raise WorkspaceError(f"{state} is damaged; delete it to start the progress record afresh") from None
    return None


def create(root: Path, catalog: Catalog) -> Workspace:
    root = Path(root)
    if (root / STATE_FILE).exists():
        raise WorkspaceError(f"{root} is already a workspace; cd into it and run `grade list`")
    if root.exists() and any(root.iterdir()):
        raise WorkspaceError(f"{root} exists and is not empty; choose a new folder name")
    (root / "exercises").mkdir(parents=True, exist_ok=True)
    for ex in catalog.exercises:
        shutil.copyfile(ex.skeleton_path, root / "exercises" / ex.file)
    ws = Workspace(root.resolve(), pack=None if catalog.pack.builtin else str(catalog.pack.root))
    ws.save()
    return ws


BACKUPS = ".attention-kit-backups"


def needs_backup(ws: Workspace, ex: Exercise) -> bool:
    """Whether a reset would lose work: the file exists and differs from the skeleton."""
    target = ws.file_for(ex)
    return target.is_file() and target.read_bytes() != ex.skeleton_path.read_bytes()


def reset(ws: Workspace, ex: Exercise) -> tuple[Path, Path | None]:
    """Restore the skeleton, first copying the learner's file (when it holds work) to
    BACKUPS/<stem>.<date-time>.py in the workspace; returns (restored file, backup or None).
    A reset is a fresh start, so this (only this) forgets that ex was passed."""
    import time

    target = ws.file_for(ex)
    backup = None
    if needs_backup(ws, ex):
        folder = ws.root / BACKUPS
        folder.mkdir(exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = folder / f"{target.stem}.{stamp}{target.suffix}"
        n = 1
        while backup.exists():  # two resets within a second
            n += 1
            backup = folder / f"{target.stem}.{stamp}-{n}{target.suffix}"
        shutil.copyfile(target, backup)
    shutil.copyfile(ex.skeleton_path, target)
    ws.passed.discard(ex.number)
    ws.failing.discard(ex.number)
    ws.save()
    return target, backup


class Hints:
    """How far the learner has read the hints of each exercise: in the workspace, else in the user's cache dir."""

    def __init__(self, ws: Workspace | None):
        self.ws = ws
        self.path = None if ws is not None else cache_dir() / "hints.json"
        self.levels, self.diagnosis = (ws.hint_level, ws.diagnosis) if ws is not None else self._load()
        # a workspace holds one pack's exercises, so their numbers; the user's cache serves every pack
        self.key = (lambda ex: ex.number) if ws is not None else exercise_key

    def _load(self) -> tuple[dict[str, int], dict[str, dict]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") != 2:  # version 1 was keyed by number alone, which packs share: start afresh
                return {}, {}
            return ({str(k): int(v) for k, v in data.get("levels", {}).items()},
                    {str(k): dict(v) for k, v in data.get("diagnosis", {}).items()})
        except (OSError, ValueError, TypeError, AttributeError):
            return {}, {}

    def seen(self, ex: Exercise) -> int:
        return self.levels.get(self.key(ex), 0)

    def next(self, ex: Exercise) -> int:
        return min(self.seen(ex) + 1, len(ex.hints))

    def mark(self, ex: Exercise, level: int) -> None:
        """The learner has now seen hints up to level (a lower level never lowers it)."""
        if level <= self.seen(ex):
            return
        self.levels[self.key(ex)] = level
        self._save()

    def note(self, ex: Exercise, mistake: str | None) -> None:
        """The last grade's named mistake (None: passed, or nothing named): `grade hint` answers it first."""
        if mistake is None:
            if self.diagnosis.pop(self.key(ex), None) is not None:
                self._save()
        elif self.diagnosis.get(self.key(ex), {}).get("id") != mistake:
            self.diagnosis[self.key(ex)] = {"id": mistake, "shown": False}
            self._save()

    def pending(self, ex: Exercise) -> str | None:
        """A named mistake whose hint the learner has not seen yet."""
        d = self.diagnosis.get(self.key(ex))
        return d["id"] if d and not d.get("shown") else None

    def shown(self, ex: Exercise) -> None:
        self.diagnosis[self.key(ex)]["shown"] = True
        self._save()

    def _save(self) -> None:
        if self.ws is not None:
            self.ws.save()
            return
        try:  # outside a workspace the record is a convenience: a read-only cache never stops a hint
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({"version": 2, "levels": {str(k): v for k, v in self.levels.items()},
                                             "diagnosis": {str(k): v for k, v in self.diagnosis.items()}}),
                                 encoding="utf-8")
        except OSError:
            pass


GENERIC = ("not_started", "wrong_output", "nan_output")  # their hint is the exercise's own ladder


def named_mistake(verdict) -> str | None:
    """The first diagnosis of a failing verdict when it names a specific mistake (its hint answers it)."""
    if verdict.passed or not verdict.diagnoses or verdict.diagnoses[0].id in GENERIC:
        return None
    return verdict.diagnoses[0].id


def remember(ws: Workspace | None, ex: Exercise, verdict) -> None:
    """What a grade leaves behind: passed or not in ws (None: a file outside a workspace), hint 1 as seen when the
    not-started screen showed it, and the named mistake `grade hint` answers first. OSError if ws cannot be saved."""
    if ws is not None:
        ws.record(ex, verdict.passed)
    hints = Hints(ws)
    if verdict.state == "not_started":
        hints.mark(ex, 1)
    hints.note(ex, named_mistake(verdict))


def cache_dir() -> Path:
    """Where hint levels outside a workspace and the explainers' numbers are kept (ATTENTION_KIT_CACHE_DIR moves it)."""
    if os.environ.get("ATTENTION_KIT_CACHE_DIR"):
        return Path(os.environ["ATTENTION_KIT_CACHE_DIR"])
    import platformdirs

    return Path(platformdirs.user_cache_dir("attention-kit", appauthor=False))


STAGE_MARK = re.compile(r"\s*;?\s*\bstage:\s*[a-z_]+(?:\s*,\s*[a-z_]+)*")  # localize/reference.py's STAGE_COMMENT, with its lead-in


def solution_text(ex: Exercise) -> str:
    """The reference as a learner reads it: the grader's `# stage: ...` markers (for localizing a mistake)
    taken out of its comments; a comment that held only a marker goes, and the code is unchanged."""
    import io
    import tokenize

    source = ex.solution_path.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    try:
        comments = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return source
    for tok in reversed(comments):  # one comment per line at most: columns stay valid
        if not STAGE_MARK.search(tok.string):
            continue
        row, col = tok.start[0] - 1, tok.start[1]
        line = lines[row]
        kept = STAGE_MARK.sub("", tok.string).rstrip()
        end = line[col + len(tok.string):]
        lines[row] = (line[:col] + kept if kept.strip("# ") else line[:col].rstrip()) + end
    return "".join(lines)
