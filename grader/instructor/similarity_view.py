"""What `grade similarity` shows: an 80-column summary, the JSON document, and side-by-side HTML pages."""
from __future__ import annotations

import hashlib
import re
import textwrap
from dataclasses import asdict
from functools import cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from grader.catalog import kit_dir
from grader.instructor.markup import clean
from grader.instructor.outputs import OutputDir
from grader.instructor.similarity import Prints, SimilarityReport, matching_lines, prints_of

WIDTH = 80
NAME_WIDTH = 28
MAX_NAME_LINES = 2  # lines of names per group before "+N more"
CLUSTERS_SHOWN = 5  # per exercise, largest first
MAX_PAGES = 500  # side-by-side pages --html writes; the index says how many more were flagged


def short(name: str, width: int = NAME_WIDTH) -> str:
    name = " ".join(clean(name, 200).split())
    return name if len(name) <= width else name[: width - 1] + "…"


def shown_url(url: str) -> str:
    """A pinned GitHub file address as `github.com/owner/name path` (the JSON and HTML keep the full one)."""
    found = re.fullmatch(r"https://github\.com/([^/]+/[^/]+)/blob/[0-9a-f]+/(.+)", url)
    return f"github.com/{found[1]} {found[2]}" if found else url


def names_block(head: str, names: list[str]) -> list[str]:
    """head then the names, wrapped to WIDTH with an indent, at most MAX_NAME_LINES lines of names."""
    shown = [short(n) for n in names]
    lines = textwrap.wrap(", ".join(shown), WIDTH - 4, break_on_hyphens=False, break_long_words=False)
    if len(lines) > MAX_NAME_LINES:
        kept = textwrap.wrap(", ".join(shown), WIDTH - 16, break_on_hyphens=False)[:MAX_NAME_LINES]
        listed = sum(part.count(", ") for part in kept) + len(kept)
        lines = kept
        lines[-1] += f", +{len(names) - listed} more"
    return [head[:WIDTH]] + ["    " + line for line in lines]


def summary_text(report: SimilarityReport, top: int = 20) -> str:
    """Per exercise: copies of the reference and of public code, clusters; then the top pairs; then totals."""
    out: list[str] = []
    numbers = sorted({m.exercise for m in report.reference} | {m.exercise for m in report.public}
                     | {c.exercise for c in report.clusters})
    for number in numbers:
        out.append(f"exercise {number}")
        refs = [m.submission for m in report.reference if m.exercise == number]
        if refs:
            out += names_block(f"  equals the reference ({len(refs)}):", refs)
        by_source: dict[tuple[str, str], list[str]] = {}
        for m in report.public:
            if m.exercise == number:
                by_source.setdefault((m.source, m.url), []).append(m.submission)
        for (source, url), names in by_source.items():
            out += names_block(f"  matches {short(source, 44)} ({len(names)}):", names)
            out.append(f"    source: {short(shown_url(url), WIDTH - 12)}")
        clusters = [c for c in report.clusters if c.exercise == number]
        for c in clusters[:CLUSTERS_SHOWN]:
            span = f"{c.lowest:.2f}" if c.lowest == c.highest else f"{c.lowest:.2f}-{c.highest:.2f}"
            out += names_block(f"  cluster of {len(c.members)} ({span}):", c.members)
        if len(clusters) > CLUSTERS_SHOWN:
            out.append(f"  … {len(clusters) - CLUSTERS_SHOWN} more cluster(s) (--json lists them)")
    if report.pairs:
        shown = report.pairs[:top]
        out.append(f"top {len(shown)} of {len(report.pairs)} pair(s) at or above {report.threshold:g}:")
        for p in shown:
            out.append(f"  ex {p.exercise:>2}  {p.similarity:.2f}  {short(p.first, 30)}  {short(p.second, 30)}")
    total = (f"{len(report.reference)} file(s) equal to the reference, {len(report.public)} to public code, "
             f"{len(report.clusters)} cluster(s), {len(report.pairs)} pair(s) at or above {report.threshold:g} "
             f"among {report.submissions} submissions")
    if report.skipped:
        total += f"; {len(report.skipped)} file(s) not compared (--json lists them)"
    out += textwrap.wrap(total + ".", WIDTH)
    return "\n".join(out)


def json_document(report: SimilarityReport) -> dict:
    return {"schema_version": 1, "threshold": report.threshold, "submissions": report.submissions,
            "reference": [asdict(m) for m in report.reference], "public": [asdict(m) for m in report.public],
            "clusters": [asdict(c) for c in report.clusters], "pairs": [asdict(p) for p in report.pairs],
            "skipped": report.skipped}


# --- HTML ---------------------------------------------------------------------------------------------------------

@cache
def environment() -> Environment:
    return Environment(loader=FileSystemLoader(str(kit_dir("templates") / "similarity")), undefined=StrictUndefined,
                       autoescape=True, trim_blocks=True, lstrip_blocks=True,
                       finalize=lambda v: clean(v) if isinstance(v, str) and not isinstance(v, Markup) else v)


def page_name(exercise: int, first: str, second: str) -> str:
    digest = hashlib.sha256(f"{exercise}\0{first}\0{second}".encode()).hexdigest()[:12]
    return f"ex{exercise:02d}-{digest}.html"


def _column(title: str, text: str, marked: set[int]) -> dict:
    lines = text.splitlines()
    return {"title": title, "lines": [{"number": i, "text": clean(line, 2000).expandtabs(4), "marked": i in marked}
                                      for i, line in enumerate(lines, 1)],
            "marked": len(marked & set(range(1, len(lines) + 1))), "total": len(lines)}


def write_html(report: SimilarityReport, folder, limit: int = MAX_PAGES) -> list[str]:
    """index.html and one page per flagged pair in folder: matches with public code, then pairs (most
    similar first), then copies of the reference; `limit` pages at most."""
    out = OutputDir(folder)
    env = environment()
    entries = []
    try:
        flagged = [("public", m.exercise, m.submission, m.source, m.similarity, m) for m in report.public]
        flagged += [("pair", p.exercise, p.first, p.second, p.similarity, None) for p in report.pairs]
        flagged += [("reference", m.exercise, m.submission, "reference solution", m.similarity, None)
                    for m in report.reference]
        left_out = max(0, len(flagged) - limit)
        for kind, number, first, second, score, public in flagged[:limit]:
            a_text = report.files[(number, first)]
            a_prints = report.prints[(number, first)]
            columns = []
            if kind == "pair":
                b_text, b_prints = report.files[(number, second)], report.prints[(number, second)]
            elif kind == "reference":
                b_text = report.references[number]
                b_prints = prints_of(b_text)
            else:
                b_text, b_prints = None, _public_prints(public)
            columns.append(_column(first, a_text, matching_lines(a_prints, b_prints)))
            if b_text is not None:
                columns.append(_column(second, b_text, matching_lines(b_prints, a_prints)))
            name = page_name(number, first, second)
            out.write(name, env.get_template("pair.html.j2").render(
                kind=kind, exercise=number, first=first, second=second, similarity=score, columns=columns,
                public=asdict(public) if public else None))
            entries.append({"kind": kind, "exercise": number, "first": first, "second": second,
                            "similarity": score, "page": name})
        out.write("index.html", env.get_template("index.html.j2").render(
            entries=entries, left_out=left_out, clusters=[asdict(c) for c in report.clusters],
            threshold=report.threshold,
            submissions=report.submissions, skipped=report.skipped))
    finally:
        out.close()
    return [e["page"] for e in entries]


def _public_prints(match) -> Prints:
    from grader.instructor.similarity import public_sources

    for source in public_sources():
        if source.name == match.source and source.url == match.url:
            return source.prints
    return Prints()
