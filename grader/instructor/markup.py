"""Submission-controlled text (exception messages, file and folder names) made safe to show.

clean() strips what could repaint a terminal or hide text (ANSI sequences, control and bidi
characters). The md_* helpers put untrusted text into Markdown as code, where no renderer makes
HTML, links or images of it: `<img onerror=…>`, `[x](http://…)`, `![](http://pixel)` and bare URLs
all show as the characters they are.
"""
from __future__ import annotations

import re

from grader.sandbox.textsafe import clean  # the one sanitizer, also applied at the worker boundary

__all__ = ["clean", "md_block", "md_code"]


def _fence(text: str, minimum: int) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(minimum, longest + 1)


def md_code(text, limit: int | None = 300) -> str:
    """One line of untrusted text as a Markdown code span."""
    body = " ".join(clean(text, limit).split()) or " "
    fence = _fence(body, 1)
    return f"{fence} {body} {fence}"


def md_block(text, limit: int | None = 4000) -> str:
    """Untrusted text, kept line by line, as a fenced Markdown code block."""
    body = clean(text, limit).rstrip("\n")
    fence = _fence(body, 3)
    return f"{fence}text\n{body}\n{fence}"
