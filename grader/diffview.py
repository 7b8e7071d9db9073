"""`grade solution N --diff`: the learner's code beside the reference, as a unified diff or side by side.

Both texts are shown as data: escape sequences and control characters are taken out, tabs expanded."""
from __future__ import annotations

import difflib

from grader.sandbox.textsafe import clean

RED, GREEN, CYAN, DIM, BOLD, RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[2m", "\x1b[1m", "\x1b[0m"
CONTEXT = 3
LONGEST = 80  # side by side needs room for this much of each line; longer lines are cut there (…)
GUTTER = 5  # a line number and a space


def lines_of(text: str) -> list[str]:
    return [clean(line).expandtabs(4) for line in text.splitlines()]


def _paint(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{RESET}" if color and text else text


def unified(mine: str, reference: str, *, mine_name: str, ref_name: str, color: bool = False) -> str:
    out = []
    for line in difflib.unified_diff(lines_of(mine), lines_of(reference), mine_name, ref_name, n=CONTEXT, lineterm=""):
        if line.startswith(("---", "+++")):
            out.append(_paint(line, BOLD, color))
        elif line.startswith("@@"):
            out.append(_paint(line, CYAN, color))
        elif line.startswith("-"):
            out.append(_paint(line, RED, color))
        elif line.startswith("+"):
            out.append(_paint(line, GREEN, color))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def fits_side_by_side(mine: str, reference: str, width: int) -> bool:
    longest = max((len(line) for line in lines_of(mine) + lines_of(reference)), default=0)
    return (width - 3) // 2 >= GUTTER + min(longest, LONGEST)


def _cell(number: int | None, text: str | None, column: int) -> str:
    if text is None:
        return " " * column
    room = column - GUTTER
    shown = text if len(text) <= room else text[: room - 1] + "…"
    return f"{number:>4} {shown}".ljust(column)


def side_by_side(mine: str, reference: str, *, mine_name: str, ref_name: str, width: int, color: bool = False) -> str:
    """Two columns, yours on the left; runs of equal lines longer than the context are folded."""
    a, b = lines_of(mine), lines_of(reference)
    column = (width - 3) // 2
    rows = [_paint(f"{mine_name[:column]:<{column}}   {ref_name[:column]}", BOLD, color)]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            pairs = list(zip(range(i1, i2), range(j1, j2)))
            if len(pairs) > 2 * CONTEXT + 1:
                hidden = len(pairs) - 2 * CONTEXT
                pairs = pairs[:CONTEXT] + [None] + pairs[-CONTEXT:]
            for pair in pairs:
                if pair is None:
                    rows.append(_paint(f"{'':>4} ⋯ {hidden} identical lines", DIM, color))
                    continue
                i, j = pair
                rows.append(f"{_cell(i + 1, a[i], column)}   {_cell(j + 1, b[j], column)}".rstrip())
            continue
        left, right = list(range(i1, i2)), list(range(j1, j2))
        mark = {"replace": "|", "delete": "<", "insert": ">"}[tag]
        for k in range(max(len(left), len(right))):
            i = left[k] if k < len(left) else None
            j = right[k] if k < len(right) else None
            lhs = _paint(_cell(i + 1 if i is not None else None, a[i] if i is not None else None, column), RED, color
                         and i is not None)
            rhs = _paint(_cell(j + 1 if j is not None else None, b[j] if j is not None else None, column), GREEN, color
                         and j is not None)
            rows.append(f"{lhs} {mark} {rhs}".rstrip())
    return "\n".join(rows) + "\n"


def render_diff(mine: str, reference: str, *, mine_name: str, ref_name: str, width: int | None = None,
                color: bool = False) -> str:
    """Side by side when width (a terminal's columns) holds both files' lines, else a unified diff."""
    mine_name, ref_name = clean(mine_name, 200), clean(ref_name, 200)
    if lines_of(mine) == lines_of(reference):
        return "Your code is the reference, line for line.\n"
    if width is not None and fits_side_by_side(mine, reference, width):
        return side_by_side(mine, reference, mine_name=mine_name, ref_name=ref_name, width=width, color=color)
    return unified(mine, reference, mine_name=mine_name, ref_name=ref_name, color=color)


def diff_file(path, ex, *, width: int | None = None, color: bool = False) -> str:
    """The learner's file (path) beside exercise ex's reference; source.Unreadable if the file cannot be read."""
    from grader.source import read_submission
    from grader.workspace import solution_text

    mine = read_submission(path)
    return render_diff(mine, solution_text(ex), mine_name=f"{path} (yours)", ref_name=f"{ex.file} (reference)",
                       width=width, color=color)
