"""Small text helpers used as Jinja filters: inline markup, display width, wrapping, Markdown escaping."""
from __future__ import annotations

import re

from rich.cells import cell_len as width

INLINE = re.compile(r"(`[^`]+`|\*\*[^*]+\*\*)")
CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
TOKEN = re.compile(rf"\x1b\[[0-9;]*m|\s+|[{CJK}]|[^\s\x1b{CJK}]+")
NO_LINE_START = set("，。、；：！？）》」』”’,.;:!?)%")
NO_LINE_END = set("（《「『“‘(")
MD_SPECIAL = re.compile(r"([\\*<>\[\]|`]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")
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
    """Greedy wrap that counts wide (CJK) characters as two columns, breaks at spaces and between CJK
    characters, keeps closing punctuation off the start of a line (and opening off the end), and
    ignores ANSI colour codes."""
    rest = first if rest is None else rest
    lines, line = [], first
    spot = None  # where the current line may last be broken: index into line
    content = space = prev_cjk = False
    prev = ""
    for tok in TOKEN.findall(" ".join(text.split("\n"))):
        if tok.startswith("\x1b"):
            line += tok
            continue
        if tok.isspace():
            space = content
            continue
        is_cjk = bool(re.match(f"[{CJK}]", tok))
        breakable = (content and (space or is_cjk or prev_cjk) and tok[0] not in NO_LINE_START
                     and prev[-1:] not in NO_LINE_END)
        if breakable:
            spot = len(line)
        piece = (" " if space else "") + tok
        if width(strip_ansi(line + piece)) > columns and spot is not None and spot > len(rest if lines else first):
            lines.append(line[:spot].rstrip())
            line = rest + line[spot:].lstrip()
            spot = None
            piece = piece.lstrip() if line == rest else piece
        line += piece
        content, space, prev_cjk, prev = True, False, is_cjk, tok
    lines.append(line.rstrip())
    return "\n".join(lines)


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def pad(text: str, size: int, align: str = "l") -> str:
    fill = " " * max(0, size - width(text))
    return fill + text if align == "r" else text + fill


def md_escape(text: str) -> str:
    return MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def is_number(text: str) -> bool:
    return bool(NUMBER.match(text))
