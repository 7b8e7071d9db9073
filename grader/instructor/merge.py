"""`grade merge`: partial gradebooks from `grade batch --shard I/N` back into the gradebook an unsharded run writes.

merge checks that exactly the shards 1..N are there, once each, graded alike. The weights and overrides
recorded in the parts are applied again (or those given to `grade merge`, which replace them). A shell glob
such as part_*.json also finds the batch caches written beside the parts (part_I.cache.json): those are
skipped and named; any other file that is not a partial gradebook is refused with what it is.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from grader import __version__
from grader.instructor import UsageError
from grader.instructor.batch import CACHE_SCHEMA, GRADEBOOK_SUFFIXES, Row, check_canvas, gradebook_text, write_canvas
from grader.instructor.gradebook import SCHEMA
from grader.instructor.grading import ExerciseResult
from grader.instructor.rubric import Rubric, apply, load_rubric
from grader.instructor.outputs import OutputDir, OutputError


@dataclass
class Merged:
    rows: list  # batch Rows
    numbers: list[int]
    shards: int
    rubric: Rubric | None = None
    unapplied: list[str] = ()  # overrides that name no submission or exercise of the cohort
    skipped: list[Path] = field(default_factory=list)  # batch caches the glob found beside the parts


def _is_cache(doc) -> bool:
    return isinstance(doc, dict) and doc.get("schema") == CACHE_SCHEMA and isinstance(doc.get("rows"), dict)


def _read_part(path: Path) -> dict | None:
    """The partial gradebook at path, or None for a batch cache; anything else is a usage error saying what it is."""
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    if raw.startswith(b"\xef\xbb\xbfsubmission,") or raw.startswith(b"submission,"):
        raise UsageError(f"{path} is a CSV gradebook; merge reads the JSON parts that "
                         f"`grade batch SUBS --shard I/N -o part_I.json` writes")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise UsageError(f"{path} is not JSON: merge reads the partial gradebooks that "
                         f"`grade batch SUBS --shard I/N -o part_I.json` writes") from None
    if _is_cache(doc):
        return None
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA or not isinstance(doc.get("rows"), list):
        raise UsageError(f"{path} is not a gradebook of attention-kit {__version__}: merge reads the partial "
                         f"gradebooks that `grade batch SUBS --shard I/N -o part_I.json` writes")
    if not isinstance(doc.get("shard"), dict):
        raise UsageError(f"{path} is the gradebook of a whole (unsharded) run, not a partial one: it needs no merge")
    return doc


def merge(parts: list[Path]) -> Merged:
    """Combine partial gradebooks; a missing, repeated or mismatched shard is a usage error, a batch cache is skipped."""
    read = [(Path(p), _read_part(p)) for p in parts]
    docs = [(path, doc) for path, doc in read if doc is not None]
    skipped = [path for path, doc in read if doc is None]
    if not docs:
        raise UsageError("no partial gradebooks to merge" + (f" (only batch caches: {', '.join(map(str, skipped))})"
                                                            if skipped else ""))
    first_path, first = docs[0]
    count = first["shard"]["count"]
    by_index: dict[int, Path] = {}
    for path, doc in docs:
        for key, what in (("exercises", "exercises"), ("kit", "kit version"), ("rubric", "weights or overrides")):
            if _recorded(doc, key) != _recorded(first, key):
                raise UsageError(f"{path} and {first_path} were graded with different {what}"
                                 + (f": {doc[key]} and {first[key]}" if key != "rubric" else ""))
        if doc["shard"]["count"] != count:
            raise UsageError(f"{path} is a shard of {doc['shard']['count']}, {first_path} of {count}")
        index = doc["shard"]["index"]
        if index in by_index:
            raise UsageError(f"shard {index}/{count} given twice: {by_index[index]} and {path}")
        by_index[index] = path
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        shown = ", ".join(f"{i}/{count}" for i in missing)
        raise UsageError(f"missing shard{'s' if len(missing) > 1 else ''} {shown}: grade "
                         f"{'them' if len(missing) > 1 else 'it'} with `grade batch SUBS --shard I/{count} -o part_I.json`")
    rows, seen = [], {}
    for path, doc in docs:
        try:
            rows += _rows(doc, path, seen)
        except (KeyError, TypeError, AttributeError):
            raise UsageError(f"{path} is not a partial gradebook (a row is malformed)") from None
    try:
        rubric = Rubric.from_dict(first["rubric"]) if first.get("rubric") else None
    except (TypeError, ValueError, AttributeError):
        raise UsageError(f"{first_path} is not a partial gradebook (its rubric is malformed)") from None
    return Merged(sorted(rows, key=lambda r: r.submission), first["exercises"], count, rubric, skipped=skipped)


def _recorded(doc: dict, key: str):
    """What a part records; for the rubric, what decides the points (not which overrides were left unapplied)."""
    value = doc.get(key)
    return {k: v for k, v in value.items() if k != "unapplied"} if key == "rubric" and isinstance(value, dict) else value


def _rows(doc: dict, path: Path, seen: dict) -> list:
    rows = []
    for r in doc["rows"]:
        if r["submission"] in seen:
            raise UsageError(f"{r['submission']} is in both {seen[r['submission']]} and {path}")
        seen[r["submission"]] = path
        made = r.get("produced_by") or {}
        exercises = [ExerciseResult(e["number"], e["slug"], e["status"], e["score"], e["max_score"],
                                    e["diagnoses"], e["note"], e["file"],
                                    provenance={**made, "source_sha256": e["source_sha256"]}
                                    if made and e.get("source_sha256") else {}) for e in r["exercises"]]
        derived = {f"ex{e.number}: {e.note}" for e in exercises if e.note}
        notes = [n for n in r.get("notes", []) if n not in derived]
        rows.append(Row(r["submission"], "", exercises, problem=r["problem"], report=r["report"], notes=notes,
                        person=r.get("person")))
    return rows


def merge_gradebooks(*, parts: list[Path], output: Path, weights: str | None = None, rubric: Path | None = None,
                     overrides: Path | None = None, canvas: Path | None = None, assignment: str = "attention-kit"
                     ) -> Merged:
    """Merge partial gradebooks into output (.json: exactly an unsharded run's gradebook; .csv likewise).

    Weights and overrides: those the parts record, each replaced by the options given here.
    """
    output = Path(output)
    if output.suffix.lower() not in GRADEBOOK_SUFFIXES:
        raise UsageError(f"the gradebook must end in .csv or .json, not {output.name!r}")
    if any(Path(p).resolve() == output.resolve() for p in parts):
        raise UsageError(f"{output} is one of the parts; write the merged gradebook elsewhere")
    given = load_rubric(weights=weights, rubric=rubric, overrides=overrides)
    merged = merge(parts)
    if given is not None:
        recorded = merged.rubric or Rubric()
        merged.rubric = Rubric(given.weights if weights is not None or rubric is not None else recorded.weights,
                               given.overrides if overrides is not None else recorded.overrides)
    if merged.rubric is not None:
        merged.rubric.check(merged.numbers)
    merged.unapplied = apply(merged.rubric, merged.rows, merged.numbers)
    if canvas is not None:
        check_canvas(Path(canvas), {} if any(r.person is not None for r in merged.rows) else None, None)
    try:
        with OutputDir(output.parent) as folder:
            text = gradebook_text(merged.rows, merged.numbers, output.name, None, merged.rubric, merged.unapplied)
            folder.write(output.name, text)
    except (OutputError, OSError) as exc:
        raise UsageError(f"cannot write {output}: {exc}") from None
    if canvas is not None:
        merged.unapplied = list(merged.unapplied) + write_canvas(Path(canvas), merged.rows, assignment)
    return merged
