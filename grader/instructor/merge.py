"""`grade merge`: partial gradebooks from `grade batch --shard I/N` back into the gradebook an unsharded run writes.

merge checks that exactly the shards 1..N are there, once each, graded alike. A shell glob such as
part_*.json also finds the batch caches written beside the parts (part_I.cache.json): those are
skipped and named; any other file that is not a partial gradebook is refused with what it is.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from grader import __version__
from grader.instructor import UsageError
from grader.instructor.batch import CACHE_SCHEMA, GRADEBOOK_SUFFIXES, Row, gradebook_text
from grader.instructor.gradebook import SCHEMA
from grader.instructor.grading import ExerciseResult
from grader.instructor.outputs import OutputDir, OutputError


@dataclass
class Merged:
    rows: list  # batch Rows
    numbers: list[int]
    shards: int
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
        for key, what in (("exercises", "exercises"), ("kit", "kit version")):
            if doc[key] != first[key]:
                raise UsageError(f"{path} and {first_path} were graded with different {what}: "
                                 f"{doc[key]} and {first[key]}")
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
    return Merged(sorted(rows, key=lambda r: r.submission), first["exercises"], count, skipped)


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
        rows.append(Row(r["submission"], "", exercises, problem=r["problem"], report=r["report"]))
    return rows


def merge_gradebooks(*, parts: list[Path], output: Path) -> Merged:
    """Merge partial gradebooks into output (.json: exactly an unsharded run's gradebook; .csv likewise)."""
    output = Path(output)
    if output.suffix.lower() not in GRADEBOOK_SUFFIXES:
        raise UsageError(f"the gradebook must end in .csv or .json, not {output.name!r}")
    if any(Path(p).resolve() == output.resolve() for p in parts):
        raise UsageError(f"{output} is one of the parts; write the merged gradebook elsewhere")
    merged = merge(parts)
    try:
        with OutputDir(output.parent) as folder:
            folder.write(output.name, gradebook_text(merged.rows, merged.numbers, output.name))
    except (OutputError, OSError) as exc:
        raise UsageError(f"cannot write {output}: {exc}") from None
    return merged
