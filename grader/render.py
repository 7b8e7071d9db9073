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


def shown_failures(v: Verdict, *, verbose: bool = False, limit: int = 6) -> tuple[list, int, int]:
    """The failing tests worth showing, how many follow from the first diagnosis and are not shown, and how
    many more are not shown (the same message again): the separate problems first, then two consequences."""
    failures = v.failures()
    separate = [t for t in failures if t.explained_by is None]
    following = [t for t in failures if t.explained_by is not None]
    shown, seen = [], set()
    for t in separate + following[:2]:
        if verbose or (t.message not in seen and len(shown) < limit):
            shown.append(t)
            seen.add(t.message)
    consequences = 0 if verbose else sum(t not in shown for t in following)
    return shown, consequences, len(failures) - len(shown) - consequences


def verdict_text(v: Verdict, *, path: str, path_arg: str = "", verbose: bool = False, limit: int = 6,
                 watching: bool = False, upcoming=None) -> str:
    """Rich-markup text for one verdict; repeated identical messages are folded unless verbose.
    upcoming: the exercise to do next (Workspace.next_exercise); without it, the one after in the catalog."""
    catalog = load_catalog()
    ex = catalog.get(v.exercise)
    failures = v.failures()
    shown, consequences, hidden = shown_failures(v, verbose=verbose, limit=limit)
    return environment().get_template("verdict.term.j2").render(
        v=v, failures=failures, shown=shown, consequences=consequences, hidden=hidden, verbose=verbose,
        diagnosis=v.diagnoses[0] if v.diagnoses else None, hints=ex.hints, next=upcoming or catalog.next_after(ex),
        path=path, path_arg=path_arg, watching=watching)


STATUS_STYLE = {"passed": "[green]✓ passed[/]", "passed, failing now": "[yellow]✓ passed (failing now)[/]",
                "in progress": "[yellow]in progress[/]", "not started": "not started"}


def progress_table(ws, catalog, *, current=None):
    """The exercises with their titles and the workspace's status of each (`grade list`, and `l` in watch, which
    marks the exercise it watches with ▸); ws None: no status."""
    from rich.table import Table

    table = Table(*([""] if current else []), "#", "slug", "title", "status", box=None, pad_edge=False)
    for ex in catalog.exercises:
        mark = ["[bold]▸[/]" if ex.number == current.number else ""] if current else []
        table.add_row(*mark, str(ex.number), ex.slug, escape(ex.title), "-" if ws is None else STATUS_STYLE[ws.status(ex)])
    return table


def watch_parts():
    """The macros of templates/watch.term.j2 that make up watch's screen (status, verdict, prompt, keys...)."""
    return environment().get_template("watch.term.j2").module


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
