"""Typed results: what a grading run produces, and its versioned JSON form (SPEC section 5)."""
from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field

SCHEMA_VERSION = 1


class Status(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    SKIPPED = "skipped"


@dataclass
class TestResult:
    name: str
    category: str
    status: Status
    message: str = ""
    points: int = 1
    line: int | None = None  # the submission line the failure points at, when known
    code: str = ""  # machine-readable failure (grader/failures.py CODES); "" when it passed
    evidence: tuple[str, ...] = ()  # diagnosis ids this failure is evidence for (declared by its check)
    init: dict | None = None  # the constructor arguments of a parametrized check (not in to_json)
    own: bool = False  # a check of the exercise's own module, not a generic one (not in to_json)
    explained_by: str | None = None  # the diagnosis this failure follows from (shown as its consequence)
    cell: int | None = None  # in a notebook: the cell of line, and the line within that cell (counted from 1)
    cell_line: int | None = None
    repro: dict | None = None  # how to reproduce a failed check: {"init", "inputs", "call", "seed", ...} (grade --repro)

    @property
    def score(self) -> int:
        return self.points if self.status is Status.PASSED else 0


@dataclass
class Diagnosis:
    id: str
    title: str
    explanation: str
    hint: str
    evidence: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    exercise: int
    slug: str
    title: str
    tests: list[TestResult]
    diagnoses: list[Diagnosis]
    device: str
    duration_s: float
    state: str = "graded"  # "graded" | "not_started" (untouched, empty or unimplemented: scores 0)
    output: str = ""  # what the submission printed (truncated)
    topics: tuple[str, ...] = ()
    attention: dict | None = None  # submission vs reference weights (grade(capture_attention=True)); not in to_json
    notes: list[str] = field(default_factory=list)  # non-failing remarks, e.g. float32 precision in float64 checks
    localization: dict | None = None  # {"line", "stage", "matched_through", "evidence"} for a failing verdict (feedback only)
    provenance: dict = field(default_factory=dict)  # what produced it (grader/provenance.py)
    sandbox: list[str] = field(default_factory=list)  # what the worker's isolation gave up (a CUDA grade, a weak tier)
    source: object = None  # the graded text, a grader.source.Source (for the views; not in to_json)

    @property
    def credited(self) -> bool:
        """Whether tests earn points: never for a file not started (untouched, empty, unimplemented)."""
        return self.state != "not_started"

    @property
    def score(self) -> int:
        return sum(t.score for t in self.tests) if self.credited else 0

    @property
    def max_score(self) -> int:
        return sum(t.points for t in self.tests)

    @property
    def passed(self) -> bool:
        return bool(self.tests) and all(t.status is Status.PASSED for t in self.tests)

    def failures(self) -> list[TestResult]:
        return [t for t in self.tests if t.status not in (Status.PASSED, Status.SKIPPED)]

    def to_json(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "exercise": self.exercise,
            "slug": self.slug,
            "passed": self.passed,
            "score": self.score,
            "max_score": self.max_score,
            "state": self.state,
            "tests": [
                {"name": t.name, "category": t.category, "status": t.status.value, "message": t.message,
                 "points": t.points, "score": t.score if self.credited else 0, "line": t.line,
                 "cell": t.cell, "cell_line": t.cell_line, "code": t.code,
                 "explained_by": t.explained_by, "repro": t.repro}
                for t in self.tests
            ],
            "diagnoses": [asdict(d) for d in self.diagnoses],
            "device": self.device,
            "duration_s": round(self.duration_s, 3),
            "output": self.output,
            "topics": list(self.topics),
            "localization": self.localization,
            "notes": list(self.notes),
            **({"sandbox": list(self.sandbox)} if self.sandbox else {}),
            "provenance": dict(self.provenance),
        }
