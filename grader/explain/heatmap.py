"""Attention-weight heat maps: Unicode block lines for the terminal, cell geometry for the SVG template."""
from __future__ import annotations

import math
import re

from rich.cells import cell_len

SHADES = ("  ", "░░", "▒▒", "▓▓", "██")
BLOCKED, NAN = "··", "!!"
ANSI = {0: "", 1: "\x1b[38;5;153m", 2: "\x1b[38;5;111m", 3: "\x1b[38;5;69m", 4: "\x1b[38;5;27m",
        "blocked": "\x1b[38;5;244m", "nan": "\x1b[38;5;196m"}
RESET = "\x1b[0m"


def width(text: str) -> int:
    """Terminal cells the text takes (wide CJK characters take two), as rich measures them."""
    return cell_len(text)


def scale(panels: list[dict]) -> float:
    """The largest visible weight in a group: every panel of the group shares one shade scale."""
    values = [w for p in panels for row, brow in zip(p["w"], p["blocked"]) for w, b in zip(row, brow)
              if not b and not math.isnan(w)]
    return max(values, default=1.0) or 1.0


def kind(w: float, blocked: bool, top: float):
    """"nan", "blocked", or a shade level: 0 below 2 % of the top weight, else 1-4 by quarters."""
    if math.isnan(w):
        return "nan"
    if blocked:
        return "blocked"
    share = w / top
    return 0 if share < 0.02 else min(4, math.ceil(share * 4))


def numbered(cols: list[str]) -> bool:
    """Long column labels are replaced by numbers in the terminal picture (and listed under it)."""
    return max(width(c) for c in cols) > 2


def panel_lines(p: dict, title: str, top: float, color: bool) -> list[str]:
    label_w = max(width(r) for r in p["rows"])
    names = [str(j + 1) for j in range(len(p["cols"]))] if numbered(p["cols"]) else p["cols"]
    head = " " * (label_w + 1) + " ".join(" " * (2 - width(n)) + n for n in names)
    lines = [title, head]
    for label, row, brow in zip(p["rows"], p["w"], p["blocked"]):
        cells = []
        for w, b in zip(row, brow):
            k = kind(w, b, top)
            glyph = {"blocked": BLOCKED, "nan": NAN}.get(k) if isinstance(k, str) else SHADES[k]
            cells.append(f"{ANSI[k]}{glyph}{RESET}" if color and ANSI[k] else glyph)
        lines.append(label + " " * (label_w - width(label) + 1) + " ".join(cells))
    return lines


def term_lines(panels: list[dict], titles: list[str], color: bool = False, max_width: int = 78) -> list[str]:
    """Panels side by side (wrapping to a new band when the line would pass max_width)."""
    top = scale(panels)
    blocks = [panel_lines(p, t, top, color) for p, t in zip(panels, titles)]
    widths = [max(width(strip(line)) for line in b) for b in blocks]
    out, band, used = [], [], 0
    for block, w in zip(blocks, widths):
        if band and used + 4 + w > max_width:
            out += join_band(band) + [""]
            band, used = [], 0
        band.append((block, w))
        used += w + (4 if used else 0)
    return out + join_band(band)


def join_band(band) -> list[str]:
    height = max(len(b) for b, _ in band)
    lines = []
    for i in range(height):
        parts = []
        for block, w in band:
            line = block[i] if i < len(block) else ""
            parts.append(line + " " * (w - width(strip(line))))
        lines.append("    ".join(parts).rstrip())
    return lines


def strip(line: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", line)


def svg_panel(p: dict, title: str, top: float, cell: int = 38) -> dict:
    """Geometry for one SVG panel; the template draws it."""
    left = 14 + 7 * max(len(r) for r in p["rows"])
    head = 30 + 6 * max(len(c) for c in p["cols"])
    cells = []
    for i, (row, brow) in enumerate(zip(p["w"], p["blocked"])):
        for j, (w, b) in enumerate(zip(row, brow)):
            k = kind(w, b, top)
            special = isinstance(k, str)
            alpha = 0.0 if special else round(max(w, 0.0) / top, 3)
            text = {"blocked": "", "nan": "NaN"}[k] if special else f"{w:.2f}"
            cells.append({"x": left + j * cell, "y": head + i * cell, "kind": k if special else "w",
                          "alpha": alpha, "dark": alpha > 0.55, "text": text})
    return {
        "title": title, "cell": cell, "cells": cells,
        "rows": [{"x": left - 6, "y": head + i * cell + cell / 2, "text": r} for i, r in enumerate(p["rows"])],
        "cols": [{"x": left + j * cell + cell / 2, "y": head - 6, "text": c} for j, c in enumerate(p["cols"])],
        "width": left + cell * len(p["cols"]) + 8, "height": head + cell * len(p["rows"]) + 8,
    }


def svg_panels(panels: list[dict], titles: list[str]) -> list[dict]:
    top = scale(panels)
    return [svg_panel(p, t, top) for p, t in zip(panels, titles)]
