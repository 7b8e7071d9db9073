"""One terminal screen, redrawn in place: a status line, a scrolling body, a prompt line and a keys line.

Used by `grade watch`. On a terminal it draws in the alternate screen (the shell's scrollback is left
alone) and every row is positioned and cleared on its own, so a frame never scrolls the terminal; the
last column stays empty, so a character that a terminal draws wider than expected cannot wrap either.
Elsewhere (a pipe, a log) each new frame body is printed once, as plain lines.
"""
from __future__ import annotations

import io
import os
import re

from rich.console import Console, RenderableType
from rich.text import Text

from grader.render import wrapped

MIN_ROWS, MIN_COLUMNS = 6, 21  # status, two body rows, prompt, keys; below either only the status line is drawn
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def terminal_size(fd: int) -> tuple[int, int]:
    """(columns, rows) of the terminal on fd, read anew each time (a resize needs no signal); 80×24 when unknown."""
    try:
        size = os.get_terminal_size(fd)
    except OSError:
        return 80, 24
    return (size.columns or 80), (size.lines or 24)


def lines_of(base: Console, body: RenderableType | str, width: int) -> list[str]:
    """The body as lines of at most width cells, with the base console's colours (none under NO_COLOR)."""
    out = Console(file=io.StringIO(), width=max(width, MIN_COLUMNS - 1), color_system=base.color_system, no_color=base.no_color,
                  force_terminal=base.color_system is not None, highlight=False, soft_wrap=True, emoji=False)
    if isinstance(body, str):
        body = wrapped(out, body)
    if isinstance(body, Text):
        rows = body.split("\n", allow_blank=True)
        with out.capture() as cap:
            for row in rows:
                out.print(row, soft_wrap=True, crop=True)
    else:
        with out.capture() as cap:
            out.print(body, crop=True)
    return cap.get().rstrip("\n").split("\n")


def frame(base: Console, *, status: str, body, prompt: str, keys: str, columns: int, rows: int,
          scroll: int) -> tuple[list[str], int, int]:
    """The rows of one screen, the scroll offset kept within the body, and how many body lines there are.

    status, prompt and keys are markup of one line each (cut to the width); body is markup or a rich renderable,
    shown from line `scroll`, with a marker line where more is above or below."""
    width = columns - 1
    top = one_line(base, status, width, style="reverse")
    if rows < MIN_ROWS or columns < MIN_COLUMNS:
        return [top], 0, 0
    content = lines_of(base, body, width)
    room = rows - 3
    total = len(content)
    if total <= room:
        return [top, *content, *[""] * (room - total), one_line(base, prompt, width), one_line(base, keys, width)], 0, total
    scroll = max(0, min(scroll, total - (room - 2)))
    visible = room - 2 if scroll else room - 1  # a marker line below, and above once scrolled
    hidden = total - scroll - visible
    below = one_line(base, f"[dim]  ↓ {lines(hidden)} more: j/↓, space/PgDn, G end[/]" if hidden else "", width)
    above = [one_line(base, f"[dim]  ↑ {lines(scroll)} above: k/↑, b/PgUp, g top[/]", width)] if scroll else []
    return ([top, *above, *content[scroll:scroll + visible], below, one_line(base, prompt, width),
             one_line(base, keys, width)], scroll, total)


def lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def one_line(base: Console, markup: str, width: int, style: str = "") -> str:
    text = Text.from_markup(markup.replace("\n", " "), style=style)
    text.truncate(width, overflow="ellipsis", pad=bool(style))
    return lines_of(base, text, width)[0] if text.plain else ""


class Screen:
    """Draws frames on a terminal in place (full) or prints each new body once (plain)."""

    def __init__(self, out, base: Console, *, full: bool):
        self.out, self.base, self.full = out, base, full
        self.scroll = 0
        self.size = (80, 24)
        self.total = 0
        self._printed: dict[str, str] = {}

    def __enter__(self) -> "Screen":
        if self.full:
            self._write("\x1b[?1049h\x1b[?25l\x1b[2J")  # the alternate screen, no cursor
        return self

    def __exit__(self, *exc) -> None:
        if self.full:
            self._write("\x1b[0m\x1b[H\x1b[2J\x1b[?25h\x1b[?1049l\r")

    def suspend(self) -> None:
        """Hand the terminal to another program (a pager): cursor shown, styles reset, screen cleared."""
        if self.full:
            self._write("\x1b[0m\x1b[2J\x1b[H\x1b[?25h")

    def resized(self) -> bool:
        return self.full and terminal_size(self.out.fileno()) != self.size

    def page_rows(self) -> int:
        return max(1, self.size[1] - 5)

    def draw(self, *, status: str, body, prompt: str, keys: str) -> None:
        if not self.full:
            self._plain(status, body, prompt)
            return
        self.size = terminal_size(self.out.fileno())
        columns, rows = self.size
        lines, self.scroll, self.total = frame(self.base, status=status, body=body, prompt=prompt, keys=keys,
                                               columns=columns, rows=rows, scroll=self.scroll)
        parts = ["\x1b[?25l"]
        for row, line in enumerate(lines, start=1):
            parts.append(f"\x1b[{row};1H{line}\x1b[0m\x1b[K")
        parts.append(f"\x1b[{len(lines) + 1};1H\x1b[J" if len(lines) < rows else "")
        self._write("".join(parts))

    def _plain(self, status: str, body, prompt: str) -> None:
        """A new status line, body or prompt is printed; what was printed already is not printed again."""
        parts = {"status": one_line(self.base, status, 200), "body": "\n".join(lines_of(self.base, body, 100)),
                 "prompt": one_line(self.base, prompt, 200)}
        changed = [text for key, text in parts.items() if text and text != self._printed.get(key)]
        self._printed = parts
        if changed:
            self._write("\n".join(changed) + "\n\n")

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
