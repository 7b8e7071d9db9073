"""No line can be trusted: Abstain, and the one ABSTAIN most rules return."""
from __future__ import annotations


class Abstain:
    """No line can be trusted. `cause`: the mistake the difference still names (a diagnosis id) when only its line
    is ambiguous (heads laid out wrongly over two lines), with `evidence` for its message."""
    def __init__(self, cause: str | None = None, evidence: str = ""):
        self.cause, self.evidence = cause, evidence

    def __repr__(self) -> str:
        return "ABSTAIN" if self.cause is None else f"ABSTAIN({self.cause})"


ABSTAIN = Abstain()
