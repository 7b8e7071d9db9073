"""Small text helpers used as Jinja filters: inline markup, display width, wrapping, Markdown escaping."""
from __future__ import annotations

import re

from .heatmap import width

INLINE = re.compile(r"(`[^`]+`|\*\*[^*]+\*\*)")
CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f"
TOKEN = re.compile(rf"\x1b\[[0-9;]*m|\s+|[{CJK}]|[^\s\x1b{CJK}]+")
NO_LINE_START = set("，。、；：！？）》」』,.;:!?)%")
MD_SPECIAL = re.compile(r"([\\*_<>\[\]|])")
NUMBER = re.compile(r"^-?[\d,]*\.?\d+(e[+-]?\d+)?( [KMG]iB| B)?$|^-?inf$|^nan$")


def inline(text: str) -> list[tuple[str, str]]:
    """Split `code` and **bold** spans out of a content string: [(kind, text), ...]."""
    parts = []
    for piece in INLINE.split(text):
        if not piece:
            continue
        if piece.startswith("`") and piece.endswith("`") and len(piece) > 1:
            parts.append(("code", piece[1:-1]))
        elif piece.startswith("**") and piece.endswith("**") and len(piece) > 4:
            parts.append(("bold", piece[2:-2]))
        else:
            parts.append(("text", piece))
    return parts


def wrap(text: str, columns: int = 78, first: str = "", rest: str | None = None) -> str:
    """Greedy wrap that counts wide (CJK) characters as two columns, breaks between CJK characters
    and at spaces, keeps closing punctuation off the start of a line, and ignores ANSI colour codes."""
    rest = first if rest is None else rest
    lines, line, used, content, space, prev_cjk = [], first, width(first), False, False, False
    for tok in TOKEN.findall(" ".join(text.split("\n"))):
        if tok.startswith("\x1b"):
            line += tok
            continue
        if tok.isspace():
            space = content
            continue
        is_cjk = bool(re.match(f"[{CJK}]", tok))
        gap = 1 if space else 0
        can_break = content and (space or is_cjk or prev_cjk) and tok[0] not in NO_LINE_START
        if can_break and used + gap + width(tok) > columns:
            lines.append(line.rstrip())
            line, used, gap = rest, width(rest), 0
        line += " " * gap + tok
        used += gap + width(tok)
        content, space, prev_cjk = True, False, is_cjk
    lines.append(line.rstrip())
    return "\n".join(lines)


def pad(text: str, size: int, align: str = "l") -> str:
    fill = " " * max(0, size - width(text))
    return fill + text if align == "r" else text + fill


def md_escape(text: str) -> str:
    return MD_SPECIAL.sub(r"\\\1", text)


def is_number(text: str) -> bool:
    return bool(NUMBER.match(text))
