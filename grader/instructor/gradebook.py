"""The JSON gradebook, and which shard of a cohort a submission belongs to (`grade batch --shard I/N`).

A submission belongs to shard 1 + (the first 8 bytes of sha256(its name)) mod N: the same slice on
every machine and every run, whatever order the folder lists in, and adding a submission never
moves the others. Each shard writes a partial gradebook (the JSON gradebook plus "shard");
grader/instructor/merge.py puts them back together.
"""
from __future__ import annotations

import hashlib
from grader import __version__

SCHEMA = 1


def in_shard(name: str, shard: tuple[int, int]) -> bool:
    index, count = shard
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big") % count == index - 1


def produced_by(row) -> dict:
    """What graded the row (kit and pack digest, torch, Python, budget, sandbox tier), from its verdicts."""
    found = [e.provenance for e in row.exercises if e.provenance]
    ran = [p for p in found if not p.get("sandbox", "").startswith("none")]
    first = (ran or found or [{}])[0]
    return {k: v for k, v in first.items() if k != "source_sha256"}


def produced_by_text(row) -> str:
    p = produced_by(row)
    if not p:
        return ""
    return (f"kit {p['kit']}; torch {p['torch']}; python {p['python']}; cpu budget {p['budget']['cpu_s']:g} s; "
            f"{p['device']}; sandbox {p['sandbox']}")


def number(value: float) -> int | float:
    """12.0 -> 12 in JSON; 12.5 stays."""
    return int(value) if value == int(value) else value


def row_notes(row) -> list[str]:
    """Everything worth a look about a row's files: the submission's own notes, then each exercise's
    (missing and why, did you mean, refused and why)."""
    return list(row.notes) + [f"ex{e.number}: {e.note}" for e in row.exercises if e.note]


def row_overrides(row) -> list[str]:
    return [m.override.describe(m.weighted) for m in row.marks.values() if m.override is not None]


def gradebook_doc(rows, numbers: list[int], shard: tuple[int, int] | None = None, rubric=None,
                  unapplied: list[str] = ()) -> dict:
    """The JSON gradebook of batch Rows (by submission name); a partial one names its shard.

    total/max_total are the course's points (weights and overrides applied), raw_total/raw_max_total the checks.
    """
    from grader.instructor.rubric import Rubric

    doc = {"schema_version": SCHEMA, "kit": __version__, "exercises": numbers, "rows": []}
    if shard is not None:
        doc["shard"] = {"index": shard[0], "count": shard[1]}
    doc["rubric"] = {**(rubric or Rubric()).to_dict(), "unapplied": list(unapplied)}
    for row in sorted(rows, key=lambda r: r.submission):
        marks = {n: m.to_dict() for n, m in row.marks.items()}
        doc["rows"].append({
            "submission": row.submission, "person": row.person,
            "total": number(row.points), "max_total": number(row.max_points),
            "raw_total": row.total, "raw_max_total": row.max_total, "notes": row_notes(row),
            "overrides": row_overrides(row), "problem": row.problem, "report": row.report,
            "produced_by": produced_by(row),
            "exercises": [{"number": e.number, "slug": e.slug, "status": e.status, "score": e.score,
                           "max_score": e.max_score, **_points(marks.get(e.number), e), "diagnoses": e.diagnoses,
                           "note": e.note, "file": e.file, "source_sha256": e.provenance.get("source_sha256", "")}
                          for e in row.exercises],
        })
    return doc


def _points(mark: dict | None, e) -> dict:
    if mark is None:
        return {"points": e.score, "max_points": e.max_score, "override": None}
    return {**mark, "points": number(mark["points"]), "max_points": number(mark["max_points"])}
