"""Q&A explainers: `grade explain N|TOPIC` in English or Chinese, as terminal text, Markdown or HTML."""
from __future__ import annotations

import os

from ..catalog import UnknownExercise, load_catalog
from .topics import FORMATS, LANGS, TOPICS

__all__ = ["ExplainError", "render_explainer", "list_topics", "TOPICS", "LANGS", "FORMATS"]


class ExplainError(ValueError):
    """An unknown topic, exercise, language or format; the message says what to do instead."""


def pick_lang(lang: str | None) -> str:
    """Explicit lang ("zh", "zh_CN", "en-US" ...) or, if None, the locale: LC_ALL, LC_MESSAGES, LANG."""
    if lang is None:
        for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
            value = os.environ.get(var, "")
            if value:
                return "zh" if value.lower().startswith("zh") else "en"
        return "en"
    key = lang.strip().lower().replace("-", "_").split("_")[0]
    if key not in LANGS:
        raise ExplainError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    return key


def resolve(target: str | int, lang: str) -> tuple[list[str], str]:
    """A topic id wins over an exercise slug of the same name (self_attention): use the number for the exercise."""
    from .render import content, fill

    key = str(target).strip()
    if key in TOPICS:
        return [key], ""
    try:
        ex = load_catalog().get(key)
    except UnknownExercise:
        numbers = ", ".join(str(e.number) for e in load_catalog().exercises)
        raise ExplainError(
            f"no explainer for {key!r}: give an exercise number ({numbers}) or a topic: {', '.join(TOPICS)}"
        ) from None
    missing = [t for t in ex.topics if t not in TOPICS]
    if missing:
        raise ExplainError(f"exercise {ex.number} lists topic(s) {', '.join(missing)} with no explainer yet; "
                           f"pick one of its other topics: {', '.join(t for t in ex.topics if t in TOPICS)}")
    ui = content(lang, "_ui")
    title = ui.get("exercise_titles", {}).get(ex.slug, ex.title)
    return list(ex.topics), fill(ui["exercise"], number=ex.number, title=title)


def render_explainer(target: str | int, *, lang: str | None = None, fmt: str = "term", color: bool = False,
                     width: int = 78) -> str:
    """Render the explainers for an exercise (number or slug: all its topics in order) or for one topic.

    width: the terminal's columns for fmt="term" (text wraps at word boundaries within it)."""
    from .render import page

    if fmt not in FORMATS:
        raise ExplainError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    chosen = pick_lang(lang)
    topics, heading = resolve(target, chosen)
    return page(topics, chosen, fmt, color, heading, max(40, width))


def list_topics(lang: str | None = None) -> list[tuple[str, str]]:
    """(topic id, localized title) for every topic, in display order."""
    from .render import content

    chosen = pick_lang(lang)
    return [(t, content(chosen, t)["title"]) for t in TOPICS]
