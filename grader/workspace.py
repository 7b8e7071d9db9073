"""A learner's workspace: a folder of exercise files plus a small progress file."""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from grader.catalog import Catalog, Exercise

STATE_FILE = ".attention-kit.json"


class WorkspaceError(Exception):
    """A workspace operation cannot proceed (the message says what to do)."""


@dataclass
class Workspace:
    root: Path
    passed: set[int] = field(default_factory=set)
    hint_level: dict[int, int] = field(default_factory=dict)

    @property
    def state_path(self) -> Path:
        return self.root / STATE_FILE

    def file_for(self, ex: Exercise) -> Path:
        return self.root / "exercises" / ex.file

    def save(self) -> None:
        data = {"version": 1, "passed": sorted(self.passed), "hint_level": {str(k): v for k, v in self.hint_level.items()}}
        self.state_path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    def record(self, ex: Exercise, passed: bool) -> None:
        (self.passed.add if passed else self.passed.discard)(ex.number)
        self.save()

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
                                 {int(k): int(v) for k, v in data.get("hint_level", {}).items()})
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
    ws = Workspace(root.resolve())
    ws.save()
    return ws


def reset(ws: Workspace, ex: Exercise) -> Path:
    target = ws.file_for(ex)
    shutil.copyfile(ex.skeleton_path, target)
    ws.record(ex, False)
    return target
