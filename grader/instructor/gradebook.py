"""The instructor's data, in one place: the gradebook (its rows, CSV and JSON, shards, `grade merge`) and the
result cache of `grade batch` (grader/instructor/batch.py grades; what it keeps and writes is shaped here).

The JSON gradebook is typed with msgspec (GradebookJSON, published as docs/schemas/gradebook.schema.json:
`python -m grader.instructor.gradebook docs/schemas` writes it, a test keeps it current), and so is each entry of
the cache (CacheEntry; the whole file is CacheJSON, published as docs/schemas/cache.schema.json). A part read
back by `grade merge` that does not have the shape is a UsageError (exit 2) of one line naming the file and the
key; a cache entry that does not is graded again, with a warning saying why.

A submission belongs to shard 1 + (the first 8 bytes of sha256(its name)) mod N: the same slice on every machine
and every run, whatever order the folder lists in, and adding a submission never moves the others. Each shard
writes a partial gradebook (the JSON gradebook plus "shard"); merge() puts them back together: exactly the
shards 1..N, once each, graded alike, or a usage error.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from grader import __version__, provenance
from grader.instructor import UsageError
from grader.instructor.grading import ExerciseResult
from grader.instructor.roster import SHOWN
from grader.sandbox.textsafe import clean
from grader.schema import Provenance, SchemaError, describe

SCHEMA = 1  # the gradebook's schema_version
CACHE_SCHEMA = 1
GRADEBOOK_SUFFIXES = (".csv", ".json")
PART_RECIPE = "`grade batch SUBS --shard I/N -o part_I.json` writes"


@dataclass
class Row:
    """One submission's line of the gradebook."""
    submission: str
    digest: str
    exercises: list[ExerciseResult]
    problem: str = ""  # the submission as a whole could not be read
    report: str = ""  # path of its HTML report
    cached: bool = False  # taken from the cache, not graded in this run
    duration_s: float = 0.0
    marks: dict = field(default_factory=dict)  # exercise number -> rubric.Mark (weights, overrides); never cached
    notes: list[str] = field(default_factory=list)  # what the grader noticed about the submission's files
    person: dict | None = None  # the roster's entry ({} when a roster was given and has none)

    @property
    def total(self) -> int:
        """The raw total: checks passed."""
        return sum(e.score for e in self.exercises)

    @property
    def max_total(self) -> int:
        return sum(e.max_score for e in self.exercises)

    @property
    def points(self) -> float:
        """The total the course gives: weighted, overrides applied (the raw total before rubric.apply)."""
        return round(sum(self.marks[e.number].points for e in self.exercises), 2) if self.marks else self.total

    @property
    def max_points(self) -> float:
        return round(sum(self.marks[e.number].max_points for e in self.exercises), 2) if self.marks else self.max_total

    def to_dict(self) -> dict:
        """The row as the cache keeps it (CacheEntry)."""
        return {"submission": self.submission, "total": self.total, "max_total": self.max_total,
                "problem": self.problem, "report": self.report, "digest": self.digest,
                "duration_s": round(self.duration_s, 3), "exercises": [e.to_dict() for e in self.exercises]}

    @classmethod
    def from_dict(cls, data: dict) -> "Row":
        """A cache entry's row (msgspec.ValidationError when it does not have CacheEntry's shape)."""
        return msgspec.convert(data, CacheEntry, strict=True).row()


# -- the JSON gradebook's shape (schema_version 1; fields are only ever added) ------------------------------------
Status = Literal["passed", "failed", "not_started", "missing", "rejected", "error"]  # grading.STATUSES
Number = int | float  # 12.0 is written 12


class ShardJSON(msgspec.Struct, forbid_unknown_fields=True):
    """Which slice of the cohort a partial gradebook holds (`grade batch --shard index/count`)."""
    index: Annotated[int, msgspec.Meta(ge=1)]
    count: Annotated[int, msgspec.Meta(ge=1)]


class OverrideJSON(msgspec.Struct, forbid_unknown_fields=True):
    """One line of the overrides file: an exercise's points set (points) or changed (delta)."""
    submission: str
    exercise: int
    points: float | None
    delta: float | None
    comment: str
    where: str


class RubricJSON(msgspec.Struct, forbid_unknown_fields=True):
    """The weights (exercise number -> points; none: each exercise is worth its checks) and overrides applied."""
    weights: dict[str, float]
    rounding: str
    overrides: list[OverrideJSON]
    unapplied: list[str]  # overrides naming no submission or exercise of the cohort


class AppliedJSON(msgspec.Struct, forbid_unknown_fields=True):
    """The override applied to an exercise: before is its points without it."""
    points: float | None
    delta: float | None
    comment: str
    before: float


class ExerciseJSON(msgspec.Struct, forbid_unknown_fields=True):
    number: int
    slug: str
    status: Status
    score: int  # checks passed
    max_score: int
    points: Number  # the course's points: weighted, override applied
    max_points: Number
    override: AppliedJSON | None
    diagnoses: list[str]  # diagnosis ids, most likely first
    note: str
    file: str  # where the file sits inside the submission
    source_sha256: str


class RowJSON(msgspec.Struct, forbid_unknown_fields=True):
    submission: str
    person: dict[str, str] | None  # the roster's entry: null without a roster, {} when the roster has none
    total: Number  # the course's points
    max_total: Number
    raw_total: int  # checks passed
    raw_max_total: int
    notes: list[str]
    overrides: list[str]
    problem: str
    report: str
    produced_by: Provenance  # what graded the row (without source_sha256, which each exercise has)
    exercises: list[ExerciseJSON]


class GradebookJSON(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, omit_defaults=True):
    """What `grade batch -o NAME.json` and `grade merge -o NAME.json` write; a partial one names its shard."""
    schema_version: Literal[1]
    kit: str
    exercises: list[int]
    rows: list[RowJSON]
    shard: ShardJSON | UnsetType = UNSET
    rubric: RubricJSON


def number(value: float) -> int | float:
    """12.0 -> 12 in JSON; 12.5 stays."""
    return int(value) if value == int(value) else value


def produced_by(row: Row) -> dict:
    """What graded the row (kit and pack digest, torch, Python, budget, sandbox tier), from its verdicts."""
    found = [e.provenance for e in row.exercises if e.provenance]
    ran = [p for p in found if not p.get("sandbox", "").startswith("none")]
    first = (ran or found or [{}])[0]
    return {k: v for k, v in first.items() if k != "source_sha256"}


def produced_by_text(row: Row) -> str:
    p = produced_by(row)
    if not p:
        return ""
    return (f"kit {p['kit']}; torch {p['torch']}; python {p['python']}; cpu budget {p['budget']['cpu_s']:g} s; "
            f"{p['device']}; sandbox {p['sandbox']}")


def row_notes(row: Row) -> list[str]:
    """Everything worth a look about a row's files: the submission's own notes, then each exercise's
    (missing and why, did you mean, refused and why)."""
    return list(row.notes) + [f"ex{e.number}: {e.note}" for e in row.exercises if e.note]


def row_overrides(row: Row) -> list[str]:
    return [m.override.describe(m.weighted) for m in row.marks.values() if m.override is not None]


def _exercise_json(e: ExerciseResult, mark) -> ExerciseJSON:
    if mark is None:
        points, most, applied = e.score, e.max_score, None
    else:
        o = mark.override
        points, most = number(mark.points), number(mark.max_points)
        applied = None if o is None else AppliedJSON(o.points, o.delta, o.comment, mark.weighted)
    return ExerciseJSON(e.number, e.slug, e.status, e.score, e.max_score, points, most, applied, e.diagnoses,
                        clean(e.note), clean(e.file), e.provenance.get("source_sha256", ""))


def _row_json(row: Row) -> RowJSON:
    """The row as the JSON gradebook has it: every text a submission controls cleaned (textsafe.clean)."""
    person = None if row.person is None else {k: clean(v) for k, v in row.person.items()}
    return RowJSON(clean(row.submission), person, number(row.points), number(row.max_points), row.total,
                   row.max_total, [clean(n) for n in row_notes(row)], [clean(o) for o in row_overrides(row)],
                   clean(row.problem), clean(row.report), Provenance(**produced_by(row)),
                   [_exercise_json(e, row.marks.get(e.number)) for e in row.exercises])


# -- the gradebook ------------------------------------------------------------------------------------------------
def _cell(value) -> str:
    """A CSV cell cleaned (textsafe.clean: no escapes or control characters); one that a spreadsheet would run as
    a formula gets a leading apostrophe."""
    text = clean(str(value))
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@dataclass
class Gradebook:
    """Batch Rows of the exercises numbers, as a whole cohort or one shard of it, with the weights and overrides
    applied to them (rubric.apply) and those that named nothing (unapplied)."""
    rows: list[Row]
    numbers: list[int]
    shard: tuple[int, int] | None = None
    rubric: Any = None  # rubric.Rubric
    unapplied: list[str] = field(default_factory=list)

    def doc(self) -> GradebookJSON:
        """The typed document: total/max_total are the course's points (weights and overrides applied),
        raw_total/raw_max_total the checks."""
        from grader.instructor.rubric import Rubric

        given = (self.rubric or Rubric()).to_dict()  # built, not converted: a weight of 10 stays 10, not 10.0
        rubric = RubricJSON(given["weights"], given["rounding"], [OverrideJSON(**o) for o in given["overrides"]],
                            list(self.unapplied))
        return GradebookJSON(schema_version=SCHEMA, kit=__version__, exercises=list(self.numbers),
                             rows=[_row_json(r) for r in sorted(self.rows, key=lambda r: r.submission)],
                             shard=ShardJSON(*self.shard) if self.shard is not None else UNSET, rubric=rubric)

    def json(self) -> str:
        return json.dumps(msgspec.to_builtins(self.doc()), indent=2, ensure_ascii=False) + "\n"

    def csv(self) -> str:
        """UTF-8 with a byte-order mark, so that Excel reads accented names right; rows by submission name.

        total/max_total are the course's points (weights, overrides); exN_score/exN_max and raw_* the checks.
        """
        from grader.instructor.rubric import fmt

        people = any(row.person is not None for row in self.rows)  # a roster was given: its columns follow the name
        head = ["submission", *(SHOWN if people else ()), "total", "max_total"]
        for n in self.numbers:
            head += [f"ex{n}_status", f"ex{n}_score", f"ex{n}_max", f"ex{n}_diagnoses", f"ex{n}_points",
                     f"ex{n}_max_points"]
        head += ["raw_total", "raw_max_total", "overrides", "note", "problem", "report", "produced_by"]
        buf = io.StringIO()
        buf.write("\ufeff")
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(head)
        for row in sorted(self.rows, key=lambda r: r.submission):
            by_number = {e.number: e for e in row.exercises}
            cells = [row.submission, *((row.person or {}).get(k, "") for k in (SHOWN if people else ())),
                     fmt(row.points), fmt(row.max_points)]
            for n in self.numbers:
                e, mark = by_number[n], row.marks.get(n)
                cells += [e.status, e.score, e.max_score, " ".join(e.diagnoses[:3]),
                          fmt(mark.points if mark else e.score), fmt(mark.max_points if mark else e.max_score)]
            cells += [row.total, row.max_total, "; ".join(row_overrides(row)), "; ".join(row_notes(row)), row.problem,
                      row.report, produced_by_text(row)]
            writer.writerow([_cell(c) for c in cells])
        return buf.getvalue()

    def text(self, name: str) -> str:
        """The gradebook as the file name asks: .csv or .json."""
        return self.csv() if name.lower().endswith(".csv") else self.json()


def gradebook_csv(rows: list[Row], numbers: list[int]) -> str:
    return Gradebook(rows, numbers).csv()


def gradebook_json(rows: list[Row], numbers: list[int], shard: tuple[int, int] | None = None, rubric=None,
                   unapplied: list[str] = ()) -> str:
    return Gradebook(rows, numbers, shard, rubric, list(unapplied)).json()


def gradebook_text(rows: list[Row], numbers: list[int], name: str, shard: tuple[int, int] | None = None,
                   rubric=None, unapplied: list[str] = ()) -> str:
    return Gradebook(rows, numbers, shard, rubric, list(unapplied)).text(name)


def check_name(output: Path) -> None:
    if Path(output).suffix.lower() not in GRADEBOOK_SUFFIXES:
        raise UsageError(f"the gradebook must end in .csv or .json, not {Path(output).name!r}")


# -- shards -------------------------------------------------------------------------------------------------------
def in_shard(name: str, shard: tuple[int, int]) -> bool:
    index, count = shard
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big") % count == index - 1


def parse_shard(spec: str | None) -> tuple[int, int] | None:
    """"2/4" -> (2, 4): the second of four slices."""
    if spec is None:
        return None
    index, slash, count = spec.partition("/")
    if not (slash and index.strip().isdigit() and count.strip().isdigit()) or not 1 <= int(index) <= int(count):
        raise UsageError(f"--shard takes I/N with 1 <= I <= N, e.g. 2/4, not {spec!r}")
    return int(index), int(count)


def read_part(path: Path) -> GradebookJSON | None:
    """The partial gradebook at path, or None for a batch cache; anything else is a usage error saying what it is."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    if raw.startswith(b"\xef\xbb\xbfsubmission,") or raw.startswith(b"submission,"):
        raise UsageError(f"{path} is a CSV gradebook; merge reads the JSON parts that {PART_RECIPE}")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise UsageError(f"{path} is not JSON: merge reads the partial gradebooks that {PART_RECIPE}") from None
    if isinstance(doc, dict) and doc.get("schema") == CACHE_SCHEMA and isinstance(doc.get("rows"), dict):
        return None
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA or not isinstance(doc.get("rows"), list):
        raise UsageError(f"{path} is not a gradebook of attention-kit {__version__}: merge reads the partial "
                         f"gradebooks that {PART_RECIPE}")
    if not isinstance(doc.get("shard"), dict):
        raise UsageError(f"{path} is the gradebook of a whole (unsharded) run, not a partial one: it needs no merge")
    try:
        return read_gradebook(doc, path)
    except SchemaError as exc:
        raise UsageError(str(exc)) from None


def read_gradebook(doc: dict, path: Path | str = "gradebook") -> GradebookJSON:
    """A JSON gradebook (parsed) checked against GradebookJSON; SchemaError: one line naming path and the key."""
    try:
        return msgspec.convert(doc, GradebookJSON, strict=True)
    except msgspec.ValidationError as exc:
        raise SchemaError(f"{path}: {describe(exc, GradebookJSON)}") from None


def rows_of(doc: GradebookJSON) -> list[Row]:
    """The batch Rows a gradebook records (weights and overrides are applied again by whoever writes them)."""
    rows = []
    for r in doc.rows:
        made = msgspec.to_builtins(r.produced_by)
        exercises = [ExerciseResult(e.number, e.slug, e.status, e.score, e.max_score, e.diagnoses, e.note, e.file,
                                    provenance={**made, "source_sha256": e.source_sha256}
                                    if made and e.source_sha256 else {}) for e in r.exercises]
        derived = {f"ex{e.number}: {e.note}" for e in exercises if e.note}
        rows.append(Row(r.submission, "", exercises, problem=r.problem, report=r.report,
                        notes=[n for n in r.notes if n not in derived], person=r.person))
    return rows


@dataclass
class Merged(Gradebook):
    shards: int = 0
    skipped: list[Path] = field(default_factory=list)  # batch caches the glob found beside the parts


def merge(parts: list[Path]) -> Merged:
    """Combine partial gradebooks; a missing, repeated or mismatched shard is a usage error, a cache is skipped."""
    from grader.instructor.rubric import Rubric

    read = [(Path(p), read_part(p)) for p in parts]
    docs = [(path, doc) for path, doc in read if doc is not None]
    skipped = [path for path, doc in read if doc is None]
    if not docs:
        raise UsageError("no partial gradebooks to merge" + (f" (only batch caches: {', '.join(map(str, skipped))})"
                                                            if skipped else ""))
    first_path, first = docs[0]
    count = first.shard.count
    by_index: dict[int, Path] = {}
    for path, doc in docs:
        for mine, theirs, what in ((doc.exercises, first.exercises, "exercises"), (doc.kit, first.kit, "kit version")):
            if mine != theirs:
                raise UsageError(f"{path} and {first_path} were graded with different {what}: {mine} and {theirs}")
        if _decides(doc.rubric) != _decides(first.rubric):
            raise UsageError(f"{path} and {first_path} were graded with different weights or overrides")
        if doc.shard.count != count:
            raise UsageError(f"{path} is a shard of {doc.shard.count}, {first_path} of {count}")
        index = doc.shard.index
        if index in by_index:
            raise UsageError(f"shard {index}/{count} given twice: {by_index[index]} and {path}")
        by_index[index] = path
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        shown = ", ".join(f"{i}/{count}" for i in missing)
        them = "them" if len(missing) > 1 else "it"
        raise UsageError(f"missing shard{'s' if len(missing) > 1 else ''} {shown}: grade {them} with "
                         f"`grade batch SUBS --shard I/{count} -o part_I.json`")
    rows, seen = [], {}
    for path, doc in docs:
        for row in rows_of(doc):
            if row.submission in seen:
                raise UsageError(f"{row.submission} is in both {seen[row.submission]} and {path}")
            seen[row.submission] = path
            rows.append(row)
    return Merged(sorted(rows, key=lambda r: r.submission), first.exercises,
                  rubric=Rubric.from_dict(msgspec.to_builtins(first.rubric)), shards=count,
                  skipped=skipped)


def _decides(rubric: RubricJSON) -> tuple:
    """What decides the points (not which overrides were left unapplied)."""
    return rubric.weights, rubric.overrides


# -- the result cache (NAME.cache.json beside the gradebook) -------------------------------------------------------
class ResultEntry(msgspec.Struct, forbid_unknown_fields=True):
    """One exercise's result as grading.ExerciseResult holds it (with the verdict and the heat map's weights)."""
    number: int
    slug: str
    status: Status
    score: int
    max_score: int
    diagnoses: list[str]
    note: str
    file: str
    verdict: dict[str, Any] | None
    attention: dict[str, Any] | None
    provenance: dict[str, Any]


class CacheEntry(msgspec.Struct, forbid_unknown_fields=True):
    """A graded submission kept for the next run, reused while digest (its files, the kit, the options) matches."""
    submission: str
    total: int
    max_total: int
    problem: str
    report: str
    digest: str
    duration_s: float
    exercises: list[ResultEntry]

    def row(self) -> Row:
        return Row(self.submission, self.digest, [ExerciseResult(**msgspec.structs.asdict(e)) for e in self.exercises],
                   problem=self.problem, report=self.report, duration_s=self.duration_s)


class CacheFile(msgspec.Struct):
    schema: int
    rows: dict[str, Any]  # each entry is checked on its own: one that is malformed costs only itself


class CacheJSON(msgspec.Struct, forbid_unknown_fields=True):
    """The cache file as published (docs/schemas/cache.schema.json): CacheFile with its entries typed."""
    schema: Literal[1]
    rows: dict[str, CacheEntry]  # by submission name


def cache_key(timeout: float) -> dict:
    """What must match for a cached grade to be reused: the installed kit and pack (every file that decides a
    verdict, grader/provenance.py), torch, Python and the budget (30 and 30.0 are the same)."""
    from grader.pack import default_pack
    from grader.sandbox.limits import Limits

    return {"kit": f"{__version__}+{provenance.kit_digest(default_pack())}", "torch": provenance.torch_version(),
            "python": platform.python_version(), "cpu_s": float(timeout), "backstop": Limits().backstop}


def cache_name(output: Path | None) -> str:
    return output.stem + ".cache.json" if output is not None else "cache.json"


def load_cache(data: bytes | None, name: str = "cache.json", problems: list[str] | None = None
               ) -> dict[str, CacheEntry]:
    """The entries of a cache file's bytes; what is malformed is left out (graded again) and said in problems.
    A cache of another schema (another version of the kit) is simply not used."""
    problems = [] if problems is None else problems
    if not data:
        return {}
    try:  # Python's reader: a verdict may hold NaN, which strict JSON (and msgspec's decoder) does not allow
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        problems.append(f"{name} is not JSON; every submission is graded again")
        return {}
    if not isinstance(doc, dict) or doc.get("schema") != CACHE_SCHEMA:
        return {}
    try:
        whole = msgspec.convert(doc, CacheFile, strict=True)
    except msgspec.ValidationError as exc:
        problems.append(f"{name}: {describe(exc, CacheFile)}; every submission is graded again")
        return {}
    entries = {}
    for submission, entry in whole.rows.items():
        try:
            entries[submission] = msgspec.convert(entry, CacheEntry, strict=True)
        except msgspec.ValidationError as exc:
            problems.append(f"{name}: {describe(exc, CacheEntry, f'rows[{submission!r}]')}; graded again")
    return entries


def cache_text(rows: list[Row], previous: dict[str, CacheEntry]) -> str:
    """The cache after a run: the previous entries, replaced by this run's rows (but for an internal failure,
    which is worth another try)."""
    keep = {name: msgspec.to_builtins(entry) for name, entry in previous.items()}
    for row in rows:
        if row.digest and all(e.status != "error" for e in row.exercises):
            keep[row.submission] = row.to_dict()
    return json.dumps({"schema": CACHE_SCHEMA, "rows": keep}, ensure_ascii=False)


SCHEMAS = {"gradebook.schema.json": GradebookJSON, "cache.schema.json": CacheJSON}


if __name__ == "__main__":  # python -m grader.instructor.gradebook docs/schemas
    from grader.schema import write

    for written in write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas"), SCHEMAS):
        print(written)
