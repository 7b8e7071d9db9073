"""One self-contained HTML report per submission (templates/report/report.html, inline CSS and SVG)."""
from __future__ import annotations

import datetime

from grader import __version__
from grader.catalog import load_catalog
from grader.htmlview import STATUS_LABELS, by_cause, code_view, environment, grouped, heatmap_view, marked_lines
from grader.instructor.rubric import fmt

__all__ = ["code_view", "environment", "exercise_view", "heatmap_view", "marked_lines", "render_report"]


def exercise_view(result, source: str | None, mark=None) -> dict:
    ex = load_catalog().get(result.number)
    verdict = result.verdict or {}
    tests = verdict.get("tests", [])
    failing = [t for t in tests if t["status"] not in ("passed", "skipped")]
    failed = result.status not in ("passed",)
    explained, also = by_cause(failing)
    return {
        "number": ex.number, "title": ex.title, "slug": ex.slug, "expected_file": ex.file,
        "status": result.status, "label": STATUS_LABELS.get(result.status, result.status),
        "score": result.score, "max_score": result.max_score, "note": result.note, "file": result.file,
        "points": fmt(mark.points if mark else result.score), "max_points": fmt(mark.max_points if mark else result.max_score),
        "override": mark.override.describe(mark.weighted) if mark and mark.override else "",
        "diagnoses": verdict.get("diagnoses", []), "failing": failing,
        "explained_groups": grouped(explained),
        "failing_groups": grouped(also),
        "passed": [t for t in tests if t["status"] == "passed"],
        "skipped": [t for t in tests if t["status"] == "skipped"],
        "maps": heatmap_view(result.attention) if failed else [],
        "code": code_view(source, ex.entry, failing, failed, verdict.get("localization")),
        "output": verdict.get("output", ""),
        "duration": verdict.get("duration_s"),
    }


def render_report(row, sources: dict[int, str]) -> str:
    """row: a batch Row; sources: exercise number -> the submitted code (for the code listing)."""
    sections = [exercise_view(e, sources.get(e.number), row.marks.get(e.number)) for e in row.exercises]
    percent = max(0, min(100, round(100 * row.points / row.max_points))) if row.max_points else 0
    return environment().get_template("report.html").render(
        row=row, sections=sections, percent=percent, version=__version__, points=fmt(row.points),
        max_points=fmt(row.max_points),
        generated=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"))
