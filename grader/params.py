"""click parameter types for exercises ("3", "causal_attention", "1,3-5") and the CLI's exit-code exceptions."""
from __future__ import annotations

import click

from grader.catalog import Exercise, UnknownExercise, load_catalog


class Failure(click.ClickException):
    """A one-line error with exit code 2: a usage or environment problem the message explains."""

    exit_code = 2


class InternalFailure(click.ClickException):
    """The grader itself failed: exit code 3."""

    exit_code = 3


class WeakSandboxFailure(click.ClickException):
    """This machine cannot isolate a submission well enough, so nothing was graded: exit code 4."""

    exit_code = 4


def parse_exercises(spec: str) -> list[Exercise]:
    """ "1,3-5" or "self_attention,4" -> those exercises in catalog order. Raises ValueError."""
    catalog = load_catalog()
    wanted: set[int] = set()
    for part in (p.strip() for p in spec.split(",")):
        first, dash, last = part.partition("-")
        try:
            if dash and first.strip().isdigit() and last.strip().isdigit():
                if int(first) > int(last):
                    raise ValueError(f"empty exercise range {part!r}")
                wanted |= {catalog.get(n).number for n in range(int(first), int(last) + 1)}
            elif part:
                wanted.add(catalog.get(part).number)
        except UnknownExercise as exc:
            raise ValueError(str(exc)) from None
    if not wanted:
        raise ValueError(f"no exercises in {spec!r}")
    return [ex for ex in catalog.exercises if ex.number in wanted]


class ExerciseType(click.ParamType):
    """One exercise, by number or slug."""

    name = "exercise"

    def convert(self, value, param, ctx):
        if isinstance(value, Exercise):
            return value
        try:
            return load_catalog().get(value)
        except UnknownExercise as exc:
            self.fail(str(exc), param, ctx)


class ExerciseRangeType(click.ParamType):
    """Several exercises: numbers, slugs and ranges separated by commas ("1,3-5")."""

    name = "exercises"

    def convert(self, value, param, ctx):
        if isinstance(value, list):
            return value
        try:
            return parse_exercises(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


EXERCISE = ExerciseType()
EXERCISES = ExerciseRangeType()
