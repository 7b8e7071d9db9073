"""A course roster: submission names mapped to the people behind them (ID, email, name, LMS identifiers).

The roster is a CSV file whose header names its columns: `submission` (the folder, zip or flat-download name)
and any of `id` (the institution's student ID), `email`, `name`, `canvas_id` (Canvas's user ID), `sis_user_id`,
`sis_login_id`, `section`. A submission matches its entry by
name (any Unicode normalisation), else by a loose key (case, accents and punctuation ignored) when exactly one
entry has it. What does not match is noted on the row; a roster entry without a submission gets a row of its
own with every exercise missing, so the gradebook (and the LMS) has a zero rather than a gap.
"""
from __future__ import annotations

import csv
import re
import unicodedata
from pathlib import Path

from grader.instructor import UsageError

FIELDS = ("id", "email", "name", "canvas_id", "sis_user_id", "sis_login_id", "section")
SHOWN = ("id", "email", "name")  # the gradebook's columns


def exact(name: str) -> str:
    return unicodedata.normalize("NFC", name)


def loose(name: str) -> str:
    """"José  Ñúñez" and "jose_nunez" -> "josenunez"."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "", plain.casefold())


def read_roster(path: Path) -> dict[str, dict]:
    """{submission name (NFC): {field: value}}; a missing column or a name given twice is a usage error."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            head = [(h or "").strip().lower().replace(" ", "_") for h in reader.fieldnames or []]
            if "submission" not in head or not set(FIELDS) & set(head):
                raise UsageError(f"{path}: the first line names the columns: submission and any of {', '.join(FIELDS)}")
            reader.fieldnames = head
            roster: dict[str, dict] = {}
            for record in reader:
                name = (record.get("submission") or "").strip()
                if not name:
                    raise UsageError(f"{path} line {reader.line_num}: no submission name")
                if exact(name) in roster:
                    raise UsageError(f"{path} line {reader.line_num}: {name!r} is in the roster twice")
                roster[exact(name)] = {k: (record.get(k) or "").strip() for k in FIELDS}
            return roster
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(f"{path} is not a UTF-8 CSV file: {exc}") from None


def match(names: list[str], roster: dict[str, dict]) -> tuple[dict[str, str], dict[str, str]]:
    """({submission: roster key}, {submission: note}) for the given submission names."""
    found = {name: exact(name) for name in names if exact(name) in roster}
    by_loose: dict[str, list[str]] = {}
    for key in roster:
        if key not in found.values():
            by_loose.setdefault(loose(key), []).append(key)
    wanted: dict[str, list[str]] = {}
    for name in names:
        if name not in found:
            wanted.setdefault(loose(name), []).append(name)
    notes = {}
    for name in names:
        if name in found:
            continue
        keys, rivals = by_loose.get(loose(name), []), wanted[loose(name)]
        if len(keys) == 1 and len(rivals) == 1:
            found[name] = keys[0]
            notes[name] = f"matched the roster's {keys[0]!r} ignoring case, accents and punctuation"
        elif keys:
            notes[name] = f"not in the roster as written; it could be {' or '.join(map(repr, keys))}"
        else:
            notes[name] = "not in the roster"
    return found, notes
