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
GLUE = "\ue000"  # a space inside inline code: wrap never breaks there, and prints it as a space
SUBSCRIPT = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z])_([A-Za-z0-9]{1,5})(?![A-Za-z0-9_(])")
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


def glue(code: str) -> str:
    """Inline code kept on one line by wrap (its spaces glued)."""
    return code.replace(" ", GLUE)


def wrap(text: str, columns: int = 78, first: str = "", rest: str | None = None) -> str:
    """Greedy wrap that counts wide (CJK) characters as two columns, breaks at spaces and between CJK
    characters, keeps closing punctuation off the start of a line (and opening off the end), and
    ignores ANSI colour codes. Glued inline code stays on one line unless it is wider than a line."""
    rest = first if rest is None else rest
    room = columns - max(width(first), width(rest))
    text = re.sub(rf"[^\s{CJK}]*{GLUE}[^\s{CJK}]*", lambda m: m[0] if width(strip_ansi(m[0])) <= room else m[0].replace(GLUE, " "), text)
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
    return "\n".join(lines).replace(GLUE, " ")


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def pad(text: str, size: int, align: str = "l") -> str:
    fill = " " * max(0, size - width(text))
    return fill + text if align == "r" else text + fill


def html_subscripts(text: str):
    """HTML for a heading or a sentence with d_k, d_v, d_model: the letter after the underscore as a subscript."""
    from markupsafe import Markup, escape

    return Markup(SUBSCRIPT.sub(r"\1<sub>\2</sub>", str(escape(text))))


SUBSCRIPT_FROM, SUBSCRIPT_TO = "aehijklmnoprstuvx0123456789", "ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₀₁₂₃₄₅₆₇₈₉"


def plain_subscripts(text: str) -> str:
    """d_k as dₖ where markup cannot go (an HTML <title>), when Unicode has a subscript for every letter."""
    table = str.maketrans(SUBSCRIPT_FROM, SUBSCRIPT_TO)
    return SUBSCRIPT.sub(lambda m: m[1] + m[2].translate(table) if set(m[2]) <= set(SUBSCRIPT_FROM) else m[0], text)


def md_escape(text: str) -> str:
    return MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def is_number(text: str) -> bool:
    return bool(NUMBER.match(text))
