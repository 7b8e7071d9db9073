"""Terminal presentation: Jinja templates from templates/, printed through rich (honours NO_COLOR)."""
from __future__ import annotations

import re
from functools import cache

import jinja2
from rich.console import Console
from rich.markup import escape
from rich.cells import cell_len
from rich.text import Text

from grader.catalog import kit_dir, load_catalog
from grader.results import Verdict


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(kit_dir("templates")), undefined=jinja2.StrictUndefined,
                             autoescape=False, keep_trailing_newline=False)
    env.filters["esc"] = lambda s: escape(str(s))
    return env


def verdict_text(v: Verdict, *, path: str, path_arg: str = "", verbose: bool = False, limit: int = 6,
                 watching: bool = False) -> str:
    """Rich-markup text for one verdict; repeated identical messages are folded unless verbose."""
    catalog = load_catalog()
    ex = catalog.get(v.exercise)
    failures = v.failures()
    # separate problems first; the failures the first diagnosis explains are its consequences: two as examples
    separate = [t for t in failures if t.explained_by is None]
    following = [t for t in failures if t.explained_by is not None]
    shown, seen = [], set()
    for t in separate + following[:2]:
        if verbose or (t.message not in seen and len(shown) < limit):
            shown.append(t)
            seen.add(t.message)
    consequences = 0 if verbose else sum(t not in shown for t in following)
    return environment().get_template("verdict.term.j2").render(
        v=v, failures=failures, shown=shown, consequences=consequences,
        hidden=len(failures) - len(shown) - consequences, verbose=verbose,
        diagnosis=v.diagnoses[0] if v.diagnoses else None, hints=ex.hints, next=catalog.next_after(ex),
        path=path, path_arg=path_arg, watching=watching)


def hint_text(ex, level: int) -> str:
    return f"Hint {level}/{len(ex.hints)} for exercise {ex.number} ({ex.slug}):\n  {ex.hints[level - 1]}"


def wrapped(out: Console, markup: str) -> Text:
    """Markup as rich Text, each line broken at word boundaries to the console's width, keeping its indent."""
    width = max(20, out.width)
    lines = []
    for line in Text.from_markup(markup).split("\n", allow_blank=True):
        plain = line.plain
        indent = min(len(plain) - len(plain.lstrip(" ")), width // 2)
        if cell_len(plain) <= width or not plain.strip():
            lines.append(line)
            continue
        label = re.match(r" *(?:[a-z][a-z ]{0,15}: )?", plain).end()  # "evidence: ..." hangs under its text
        hang = label if label - indent <= 10 else indent + 2
        first, *rest = line[indent:].wrap(out, width - indent, overflow="fold")
        for piece in rest:
            piece.rstrip()
        pieces = [(indent, first)]
        if rest:
            pieces += [(hang, p) for p in Text(" ").join(rest).wrap(out, width - hang, overflow="fold")]
        for margin, piece in pieces:
            piece.rstrip()
            lines.append(Text(" " * margin) + piece)
    return Text("\n").join(lines)


def show(out: Console, markup: str) -> None:
    """Print markup wrapped to the terminal's width (rich never breaks inside a word then)."""
    out.print(wrapped(out, markup), soft_wrap=True)


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def repro_text(v: Verdict, *, ex, path) -> str:
    """A short script that reproduces the first failing check (grade exercise N --repro)."""
    from grader.repro import script

    return script(v, ex=ex, path=path)
