"""A learner's history across sessions and workspaces (`grade progress`), in the user's data directory.

One JSON file, keyed by pack and exercise slug: when an exercise was first graded, when it first
passed, the graded attempts until then, the days practised, and every mock interview's scorecard.
ATTENTION_KIT_DATA_DIR replaces the data directory (tests, a shared machine). A damaged or unwritable
file costs the history, never a grade: the problem comes back as one line to show as a warning.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ENV = "ATTENTION_KIT_DATA_DIR"
FILE = "history.json"
VERSION = 1


def data_dir() -> Path:
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    import platformdirs

    return Path(platformdirs.user_data_dir("attention-kit", appauthor=False))


def pack_key(pack) -> str:
    """"kit" for the kit's own exercises, else the pack folder's name (a course's pack moves between machines)."""
    return "kit" if pack.builtin else pack.root.name


def exercise_key(ex) -> str:
    return f"{pack_key(ex.pack)}/{ex.slug}"


def now() -> dt.datetime:
    return dt.datetime.now().astimezone().replace(microsecond=0)


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0)


def _date_ok(value) -> bool:
    try:
        return isinstance(value, str) and bool(dt.datetime.fromisoformat(value))
    except ValueError:
        return False


def _entry_ok(e) -> bool:
    return (isinstance(e, dict) and _int(e.get("number")) and _date_ok(e.get("first_seen"))
            and all(_int(e.get(k, 0)) for k in ("attempts", "grades"))
            and (e.get("passed_at") is None or _date_ok(e["passed_at"])) and _number(e.get("time_to_pass_s"))
            and isinstance(e.get("days", []), list) and all(_date_ok(d) for d in e.get("days", [])))


def _interview_ok(i) -> bool:
    return (isinstance(i, dict) and isinstance(i.get("exercise"), str) and _int(i.get("number"))
            and _date_ok(i.get("date")) and isinstance(i.get("passed"), bool) and _int(i.get("score"))
            and _int(i.get("attempts")) and _number(i.get("time_to_pass_s"))
            and isinstance(i.get("mistakes", []), list)
            and all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in i.get("mistakes", [])))


@dataclass
class History:
    exercises: dict[str, dict] = field(default_factory=dict)
    days: set[str] = field(default_factory=set)  # local dates (YYYY-MM-DD) with a graded attempt or an interview
    interviews: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"version": VERSION, "exercises": self.exercises, "days": sorted(self.days), "interviews": self.interviews}

    @classmethod
    def from_json(cls, data) -> "History":
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"not a version {VERSION} history")
        exercises, days, interviews = data.get("exercises", {}), data.get("days", []), data.get("interviews", [])
        if not (isinstance(exercises, dict) and all(_entry_ok(v) for v in exercises.values())
                and isinstance(days, list) and all(_date_ok(d) for d in days)
                and isinstance(interviews, list) and all(_interview_ok(i) for i in interviews)):
            raise ValueError("unexpected structure")
        return cls(dict(exercises), set(days), list(interviews))

    def grade(self, ex, *, passed: bool, started: bool, when: dt.datetime) -> bool:
        """Note one grade of ex; True when this is its first pass. A file not started yet is not an attempt."""
        entry = self.exercises.setdefault(exercise_key(ex), {"number": ex.number, "first_seen": when.isoformat(),
                                                             "attempts": 0, "grades": 0, "passed_at": None,
                                                             "time_to_pass_s": None, "days": []})
        entry["number"] = ex.number
        entry["grades"] = entry.get("grades", 0) + 1
        entry["last"] = when.isoformat()
        day = when.date().isoformat()
        if started:  # grading an untouched skeleton is no practice
            self.days.add(day)
            if day not in entry.setdefault("days", []):
                entry["days"].append(day)
        first_pass = False
        if entry.get("passed_at") is None:
            entry["attempts"] = entry.get("attempts", 0) + (1 if started else 0)
            if passed:
                entry["passed_at"] = when.isoformat()
                entry["time_to_pass_s"] = round((when - dt.datetime.fromisoformat(entry["first_seen"])).total_seconds())
                first_pass = True
        return first_pass

    def interview(self, ex, card: dict, *, when: dt.datetime) -> None:
        self.days.add(when.date().isoformat())
        self.interviews.append({"exercise": exercise_key(ex), "number": ex.number, "date": when.isoformat(), **card})


def streaks(days: set[str], today: dt.date) -> tuple[int, int]:
    """(current, longest) runs of consecutive days practised; the current run may end yesterday."""
    dates = sorted({dt.date.fromisoformat(d) for d in days})
    longest = run = 0
    previous = None
    for d in dates:
        run = run + 1 if previous is not None and (d - previous).days == 1 else 1
        longest = max(longest, run)
        previous = d
    current = run if previous is not None and (today - previous).days <= 1 else 0
    return current, longest


class Store:
    """The history file: read, changed and written back under a lock, so two terminals grading at once both count."""

    def __init__(self, folder: Path | None = None):
        self.path = (folder or data_dir()) / FILE
        self.damaged = False  # the last load found a file it could not read as a history

    def load(self) -> tuple[History, str | None]:
        """The history and a one-line problem (a damaged file is read as empty, and kept aside when next saved)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return History(), None
        except (OSError, UnicodeDecodeError) as exc:
            return History(), f"progress history not read: {self.path}: {getattr(exc, 'strerror', None) or exc}"
        try:
            return History.from_json(json.loads(text)), None
        except (ValueError, TypeError, KeyError) as exc:
            self.damaged = True
            return History(), f"progress history {self.path} is damaged ({exc}); a new one starts (the old one is kept)"

    def update(self, change) -> tuple[object, str | None]:
        """change(history) under the lock, then save; (change's result, a one-line problem or None)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._locked():
                history, problem = self.load()
                result = change(history)
                if self.damaged:
                    os.replace(self.path, self.path.with_name(f"{FILE}.damaged-{now():%Y%m%d-%H%M%S}"))
                self._write(history)
                return result, problem
        except OSError as exc:
            where = exc.filename or self.path
            return None, f"progress history not saved: {where}: {exc.strerror or exc}"

    @contextlib.contextmanager
    def _locked(self):
        import fcntl

        with open(self.path.with_name(FILE + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def _write(self, history: History) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".history-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(history.to_json(), f, indent=1, ensure_ascii=False)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def record_grade(ex, verdict) -> tuple[bool, str | None]:
    """Note a learner's grade of ex: (first pass, a one-line problem or None)."""
    first, problem = Store().update(lambda h: h.grade(ex, passed=verdict.passed,
                                                       started=verdict.state != "not_started", when=now()))
    return bool(first), problem


def record_interview(ex, card: dict) -> str | None:
    return Store().update(lambda h: h.interview(ex, card, when=now()))[1]


def duration(seconds) -> str:
    """A span for people: "42 s", "7 min", "1 h 05 min", "3 days"."""
    seconds = int(seconds or 0)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 86400} days"


def summary(history: History, catalog, today: dt.date) -> dict:
    """What `grade progress` shows (and prints with --json): per exercise of the catalog, the streaks, interviews."""
    rows = []
    for ex in catalog.exercises:
        entry = history.exercises.get(exercise_key(ex))
        interviews = [i for i in history.interviews if i.get("exercise") == exercise_key(ex)]
        best = max((i.get("score", 0) for i in interviews), default=None)
        rows.append({"exercise": ex.number, "slug": ex.slug, "key": exercise_key(ex),
                     "first_seen": entry and entry.get("first_seen"), "passed_at": entry and entry.get("passed_at"),
                     "time_to_pass_s": entry and entry.get("time_to_pass_s"),
                     "attempts": entry.get("attempts", 0) if entry else 0, "grades": entry.get("grades", 0) if entry else 0,
                     "days_practised": len(entry.get("days", [])) if entry else 0,
                     "interviews": len(interviews), "best_interview_score": best})
    current, longest = streaks(history.days, today)
    keys = {exercise_key(ex) for ex in catalog.exercises}
    return {"schema_version": 1, "exercises": rows, "days_practised": len(history.days),
            "streak": {"current": current, "longest": longest},
            "interviews": [i for i in history.interviews if i.get("exercise") in keys]}
