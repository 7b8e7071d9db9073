"""The cohort page (index.html beside the reports): scores, pass rates, the mistakes most people made."""
from __future__ import annotations

import datetime
from collections import Counter

from grader import __version__
from grader.catalog import load_catalog
from grader.htmlview import environment, heatmap_view

BINS = 10  # score histogram: 0-9 %, 10-19 %, ..., 90-100 %
TOP_DIAGNOSES = 10
LINKS_SHOWN = 12


def histogram(rows) -> list[dict]:
    counts = [0] * BINS
    for row in rows:
        share = row.total / row.max_total if row.max_total else 0.0
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


def frequent_diagnoses(rows) -> list[dict]:
    """The first diagnosis of each failing exercise, counted over the cohort, with who made it."""
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
            for d in (e.verdict or {}).get("diagnoses", [])[:1]:
                titles[e.diagnoses[0]] = str(d.get("title", ""))
            if key not in thumbs and e.attention:
                maps = heatmap_view(e.attention)
                thumbs[key] = maps[0] if maps else []
    return [{"id": key[0], "exercise": key[1], "title": titles.get(key[0], ""), "count": n,
             "students": who[key][:LINKS_SHOWN], "more": max(0, len(who[key]) - LINKS_SHOWN),
             "maps": thumbs.get(key, [])}
            for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_DIAGNOSES]]


def _link(report: str, number: int) -> str:
    """A relative link from index.html to the student's report, at the exercise's section."""
    return f"{report.replace(chr(92), '/').rsplit('/', 1)[-1]}#ex{number}" if report else ""


def cohort_page(rows, numbers: list[int]) -> str:
    totals = sorted(r.total for r in rows)
    median = totals[len(totals) // 2] if totals else 0
    return environment().get_template("index.html").render(
        rows=sorted(rows, key=lambda r: r.submission), histogram=histogram(rows), rates=pass_rates(rows, numbers),
        diagnoses=frequent_diagnoses(rows), median=median, max_total=rows[0].max_total if rows else 0,
        version=__version__, generated=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"))
