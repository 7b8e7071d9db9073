"""`grade interview`: a timed mock interview on one exercise, a scorecard, then the follow-up questions.

page.py picks the exercise and writes the page (the contract, no steps), card.py keeps the session's
attempts and score, screen.py runs the terminal (watch's file watching and warm grading),
questions.py reads the follow-up questions kept in templates/interview/.
"""
from __future__ import annotations

from pathlib import Path

from grader import history
from grader.interview.card import Session, rules
from grader.interview.page import PickError, pick, write_page
from grader.interview.questions import for_exercise

__all__ = ["PickError", "follow_ups", "interview", "offer", "pick", "prepare", "run"]


def prepare(*, catalog, exercise, topic: str | None, level: str | None, seed: int | None, folder: Path,
            backups: Path) -> dict:
    """Pick the exercise (seed drawn when None and nothing else decides) and write its page into folder."""
    drawn = exercise is None and seed is None
    if drawn:
        import secrets

        seed = secrets.randbelow(10_000)
    ex = pick(catalog, number=exercise, topic=topic, level=level, seed=seed or 0)
    path, backup, text = write_page(ex, folder, backups)
    return {"ex": ex, "path": path, "page": text, "backup": backup, "seed": None if exercise is not None else seed}


def run(*, catalog, exercise, topic: str | None, level: str | None, seed: int | None, folder: Path, backups: Path,
        minutes: float, hints: bool, timeout: float, allow_weak: bool, lang: str, reveal: bool, console,
        stdin) -> tuple[bool, str | None]:
    """A whole interview: the draw and the page, the timed session and its scorecard, the follow-up questions.
    Returns (passed, a one-line problem saving the history or None)."""
    picked = prepare(catalog=catalog, exercise=exercise, topic=topic, level=level, seed=seed, folder=folder,
                     backups=backups)
    session, problem = interview(ex=picked["ex"], path=picked["path"], page=picked["page"], minutes=minutes,
                                 hints=hints, timeout=timeout, allow_weak=allow_weak, console=console, stdin=stdin,
                                 seed=picked["seed"], backup=picked["backup"])
    follow_ups(ex=picked["ex"], lang=lang, console=console, stdin=stdin, reveal=reveal)
    return session.passed is not None, problem


def interview(*, ex, path: Path, page: str, minutes: float, hints: bool, timeout: float, allow_weak: bool,
              console, stdin, seed: int | None = None, backup: Path | None = None) -> tuple[Session, str | None]:
    """Run the interview and print its scorecard; (the session, a one-line problem saving the history or None)."""
    from grader.diagnosis import make
    from grader.interview import screen
    from grader.render import show

    m = screen.macros()
    show(console, m.start(ex, str(path), screen.clock(minutes * 60), rules(hints), seed, str(backup) if backup else ""))
    session = Session(ex.number, minutes, hints, page)
    screen.run(ex=ex, path=path, session=session, console=console, stdin=stdin, timeout=timeout, allow_weak=allow_weak)
    card = session.card()
    show(console, m.scorecard(ex, card, screen.clock))
    last = session.attempts[-1].mistake if session.attempts and not session.passed else None
    show(console, m.afterwards(ex, make(last) if last else None))
    problem = history.record_interview(ex, card)
    return session, problem


def follow_ups(*, ex, lang: str, console, stdin, reveal: bool) -> None:
    from grader.interview.screen import ask

    ask(ex=ex, questions=for_exercise(ex, lang), console=console, stdin=stdin, reveal=reveal)


def offer(ex, lang: str, count: int = 2) -> str | None:
    """Rich markup naming a passed exercise's first follow-up questions, or None when it has none."""
    from grader.interview.screen import macros

    questions = for_exercise(ex, lang)[:count]
    return macros().offer(ex, questions) if questions else None
