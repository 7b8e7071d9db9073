"""Instructor and hiring workflows: handouts, batch grading, reports, Gradescope, GitHub Classroom, similarity."""
from __future__ import annotations

from grader.catalog import Exercise, load_catalog
from grader.params import parse_exercises


class UsageError(Exception):
    """A mistake in what the instructor asked for (exit code 2)."""


def select_exercises(spec: str | None) -> list[Exercise]:
    """"1,3-5" or "self_attention,4" -> those exercises in catalog order; None or "" -> all of them."""
    if not spec:
        return list(load_catalog().exercises)
    try:
        return parse_exercises(spec)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
