"""Submission-controlled text (exception messages, file and folder names) made safe to show.

clean() strips what could repaint a terminal or hide text (ANSI sequences, control and bidi
characters). The md_* helpers put untrusted text into Markdown as code, where no renderer makes
HTML, links or images of it: `<img onerror=…>`, `[x](http://…)`, `![](http://pixel)` and bare URLs
all show as the characters they are.
"""
from __future__ import annotations

import re

ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-Z\\-_])")
UNSEEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def clean(text, limit: int | None = None) -> str:
    """text without escape sequences and control characters (newlines and tabs kept), at most limit chars."""
    out = UNSEEN.sub("", ANSI.sub("", str(text)))
    if limit is not None and len(out) > limit:
        out = out[:max(0, limit - 1)] + "…"
    return out


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
