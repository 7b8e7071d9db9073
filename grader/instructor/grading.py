"""Grades one submission's exercise files into plain, JSON-able results (batch, Gradescope)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

from grader.catalog import load_catalog

STATUSES = ("passed", "failed", "not_started", "missing", "rejected", "error")


@dataclass
class ExerciseResult:
    number: int
    slug: str
    status: str  # one of STATUSES
    score: int
    max_score: int
    diagnoses: list[str] = field(default_factory=list)  # diagnosis ids, most likely first
    note: str = ""  # why a file is missing, rejected or was not graded
    file: str = ""  # where the file sits inside the submission
    verdict: dict | None = None  # Verdict.to_json() when the file was graded
    attention: dict | None = None  # heat-map weights for a failing verdict (see evidence.py)
    provenance: dict = field(default_factory=dict)  # what graded it (grader/provenance.py); kept by merge

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "ExerciseResult":
        return cls(**data)


@cache
def max_points(number: int) -> int:
    """The most an exercise can score (its checks' points, counted without grading anything)."""
    from grader.runner import max_score

    return max_score(load_catalog().get(number))


def grade_file(number: int, path: Path, *, timeout: float, located: str = "") -> ExerciseResult:
    from grader.runner import grade
    from grader.sandbox import Limits

    ex = load_catalog().get(number)
    try:
        v = grade(exercise=ex, path=path, device="cpu", limits=Limits(time_s=timeout), capture_attention=True)
    except Exception as exc:  # a grader failure on this file; the other files and submissions go on
        return ExerciseResult(number, ex.slug, "error", 0, max_points(number),
                              note=f"internal grader error: {type(exc).__name__}: {exc}"[:500], file=located)
    status = "passed" if v.passed else ("not_started" if v.state == "not_started" else "failed")
    return ExerciseResult(number, ex.slug, status, v.score, v.max_score, [d.id for d in v.diagnoses],
                          file=located, verdict=v.to_json(), attention=v.attention, provenance=v.provenance)


def grade_submission(*, numbers: list[int], files: dict[int, str], located: dict[int, str],
                     rejected: dict[int, str], timeout: float, near: dict[int, str] | None = None
                     ) -> list[ExerciseResult]:
    """Each exercise in numbers: graded, or scored 0 as missing or rejected (near: "did you mean" paths)."""
    near = near or {}
    out = []
    for number in numbers:
        ex = load_catalog().get(number)
        if number in files:
            out.append(grade_file(number, Path(files[number]), timeout=timeout, located=located.get(number, "")))
        elif number in rejected:
            out.append(ExerciseResult(number, ex.slug, "rejected", 0, max_points(number), note=rejected[number],
                                      file=located.get(number, "")))
        else:
            note = f"no {ex.file} in the submission (looked at the top and one folder down)"
            if number in near:
                note += f"; did you mean {near[number]}? (not graded under that name)"
            out.append(ExerciseResult(number, ex.slug, "missing", 0, max_points(number), note=note))
    return out
