"""One mock interview's record: attempts, mistakes, hints, time, and the score they give.

Scoring (stated before the interview starts): a pass is worth 100; without one, the best attempt's
share of the checks' points is worth up to 50. Each failing attempt costs 5 (at most 30 in all) and
each hint 10 (only with --hints). The score never goes below 0.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

PASS, PARTIAL = 100, 50
ATTEMPT_COST, ATTEMPT_COST_MAX = 5, 30
HINT_COST = 10


def rules(hints_allowed: bool) -> str:
    hints = f"each hint costs {HINT_COST} (h)" if hints_allowed else "no hints until the end"
    return (f"Scoring: {PASS} for a pass (without one, up to {PARTIAL} for your best attempt's share of the points); "
            f"-{ATTEMPT_COST} per failing attempt (at most -{ATTEMPT_COST_MAX}); {hints}.")


@dataclass
class Attempt:
    at_s: float  # seconds since the start when the save was graded
    passed: bool
    score: int
    max_score: int
    mistake: str | None  # the first diagnosis id of a failing attempt
    title: str = ""


@dataclass
class Session:
    exercise: int
    minutes: float
    hints_allowed: bool
    page: str  # the page as written: saving it unchanged is not an attempt
    clock: object = time.monotonic
    started: float = 0.0
    attempts: list[Attempt] = field(default_factory=list)
    hints: int = 0
    ended: str | None = None  # "passed", "time" or "quit"

    def __post_init__(self):
        self.started = self.clock()

    def elapsed(self) -> float:
        return self.clock() - self.started

    def out_of_time(self) -> bool:
        return self.elapsed() >= self.minutes * 60

    def note(self, verdict, text: str, at: float) -> Attempt | None:
        """A graded save; None when it is no attempt (the page unchanged, or nothing written yet)."""
        if text.split() == self.page.split() or verdict.state == "not_started":
            return None
        first = verdict.diagnoses[0] if verdict.diagnoses and not verdict.passed else None
        attempt = Attempt(round(at, 1), verdict.passed, verdict.score, verdict.max_score,
                          first.id if first else None, first.title if first else "")
        self.attempts.append(attempt)
        if verdict.passed and self.ended is None:
            self.ended = "passed"
        return attempt

    @property
    def passed(self) -> Attempt | None:
        return next((a for a in self.attempts if a.passed), None)

    def mistakes(self) -> list[dict]:
        """The named mistakes in the order they were made; the same one saved again in a row counts once."""
        out: list[dict] = []
        for n, a in enumerate(self.attempts, 1):
            if a.mistake and not (out and out[-1]["id"] == a.mistake and out[-1]["last_attempt"] == n - 1):
                out.append({"id": a.mistake, "title": a.title, "attempt": n, "last_attempt": n})
            elif a.mistake:
                out[-1]["last_attempt"] = n
        return out

    def failing(self) -> int:
        return sum(not a.passed for a in self.attempts)

    def breakdown(self) -> dict:
        """What the score is made of: {"base", "attempts", "hints"} (the last two are costs)."""
        if self.passed:
            base = PASS
        else:
            best = max((a.score / a.max_score for a in self.attempts if a.max_score), default=0.0)
            base = round(PARTIAL * best)
        return {"base": base, "attempts": min(ATTEMPT_COST * self.failing(), ATTEMPT_COST_MAX),
                "hints": HINT_COST * self.hints}

    def score(self) -> int:
        parts = self.breakdown()
        return max(0, parts["base"] - parts["attempts"] - parts["hints"])

    def card(self) -> dict:
        """The scorecard as data (history and --json keep it as it is)."""
        won = self.passed
        return {"passed": won is not None, "ended": self.ended or "quit", "minutes": self.minutes,
                "elapsed_s": round(self.elapsed(), 1), "time_to_pass_s": won.at_s if won else None,
                "attempts": len(self.attempts), "failing_attempts": self.failing(),
                "mistakes": [{"id": m["id"], "title": m["title"], "attempt": m["attempt"]} for m in self.mistakes()],
                "hints": self.hints, "hints_allowed": self.hints_allowed, "score": self.score(),
                "breakdown": self.breakdown()}
