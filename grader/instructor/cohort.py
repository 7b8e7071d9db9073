"""The cohort page (index.html beside the reports): what needs a person's attention first, a grid of every
submission and exercise that sorts and filters, the score histogram, pass rates and every mistake with its count.

The page is self-contained: inline CSS and SVG, one inline script (templates/report/cohort.js) allowed by its
hash in the page's Content-Security-Policy, nothing fetched. Everything a submission controls is autoescaped.
"""
from __future__ import annotations

import base64
import datetime
import hashlib
from collections import Counter

from markupsafe import Markup

from grader import __version__
from grader.catalog import load_catalog
from grader.htmlview import STATUS_LABELS, environment, heatmap_view
from grader.instructor.summary import MARKS

BINS = 10  # score histogram: 0-9 %, 10-19 %, ..., 90-100 %
LINKS_SHOWN = 12
THUMBNAILS = 10  # heat-map thumbnails for the most frequent mistakes; every mistake is listed and counted
SCRIPT = "cohort.js"

# What a person should look at before reading scores, most urgent first: (kind, heading, diagnosis ids).
ATTENTION = (
    ("error", "Grader errors", ()),
    ("unreadable", "Unreadable submissions", ()),
    ("absent", "In the roster, but no submission", ()),
    ("timeout", "Timeouts", ("timeout",)),
    ("policy", "Refused by the policy", ("forbidden_api", "unsafe_code")),
    ("syntax", "Syntax and import errors", ("syntax_error", "import_error")),
    ("crash", "Crashes and memory limits", ("crash", "memory_limit")),
    ("rejected", "Files refused", ()),
    ("ambiguous", "Misnamed or ambiguous files", ()),
    ("integrity", "Integrity flags (alike files; grade similarity SUBMISSIONS --html shows them side by side)", ()),
)


def histogram(rows) -> list[dict]:
    counts = [0] * BINS
    for row in rows:
        share = row.points / row.max_points if row.max_points else 0.0
        counts[min(BINS - 1, int(share * BINS))] += 1
    top = max(counts) or 1
    return [{"label": f"{10 * i}–{10 * i + 9 if i < BINS - 1 else 100}%", "count": c, "height": round(100 * c / top)}
            for i, c in enumerate(counts)]


def pass_rates(rows, numbers: list[int]) -> list[dict]:
    catalog = load_catalog()
    out = []
    for n in numbers:
        results = [e for row in rows for e in row.exercises if e.number == n]
        passed = sum(e.status == "passed" for e in results)
        out.append({"number": n, "title": catalog.get(n).title, "passed": passed, "of": len(results),
                    "percent": round(100 * passed / len(results)) if results else 0})
    return out


def _title(e, diagnosis: str) -> str:
    found = [d for d in (e.verdict or {}).get("diagnoses", []) if d.get("id") == diagnosis]
    return str(found[0].get("title", "")) if found else ""


def frequent_diagnoses(rows) -> list[dict]:
    """Every first diagnosis of a failing exercise, counted over the cohort (most frequent first), with who made it."""
    counts: Counter = Counter()
    who: dict[tuple, list] = {}
    titles: dict[str, str] = {}
    thumbs: dict[tuple, list] = {}
    for row in sorted(rows, key=lambda r: r.submission):
        for e in row.exercises:
            if e.status != "failed" or not e.diagnoses:
                continue
            key = (e.diagnoses[0], e.number)
            counts[key] += 1
            who.setdefault(key, []).append({"name": row.submission, "report": _link(row.report, e.number)})
            titles[e.diagnoses[0]] = titles.get(e.diagnoses[0]) or _title(e, e.diagnoses[0])
            if key not in thumbs and e.attention:
                maps = heatmap_view(e.attention)
                thumbs[key] = maps[0] if maps else []
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [{"id": key[0], "exercise": key[1], "title": titles.get(key[0], ""), "count": n,
             "students": who[key][:LINKS_SHOWN], "others": who[key][LINKS_SHOWN:],
             "maps": thumbs.get(key, []) if rank < THUMBNAILS else []}
            for rank, (key, n) in enumerate(ranked)]


def _attention_kind(e) -> tuple[str, str] | None:
    """(kind, what to show) for an exercise result a person should look at, else None."""
    if e.status == "error":
        return "error", e.note
    if e.status == "rejected":
        return "rejected", e.note
    for kind, _, ids in ATTENTION:
        hit = next((d for d in e.diagnoses if d in ids), None)
        if hit:
            timed_out = [t for t in (e.verdict or {}).get("tests", []) if t.get("status") == "timeout"]
            return kind, (timed_out[0].get("message") if timed_out else "") or _title(e, hit) or hit
    if e.status == "missing" and "did you mean" in e.note:
        return "ambiguous", e.note
    if e.status not in ("missing",) and e.note:  # a graded file that came with a remark (a duplicate, a choice made)
        return "ambiguous", e.note
    return None


def needs_attention(rows, integrity=()) -> list[dict]:
    """Groups in ATTENTION order, each {kind, heading, entries: [{name, exercise, detail, report}]}; empty ones left out.
    integrity: (submission, exercise, what) flags of grade similarity's findings."""
    items: dict[str, list] = {kind: [] for kind, _, _ in ATTENTION}
    reports = {row.submission: row.report for row in rows}
    for name, number, detail in integrity:
        items["integrity"].append({"name": name, "exercise": number, "detail": detail,
                                   "report": _link(reports.get(name, ""), number)})
    for row in sorted(rows, key=lambda r: r.submission):
        if row.problem:
            items["unreadable" if row.digest else "absent"].append(
                {"name": row.submission, "exercise": None, "detail": row.problem, "report": _link(row.report, None)})
        for note in row.notes:  # what the grader noticed about the submission's files (duplicates, choices made)
            items["ambiguous"].append({"name": row.submission, "exercise": None, "detail": note,
                                       "report": _link(row.report, None)})
        for e in row.exercises:
            found = _attention_kind(e)
            if found and not (row.problem and e.status == "rejected"):  # the archive's problem says it once
                items[found[0]].append({"name": row.submission, "exercise": e.number, "detail": found[1],
                                        "report": _link(row.report, e.number)})
    return [{"kind": kind, "heading": heading, "entries": items[kind]} for kind, heading, _ in ATTENTION if items[kind]]


def grid(rows, numbers: list[int]) -> list[dict]:
    """One row per submission: its total and, per exercise, a mark, the points and what a hover shows."""
    catalog = load_catalog()
    out = []
    for row in sorted(rows, key=lambda r: r.submission):
        by_number = {e.number: e for e in row.exercises}
        cells = []
        for n in numbers:
            e = by_number.get(n)
            if e is None:
                cells.append({"mark": "", "status": "", "score": 0, "max": 0, "hover": "", "report": ""})
                continue
            mark = row.marks.get(n)
            points, most = (mark.points, mark.max_points) if mark else (e.score, e.max_score)
            why = ", ".join(f"{d}: {_title(e, d)}" if _title(e, d) else d for d in e.diagnoses[:3]) or e.note
            if mark and mark.override:
                why = f"{why} · changed by hand: {mark.override.comment}" if why else \
                    f"changed by hand: {mark.override.comment}"
            hover = f"exercise {n} ({catalog.get(n).slug}) · {STATUS_LABELS.get(e.status, e.status)} · " \
                    f"{points:g}/{most:g}" + (f" · {why}" if why else "")
            cells.append({"mark": MARKS.get(e.status, ("?", ""))[0], "status": e.status, "score": f"{points:g}",
                          "max": f"{most:g}", "hover": hover, "report": _link(row.report, n)})
        first = next((d for e in row.exercises for d in e.diagnoses[:1]), "") or \
            next((e.note for e in row.exercises if e.status in ("rejected", "error") and e.note), "")
        search = " ".join([row.submission, row.problem, *row.notes, *(d for e in row.exercises for d in e.diagnoses),
                           *(e.status for e in row.exercises)])
        out.append({"name": row.submission, "report": _link(row.report, None), "total": f"{row.points:g}",
                    "max_total": f"{row.max_points:g}",
                    "percent": round(100 * row.points / row.max_points) if row.max_points else 0,
                    "cells": cells, "first": row.problem or first, "search": search.lower()})
    return out


def _link(report: str, number: int | None) -> str:
    """A relative link from index.html to the student's report, at the exercise's section."""
    if not report:
        return ""
    name = report.replace(chr(92), "/").rsplit("/", 1)[-1]
    return f"{name}#ex{number}" if number is not None else name


def script() -> tuple[Markup, str]:
    """The page's inline script and its CSP source ('sha256-…' of its exact text)."""
    env = environment()
    text = env.loader.get_source(env, SCRIPT)[0]
    assert "</" not in text, "the inline script must not close its own element"
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
    return Markup(text), f"'sha256-{digest}'"


def cohort_page(rows, numbers: list[int], integrity=()) -> str:
    totals = sorted(r.points for r in rows)
    median = totals[len(totals) // 2] if totals else 0
    code, source = script()
    return environment().get_template("index.html").render(
        rows=grid(rows, numbers), numbers=numbers, histogram=histogram(rows), rates=pass_rates(rows, numbers),
        attention=needs_attention(rows, integrity), diagnoses=frequent_diagnoses(rows), median=f"{median:g}",
        max_total=f"{rows[0].max_points:g}" if rows else 0, script=code, script_source=source, version=__version__,
        generated=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"))
