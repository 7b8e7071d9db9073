"""Course weights and manual overrides: what each exercise is worth, and what a person decided.

A weight is the points an exercise is worth to the course: points = weight × score / max_score (the
share of its checks that passed), rounded half up to two decimals; totals add the rounded points.
Without weights each exercise is worth its checks (points = score). An override sets an exercise's
points or adds a delta to them, with a comment. Weights and overrides are applied whenever a gradebook
is written (from fresh grades, the batch cache or `grade merge`) and never cached, so a re-run keeps them.
"""
from __future__ import annotations

import csv
import math
import tomllib
import unicodedata
from dataclasses import asdict, dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from grader.catalog import load_catalog
from grader.instructor import UsageError

ROUNDING = "points = weight × passed/total checks, rounded half up to 2 decimals; totals add the rounded points"
OVERRIDE_KEYS = ("submission", "exercise", "points", "delta", "comment")


@dataclass(frozen=True)
class Override:
    submission: str
    exercise: int
    points: float | None  # the exercise's points, replacing the computed ones
    delta: float | None  # or added to them
    comment: str = ""
    where: str = ""  # "overrides.csv line 3", for messages

    def describe(self, before: float) -> str:
        change = f"set to {fmt(self.points)}" if self.points is not None else f"{'+' if self.delta >= 0 else ''}{fmt(self.delta)}"
        return f"ex{self.exercise}: {change} (was {fmt(before)}){': ' + self.comment if self.comment else ''}"


@dataclass
class Mark:
    """One exercise's points in the gradebook."""
    points: float  # after the override, if any
    max_points: float
    weighted: float  # before the override
    override: Override | None = None

    def to_dict(self) -> dict:
        o = self.override
        return {"points": self.points, "max_points": self.max_points,
                "override": None if o is None else {"points": o.points, "delta": o.delta, "comment": o.comment,
                                                     "before": self.weighted}}


@dataclass
class Rubric:
    weights: dict[int, float] = field(default_factory=dict)  # exercise number -> points it is worth
    overrides: list[Override] = field(default_factory=list)

    def check(self, numbers: list[int]) -> None:
        """Weights must cover exactly the graded exercises (a forgotten one would count its raw checks)."""
        extra = sorted(set(self.weights) - set(numbers))
        if extra:
            raise UsageError(f"a weight is given for exercise {', '.join(map(str, extra))}, which this batch does not "
                             f"grade (exercises {', '.join(map(str, numbers))})")
        missing = [n for n in numbers if n not in self.weights]
        if self.weights and missing:
            raise UsageError(f"no weight for exercise {', '.join(map(str, missing))}: give every graded exercise "
                             f"one (0 leaves it out of the total)")

    def mark(self, result, override: Override | None = None) -> Mark:
        weight = self.weights.get(result.number)
        if weight is None:
            weighted, most = float(result.score), float(result.max_score)
        else:
            share = Decimal(result.score) / Decimal(result.max_score) if result.max_score else Decimal(0)
            weighted, most = _round(Decimal(str(weight)) * share), weight
        if override is None:
            return Mark(weighted, most, weighted)
        points = override.points if override.points is not None else weighted + override.delta
        return Mark(_round(Decimal(str(points))), most, weighted, override)

    def to_dict(self) -> dict:
        return {"weights": {str(n): w for n, w in sorted(self.weights.items())}, "rounding": ROUNDING,
                "overrides": [asdict(o) for o in self.overrides]}

    @classmethod
    def from_dict(cls, data: dict) -> "Rubric":
        return cls({int(n): float(w) for n, w in data.get("weights", {}).items()},
                   [Override(**o) for o in data.get("overrides", [])])


def _round(value: Decimal) -> float:
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def fmt(value: float) -> str:
    """12.0 -> "12", 12.5 -> "12.5", 3.25 -> "3.25"."""
    return str(int(value)) if value == int(value) else f"{value:.2f}".rstrip("0")


def same_name(name: str) -> str:
    return unicodedata.normalize("NFC", name)


# -- reading --------------------------------------------------------------------------------------------------
def _number(text, what: str) -> float:
    try:
        value = float(str(text).strip())
    except ValueError:
        raise UsageError(f"{what}: {str(text)[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise UsageError(f"{what}: {text!r} is not a finite number")
    return value


def _exercise(key, what: str) -> int:
    from grader.catalog import UnknownExercise

    try:
        return load_catalog().get(str(key)).number
    except UnknownExercise:
        raise UsageError(f"{what}: unknown exercise {str(key)[:40]!r}") from None


def parse_weights(spec: str, what: str = "--weights") -> dict[int, float]:
    """"1=10,3=20" (numbers or slugs) -> {1: 10.0, 3: 20.0}."""
    weights: dict[int, float] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise UsageError(f"{what} takes EXERCISE=POINTS pairs, e.g. 1=10,3=20, not {item!r}")
        weights[_exercise(key.strip(), what)] = _weight(value, f"{what} {key.strip()}")
    if not weights:
        raise UsageError(f"{what} takes EXERCISE=POINTS pairs, e.g. 1=10,3=20")
    return weights


def _weight(value, what: str) -> float:
    if isinstance(value, bool):
        raise UsageError(f"{what}: {value!r} is not a number")
    weight = _number(value, what)
    if weight < 0:
        raise UsageError(f"{what}: a weight cannot be negative ({fmt(weight)})")
    return weight


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path} is not valid TOML: {exc}") from None


def read_rubric(path: Path) -> dict[int, float]:
    """The [weights] table of a rubric file: exercise number or slug = points."""
    doc = _toml(path)
    unknown = sorted(set(doc) - {"weights"})
    if unknown or not isinstance(doc.get("weights"), dict):
        raise UsageError(f"{path}: a rubric holds one [weights] table (exercise = points)"
                         + (f"; unknown key {unknown[0]!r}" if unknown else ""))
    return {_exercise(k, f"{path} [weights]"): _weight(v, f"{path} [weights] {k}") for k, v in doc["weights"].items()}


def read_overrides(path: Path) -> list[Override]:
    """An overrides file: TOML ([[override]] tables) or CSV (a header naming the columns), one per exercise."""
    path = Path(path)
    if path.suffix.lower() == ".toml":
        doc = _toml(path)
        if set(doc) - {"override"} or not isinstance(doc.get("override", []), list):
            raise UsageError(f"{path}: an overrides file holds [[override]] tables ({', '.join(OVERRIDE_KEYS)})")
        records = [(f"{path} override {i}", r) for i, r in enumerate(doc.get("override", []), start=1)]
    elif path.suffix.lower() == ".csv":
        records = _csv_records(path)
    else:
        raise UsageError(f"--overrides takes a .toml or .csv file, not {path.name!r}")
    overrides, seen = [], {}
    for where, record in records:
        o = _override(record, where)
        key = (same_name(o.submission), o.exercise)
        if key in seen:
            raise UsageError(f"{where}: {o.submission} exercise {o.exercise} is overridden twice (also {seen[key]})")
        seen[key] = where
        overrides.append(o)
    return overrides


def _csv_records(path: Path) -> list[tuple[str, dict]]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            head = [h.strip().lower() for h in reader.fieldnames or []]
            if "submission" not in head or "exercise" not in head or not {"points", "delta"} & set(head):
                raise UsageError(f"{path}: the first line names the columns: submission, exercise, points or delta, "
                                 f"comment")
            reader.fieldnames = head
            return [(f"{path} line {reader.line_num}", {k: v for k, v in r.items() if k is not None and v not in ("", None)})
                    for r in reader]
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(f"{path} is not a UTF-8 CSV file: {exc}") from None


def _override(record, where: str) -> Override:
    if not isinstance(record, dict):
        raise UsageError(f"{where}: not a table")
    unknown = sorted(set(record) - set(OVERRIDE_KEYS))
    if unknown:
        raise UsageError(f"{where}: unknown column {unknown[0]!r} (expected {', '.join(OVERRIDE_KEYS)})")
    if not str(record.get("submission", "")).strip() or "exercise" not in record:
        raise UsageError(f"{where}: an override names a submission and an exercise")
    if ("points" in record) == ("delta" in record):
        raise UsageError(f"{where}: give either points (the exercise's new points) or delta (added to them)")
    points = _number(record["points"], f"{where} points") if "points" in record else None
    delta = _number(record["delta"], f"{where} delta") if "delta" in record else None
    return Override(str(record["submission"]).strip(), _exercise(record["exercise"], where), points, delta,
                    " ".join(str(record.get("comment", "")).split()), where)


def load_rubric(*, weights: str | None = None, rubric: Path | None = None, overrides: Path | None = None) -> Rubric | None:
    """The rubric the options describe (--weights wins over the rubric file's entries), or None for none."""
    if weights is None and rubric is None and overrides is None:
        return None
    table = read_rubric(rubric) if rubric is not None else {}
    if weights is not None:
        table.update(parse_weights(weights))
    return Rubric(table, read_overrides(overrides) if overrides is not None else [])


# -- applying -------------------------------------------------------------------------------------------------
def apply(rubric: Rubric | None, rows, numbers: list[int], elsewhere: set[str] = frozenset()) -> list[str]:
    """Set row.marks on every row; returns the overrides that name no submission or exercise of the batch
    (elsewhere: names graded in another shard, whose overrides are applied there)."""
    rubric = rubric or Rubric()
    by_key = {(same_name(o.submission), o.exercise): o for o in rubric.overrides}
    for row in rows:
        row.marks = {e.number: rubric.mark(e, by_key.pop((same_name(row.submission), e.number), None))
                     for e in row.exercises}
    present = {same_name(r.submission) for r in rows} | {same_name(n) for n in elsewhere}
    unapplied = []
    for (name, number), o in by_key.items():
        if name in present and number not in numbers:
            unapplied.append(f"{o.where}: exercise {number} is not graded in this batch; override not applied")
        elif name not in present:
            unapplied.append(f"{o.where}: no submission named {o.submission!r}; override not applied")
    return unapplied
