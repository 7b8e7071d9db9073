"""HTML pieces every report shares (the batch report, the learner's `--html` page, the notebook's verdict):
the template environment, the code listing with its marked lines, heat-map panels, folded failing tests."""
from __future__ import annotations

import ast
from functools import cache

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from grader.catalog import kit_dir
from grader.explain import heatmap
from grader.sandbox.textsafe import clean
from grader.source import Source

MAX_CODE_LINES = 600
STATUS_LABELS = {"passed": "passed", "failed": "failed", "not_started": "not started", "missing": "missing",
                 "rejected": "rejected", "error": "grader error"}


@cache
def environment() -> Environment:
    loader = ChoiceLoader([FileSystemLoader(str(kit_dir("templates") / "report")),
                           FileSystemLoader(str(kit_dir("templates") / "explain"))])  # svg.html: heat-map panels
    return Environment(loader=loader, undefined=StrictUndefined, autoescape=select_autoescape(["html"]),
                       trim_blocks=True, lstrip_blocks=True, finalize=_shown)


def _shown(value):
    """Every value a template prints: text without control characters (then autoescaped)."""
    return clean(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def marked_lines(source: str, entry: str, failing: list[dict], localization: dict | None = None) -> tuple[set[int], str]:
    """Lines to highlight and why: where the code raised, a syntax error, the localized line, else the entry."""
    raised = {t["line"] for t in failing if isinstance(t.get("line"), int) and t.get("status") != "timeout"}
    if raised:
        return raised, "raised"
    stuck = {t["line"] for t in failing if isinstance(t.get("line"), int)}
    if stuck:  # a timed-out submission's own stack: where it was when its time ran out
        return stuck, "stuck"
    line = localization.get("line") if isinstance(localization, dict) else None
    if isinstance(line, int) and 1 <= line <= len(source.splitlines()):
        return {line}, "localized"
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return ({exc.lineno} if exc.lineno else set()), "syntax"
    except (RecursionError, MemoryError, ValueError):  # nested too deeply to parse: nothing to mark
        return set(), ""
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            return set(range(start, node.end_lineno + 1)), "entry"
    return set(), ""


def code_view(source, entry: str, failing: list[dict], failed: bool, localization: dict | None = None) -> dict | None:
    """source: a grader.source.Source (or its text); a notebook's lines are numbered by cell and line."""
    if source is None:
        return None
    source = source if isinstance(source, Source) else Source(source)
    marks, why = marked_lines(source.text, entry, failing, localization) if failed else (set(), "")
    lines = source.text.splitlines()
    shown = [{"n": i, "label": _number(source, i), "text": text, "mark": i in marks}
             for i, text in enumerate(lines[:MAX_CODE_LINES], start=1)]
    evidence = str(localization.get("evidence", "")) if why == "localized" else ""
    return {"lines": shown, "why": why, "more": max(0, len(lines) - MAX_CODE_LINES), "entry": entry, "evidence": evidence}


def _number(source: Source, line: int) -> str:
    cell = source.cell_of(line)
    return f"{cell[0]}:{cell[1]}" if cell else ("" if source.cells else str(line))


def place(t: dict) -> str:
    """Where a test's line is: "line 12", or "cell 3, line 4" in a notebook."""
    if isinstance(t.get("cell"), int) and isinstance(t.get("cell_line"), int):
        return f"cell {t['cell']}, line {t['cell_line']}"
    return f"line {t['line']}" if isinstance(t.get("line"), int) else ""


def attention_panels(attention: dict | None) -> list[tuple[list[dict], list[str]]]:
    """Per head: ([submission panel, reference panel], their titles), as heatmap.py draws them.

    A blocked key is drawn grey in the submission's panel only where its weight is exactly 0,
    so weight that leaks onto a blocked key shows up as a shaded cell.
    """
    if not attention:
        return []
    blocked, rows, cols = attention["blocked"], attention["queries"], attention["keys"]
    heads = len(attention["submission"])
    out = []
    for h in range(heads):
        got, want = attention["submission"][h], attention["reference"][h]
        got_blocked = [[b and w == 0 for w, b in zip(wr, br)] for wr, br in zip(got, blocked)]
        suffix = f" · head {h + 1}" if heads > 1 else ""
        panels = [{"w": got, "rows": rows, "cols": cols, "blocked": got_blocked},
                  {"w": want, "rows": rows, "cols": cols, "blocked": blocked}]
        out.append((panels, [f"submission{suffix}", f"reference{suffix}"]))
    return out


def heatmap_view(attention: dict | None) -> list[list[dict]]:
    """Per head: [submission panel, reference panel], SVG geometry on one shade scale per head."""
    return [heatmap.svg_panels(panels, titles) for panels, titles in attention_panels(attention)]


def by_cause(failing: list[dict]) -> tuple[list[dict], list[dict]]:
    """Failing tests (JSON) the first diagnosis explains (`explained_by`), and the others: cause first."""
    return [t for t in failing if t.get("explained_by")], [t for t in failing if not t.get("explained_by")]


def grouped(failing: list[dict], shown: int = 4) -> list[dict]:
    """Failing tests with the same status and message folded into one row (a timeout fails them all alike)."""
    groups: dict[tuple, dict] = {}
    for t in failing:
        key = (t["status"], t["message"], t.get("line"))
        g = groups.setdefault(key, {"status": t["status"], "message": t["message"], "line": t.get("line"), "where": place(t),
                                    "names": [], "categories": []})
        g["names"].append(t["name"])
        if t["category"] not in g["categories"]:
            g["categories"].append(t["category"])
    for g in groups.values():
        g["more"] = max(0, len(g["names"]) - shown)
        g["names"] = g["names"][:shown]
    return list(groups.values())
