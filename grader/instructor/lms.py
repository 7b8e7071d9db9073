"""Exports a learning-management system imports: Canvas's gradebook CSV.

Canvas's Grades > Import takes the layout of its own Export: the columns Student, ID, SIS User ID,
SIS Login ID and Section, then one column per assignment, optionally preceded by a "Points Possible"
row. Canvas matches a student by ID (its user id), else SIS User ID, else SIS Login ID, so those come
from the roster (`canvas_id`; `sis_user_id`, else the institution's `id`; `sis_login_id`); a row with none
of them cannot be matched and is left out (and reported). A column
whose name is not an existing assignment becomes a new assignment with the Points Possible given.
"""
from __future__ import annotations

import csv
import io

from grader.instructor.rubric import fmt

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def _cell(value) -> str:
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _student(person: dict, submission: str) -> str:
    """Canvas shows "Last, First"; the roster's name as given, else the submission's name."""
    return person.get("name") or submission


def canvas_csv(rows, assignment: str) -> tuple[str, list[str]]:
    """(the CSV text, the submissions left out because the roster gives Canvas nothing to match them by)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(HEADER + [assignment])
    most = max((row.max_points for row in rows), default=0)
    writer.writerow(["    Points Possible", "", "", "", "", fmt(most)])
    left_out = []
    for row in sorted(rows, key=lambda r: r.submission):
        person = row.person or {}
        ids = [person.get("canvas_id", ""), person.get("sis_user_id") or person.get("id", ""),
               person.get("sis_login_id", "")]
        if not any(ids):
            left_out.append(row.submission)
            continue
        writer.writerow([_cell(_student(person, row.submission)), *map(_cell, ids), _cell(person.get("section", "")),
                         fmt(row.points)])
    return buf.getvalue(), left_out
