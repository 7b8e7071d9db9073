"""Turns one topic's content (TOML, per language) plus its live numbers into blocks, and blocks into a page."""
from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from types import SimpleNamespace

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from ..catalog import kit_dir
from . import heatmap, textfmt
from .topics import live_data, torch_version

WIDTH = 78
PAGES = {"term": "page.txt", "md": "page.md", "html": "page.html"}
BLOCK_KINDS = ("text", "list", "note", "code", "table", "heatmap")
COLORS = {
    False: {"bold": "", "reset": "", "code": "", "code_end": "", "head": "", "dim": ""},
    True: {"bold": "\x1b[1m", "reset": "\x1b[0m", "code": "\x1b[36m", "code_end": "\x1b[0m",
           "head": "\x1b[1;34m", "dim": "\x1b[2m"},
}


def templates_dir() -> Path:
    return kit_dir("templates") / "explain"


@cache
def content(lang: str, name: str) -> dict:
    """templates/explain/<lang>/<name>.toml: a topic's Q&A, or _ui for the page's own words."""
    return tomllib.loads((templates_dir() / lang / f"{name}.toml").read_text(encoding="utf-8"))


@cache
def text_env() -> Environment:
    """Content strings are small Jinja templates over the live values; plain text, escaped later by the layout."""
    return Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


@cache
def page_env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        undefined=StrictUndefined,
        autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=False, default=False),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(inline=textfmt.inline, glue=textfmt.glue, wrap=textfmt.wrap, sub=textfmt.html_subscripts,
                       plain_sub=textfmt.plain_subscripts, pad=textfmt.pad, md=textfmt.md_escape,
                       dwidth=heatmap.width, rstrip=str.rstrip)
    return env


def fill(template: str, **values) -> str:
    return text_env().from_string(template).render(**values).strip()


def cell(value, ui: dict) -> str:
    if isinstance(value, bool):
        return ui["yes"] if value else ui["no"]
    return str(value)


def table_block(spec: dict, data: dict, ui: dict, say) -> dict:
    live = data["tables"][spec["table"]]
    head = [say(h) for h in spec["head"]] + list(live["cols"])
    rows = [[cell(v, ui) for v in row] for row in live["rows"]]
    if any(len(row) != len(head) for row in rows):
        raise ValueError(f"table {spec['table']!r}: {len(head)} headings but rows of another length")
    align = ["r" if rows and all(textfmt.is_number(r[i]) for r in rows) else "l" for i in range(len(head))]
    widths = [max(heatmap.width(x) for x in [h, *(r[i] for r in rows)]) for i, h in enumerate(head)]
    return {"kind": "table", "head": head, "rows": rows, "align": align, "widths": widths,
            "code": list(live.get("code", ())), "caption": say(spec.get("caption", ""))}


def heatmap_block(spec: dict, data: dict, ui: dict, say, color: bool, width: int = WIDTH) -> dict:
    panels = data["maps"][spec["heatmap"]]
    titles = [say(t) for t in spec["titles"]]
    if len(titles) != len(panels):
        raise ValueError(f"heat map {spec['heatmap']!r}: {len(panels)} panels but {len(titles)} titles")
    columns = []
    for p in panels:
        if heatmap.numbered(p["cols"]) and p["cols"] not in columns:
            columns.append(p["cols"])
    keys = [fill(ui["columns"], cols=cols) for cols in columns]
    kinds = {heatmap.kind(w, b, 1.0)
             for p in panels for row, brow in zip(p["w"], p["blocked"]) for w, b in zip(row, brow)}
    marks = {"top": f"{heatmap.scale(panels):.2f}", "blocked": "blocked" in kinds, "nan": "nan" in kinds}
    return {
        "kind": "heatmap", "caption": say(spec["caption"]),
        "lines": heatmap.term_lines(panels, titles, color, width - 2),
        "plain": heatmap.term_lines(panels, titles, False, width - 2),
        "svg": heatmap.svg_panels(panels, titles),
        "legend": fill(ui["legend"], **marks), "legend_svg": fill(ui["legend_svg"], **marks), "columns": keys,
    }


def topic_view(topic: str, lang: str, color: bool, width: int = WIDTH) -> dict:
    text, ui, data = content(lang, topic), content(lang, "_ui"), live_data(topic)
    values = SimpleNamespace(**data["values"])

    def say(template: str) -> str:
        return fill(template, v=values)

    blocks = []
    for spec in text["body"]:
        kind = next(k for k in BLOCK_KINDS if k in spec)
        if kind == "text":
            blocks += [{"kind": "p", "text": para} for para in say(spec["text"]).split("\n\n") if para.strip()]
        elif kind == "list":
            blocks.append({"kind": "list", "entries": [say(item) for item in spec["list"]]})
        elif kind == "note":
            blocks.append({"kind": "note", "text": say(spec["note"])})
        elif kind == "code":
            blocks.append({"kind": "code", "text": say(spec["code"]), "lang": spec.get("lang", "python")})
        elif kind == "table":
            blocks.append(table_block(spec, data, ui, say))
        else:
            blocks.append(heatmap_block(spec, data, ui, say, color, width))
    return {"id": topic, "title": say(text["title"]), "question": say(text["question"]), "blocks": blocks}


def page(topics: list[str], lang: str, fmt: str, color: bool, heading: str, width: int = WIDTH) -> str:
    ui = content(lang, "_ui")
    views = [topic_view(t, lang, color and fmt == "term", width) for t in topics]
    template = page_env().get_template(PAGES[fmt])
    return template.render(
        lang=lang, heading=heading, topics=views, ui=ui, width=width,
        c=COLORS[color and fmt == "term"], footer=fill(ui["footer"], torch=torch_version()),
    )
