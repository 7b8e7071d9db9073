"""The follow-up questions an interviewer asks after an exercise, kept as data in templates/interview/LANG/.

Each file is named after an explainer topic (templates/explain/en/TOPIC.toml) and holds
`[[question]]` tables with `id`, `q` (the question) and `a` (the answer). An exercise's questions
are those of its topics, in the order info.toml lists them, so a pack's exercise gets the kit's
questions through its `topics`.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from grader.catalog import Exercise, kit_dir

LANGS = ("en", "zh")


class QuestionError(ValueError):
    """A question file that cannot be read as the format above (the kit's own data: a bug to report)."""


@dataclass(frozen=True)
class Question:
    id: str
    topic: str
    q: str
    a: str


@cache
def topic_questions(topic: str, lang: str) -> tuple[Question, ...]:
    path = kit_dir("templates") / "interview" / lang / f"{topic}.toml"
    if not path.is_file():
        return ()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return tuple(Question(str(q["id"]), topic, q["q"].strip(), q["a"].strip()) for q in data["question"])
    except (tomllib.TOMLDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise QuestionError(f"{path}: {type(exc).__name__}: {exc}") from None


def for_exercise(ex: Exercise, lang: str) -> list[Question]:
    """ex's follow-up questions, each once, in the order of its topics."""
    seen, out = set(), []
    for topic in ex.topics:
        for q in topic_questions(topic, lang):
            if q.id not in seen:
                seen.add(q.id)
                out.append(q)
    return out
