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


def gradebook_doc(rows, numbers: list[int], shard: tuple[int, int] | None = None) -> dict:
    """The JSON gradebook of batch Rows (by submission name); a partial one names its shard."""
    doc = {"schema_version": SCHEMA, "kit": __version__, "exercises": numbers, "rows": []}
    if shard is not None:
        doc["shard"] = {"index": shard[0], "count": shard[1]}
    for row in sorted(rows, key=lambda r: r.submission):
        doc["rows"].append({
            "submission": row.submission, "total": row.total, "max_total": row.max_total, "problem": row.problem,
            "report": row.report, "produced_by": produced_by(row),
            "exercises": [{"number": e.number, "slug": e.slug, "status": e.status, "score": e.score,
                           "max_score": e.max_score, "diagnoses": e.diagnoses, "note": e.note, "file": e.file,
                           "source_sha256": e.provenance.get("source_sha256", "")}
                          for e in row.exercises],
        })
    return doc
