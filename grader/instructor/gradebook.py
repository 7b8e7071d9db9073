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


def gradebook_doc(rows, numbers: list[int], shard: tuple[int, int] | None = None) -> dict:
    """The JSON gradebook of batch Rows (by submission name); a partial one names its shard."""
    doc = {"schema_version": SCHEMA, "kit": __version__, "exercises": numbers, "rows": []}
    if shard is not None:
        doc["shard"] = {"index": shard[0], "count": shard[1]}
    for row in sorted(rows, key=lambda r: r.submission):
        doc["rows"].append({
            "submission": row.submission, "total": row.total, "max_total": row.max_total, "problem": row.problem,
            "report": row.report,
            "exercises": [{"number": e.number, "slug": e.slug, "status": e.status, "score": e.score,
                           "max_score": e.max_score, "diagnoses": e.diagnoses, "note": e.note, "file": e.file}
                          for e in row.exercises],
        })
    return doc
