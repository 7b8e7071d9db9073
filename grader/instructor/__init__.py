"""Instructor and hiring workflows: handouts, batch grading, reports, Gradescope, GitHub Classroom, similarity."""
from __future__ import annotations

from grader.catalog import Exercise, UnknownExercise, load_catalog


class UsageError(Exception):
    """A mistake in what the instructor asked for (exit code 2)."""


def select_exercises(spec: str | None) -> list[Exercise]:
    """"1,3-5" or "self_attention,4" -> those exercises in catalog order; None or "" -> all of them."""
    catalog = load_catalog()
    if not spec:
        return list(catalog.exercises)
    wanted: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        first, dash, last = part.partition("-")
        try:
            if dash and first.strip().isdigit() and last.strip().isdigit():
                lo, hi = int(first), int(last)
                if lo > hi:
                    raise UsageError(f"empty exercise range {part!r}")
                wanted |= {catalog.get(n).number for n in range(lo, hi + 1)}
            else:
                wanted.add(catalog.get(part).number)
        except UnknownExercise as exc:
            raise UsageError(str(exc)) from None
    if not wanted:
        raise UsageError(f"no exercises in {spec!r}")
    return [ex for ex in catalog.exercises if ex.number in wanted]
