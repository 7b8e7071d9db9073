"""What every rule reads: the submission's entries lined up with the reference's stages.

The last stage the submission reproduces (`through`), the first it does not (`failing`), the entries that match
no stage (`odd`) and the first of them after the last match (`pick`), and how that one differs (`how`).
"""
from __future__ import annotations

from functools import cached_property

from grader.diagnosis.layout import equivalent, rtol_for, same_values
from grader.diagnosis.localize.compare import first_failing, matches, part_dims, prepare
from grader.diagnosis.localize.explain import explain_part
from grader.diagnosis.localize.model import Localization, Stage, Traced
from grader.diagnosis.localize.text import label


def also_computed(e: Traced, reference: list[Traced]) -> bool:
    """The reference computes this tensor too, on a line that names no stage (x[..., :half], cos, a slice of x), or
    both halves of its last dim (`x * cos` on the whole vector where the reference takes `x1 * cos`, `x2 * cos`):
    an intermediate both compute is not where the submission parts from the reference."""
    def computed(t):
        return any(r.tensor.numel() == t.numel() and equivalent(t, r.tensor) for r in reference)
    if computed(e.tensor):
        return True
    n = e.tensor.shape[-1] if e.tensor.dim() else 1
    return n > 1 and n % 2 == 0 and all(computed(h) for h in e.tensor.split(n // 2, dim=-1))


class Alignment:
    def __init__(self, entries: list[Traced], stages: list[Stage], raised: dict | None = None, *, train: bool = False,
                 source: str = "", reference: list[Traced] = (), consts=(), reference_consts=(),
                 ran: frozenset[int] = frozenset()):
        self.entries, self.stages, self.raised, self.train = entries, stages, raised, train
        self.ran = ran  # lines an earlier traced call ran while reproducing every stage (another path: flash=False)
        self.source, self.reference = source, list(reference)
        self.consts = list(consts)  # the submission's masks and tables, by the index entries' `uses` name (None: dropped)
        self.reference_consts = list(reference_consts)  # what the reference computes, to compare them with
        self.alts = prepare(stages)
        self.match = {s.name: next((i for i, e in enumerate(entries) if matches(e.tensor, s)), None) for s in stages}
        self.failing = first_failing(stages, self.match)

    @property
    def earlier(self) -> list[Stage]:
        """The stages before the failing one that the submission reproduces."""
        k = self.stages.index(self.failing)
        return [s for s in self.stages[:k] if self.match[s.name] is not None]

    @property
    def later(self) -> list[Stage]:
        return self.stages[self.stages.index(self.failing) + 1:]

    @property
    def through(self) -> Stage | None:
        return self.earlier[-1] if self.earlier else None

    @property
    def start(self) -> int:
        """The index of the entry matching `through` (-1 when none does)."""
        return self.match[self.through.name] if self.through is not None else -1

    @cached_property
    def odd(self) -> list[tuple[int, Traced]]:
        """Entries that match no stage and that the reference does not compute either."""
        return [(i, e) for i, e in enumerate(self.entries) if not any(matches(e.tensor, s) for s in self.stages + self.alts)
                and not also_computed(e, self.reference)]

    @cached_property
    def scrambled(self) -> tuple[int, Traced, Stage] | None:
        """The first odd entry holding a stage's values in another arrangement."""
        return next(((i, e, s) for i, e in self.odd for s in [self.failing] + self.earlier
                     if e.tensor.numel() == s.tensor.numel() and same_values(e.tensor, s.tensor, rtol_for(e.tensor, s.tensor))),
                    None)

    @cached_property
    def rest(self) -> list[tuple[int, Traced]]:
        """Odd entries after `through`; for a stage the reference computes from the data, not those made from a mask
        or positions alone (`visible = (~mask).float()`, then `scores * visible`): an operand, not the data flow."""
        return [(i, e) for i, e in self.odd if i > self.start and (e.data or not self.failing.data)]

    @cached_property
    def same_size(self) -> list[tuple[int, Traced]]:
        """Odd entries after `through` of the failing stage's size (or of one head of it)."""
        f = self.failing
        return [(i, e) for i, e in self.rest if e.tensor.numel() == f.tensor.numel() or part_dims(e.tensor, f)]

    @cached_property
    def pick(self) -> tuple[int, Traced] | None:
        """The entry where the submission parts from the reference: the first odd one of the failing stage's size."""
        return self.same_size[0] if self.same_size else (self.rest[0] if self.rest else None)

    @cached_property
    def how(self) -> tuple[str, Stage | None, str | None]:
        """explain_part() of the picked entry: (the sentence, the stage it derives from, the diagnosis id)."""
        return explain_part(self.pick[1].tensor, self.failing, self.later, self.earlier, self.alts)

    def at(self, line: int, stage: Stage, evidence: str, through: Stage | None = ..., cause: str | None = None) -> Localization:
        through = self.through if through is ... else through
        return Localization(line, stage.name, through.name if through else None, evidence, cause)

    def prefix(self) -> str:
        t = self.through
        return "" if t is None else (f"your code matches the reference through the {label(t.name)} "
                                     f"(line {self.entries[self.match[t.name]].line}); ")
