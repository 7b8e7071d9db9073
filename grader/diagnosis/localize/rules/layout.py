"""Rules for values laid out or assigned otherwise: computed twice, rearranged, roles swapped."""
from __future__ import annotations

from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.compare import PARALLEL, matches
from grader.diagnosis.localize.explain import REARRANGED
from grader.diagnosis.localize.model import Localization
from grader.diagnosis.localize.source import assigned_before, bound_at, index_built_at, makes_tensor, reads_size
from grader.diagnosis.localize.text import label
from grader.diagnosis.localize.rules.abstain import ABSTAIN, Abstain
from grader.diagnosis.localize.rules.kinds import MOVES, REARRANGE
from grader.diagnosis.localize.rules.reads import moved_before, rearranged_input, untraced_reads
from grader.diagnosis.localize.rules.tensors import other_roles


def computed_twice(al: Alignment):
    """Queries, keys or values not reproduced, while another of them is computed on two lines (`value =
    self.W_key(x)` after `key = self.W_key(x)`): the second line computes it again where the failing one belongs."""
    if al.failing.name not in PARALLEL:
        return None
    for s in al.earlier:
        if s.name not in PARALLEL:
            continue
        lines = list(dict.fromkeys(e.line for e in al.entries if e.op not in MOVES and e.tensor.numel() == s.tensor.numel()
                                   and matches(e.tensor, s, parts=False)))
        if len(lines) == 2:
            return al.at(lines[1], al.failing, f"line {lines[1]} computes the {label(s.name)} again (as line {lines[0]} "
                                               f"does) where the {label(al.failing.name)} are expected", None)
    return None


def scrambled_layout(al: Alignment):
    """An entry holding a stage's values in another arrangement, before (or at) the picked entry."""
    if al.scrambled is None or (al.pick is not None and al.scrambled[0] > al.pick[0]):
        return None
    i, e, s = al.scrambled
    if s is al.failing and (swapped := swapped_roles(al, e.line)) is not None:
        return swapped
    if moved_before(al, e):  # rearranged over several lines: which of the moves is wrong is not known
        cause = REARRANGED.get(s.name)
        return ABSTAIN if cause is None else Abstain(cause, f"the {label(s.name)} are laid out in a different "
                                                             f"arrangement (a wrong transpose, view or reshape)")
    if any(not n.startswith("self.") and not reads_size(al.source, a) and makes_tensor(al.source, a)
           for n, a in untraced_reads(al, e.line).items()):
        return ABSTAIN  # arranged by a tensor made elsewhere from constants (an index, a permutation)
    if any(makes_tensor(al.source, a) for a in index_built_at(al.source, e.line).values()):
        return ABSTAIN  # `k[:, kv_head]`, `kv_head = torch.arange(h) % g`: the index or the indexing, not known
    before = [p for p in al.stages[:al.stages.index(s)] if al.match[p.name] is not None]
    return al.at(e.line, s, f"the tensor at line {e.line} ({e.op}) holds the values of the {label(s.name)} in a different "
                            f"arrangement (a wrong transpose, view or reshape)", before[-1] if before else None,
                 REARRANGED.get(s.name))


def input_laid_out_otherwise(al: Alignment):
    """Nothing of the failing stage's size: queries, keys or values laid out otherwise, then combined wrongly."""
    if al.pick is None or al.same_size or (moved := rearranged_input(al, al.pick[0])) is None:
        return None
    i, e, s = moved
    return al.at(e.line, s, f"the {label(s.name)} at line {e.line} have shape {tuple(e.tensor.shape)} where the reference's "
                            f"have {tuple(s.tensor.shape)}: the same numbers, but the tensor at line {al.pick[1].line} "
                            f"({al.pick[1].op}) then combines the wrong dimensions", None,
                 REARRANGED.get(s.name) if s.tensor.dim() >= 4 else None)  # split into heads, then laid out otherwise


def swapped_roles(al: Alignment, line: int) -> Localization | None:
    """Queries, keys and values each computed right, by one call that returns them together (a fused split), but
    the scores combine the wrong ones: the roles are assigned in another order on the line where the scores'
    operands got their names (that call's line, or the line unpacking its results)."""
    if al.failing.name != "scores" or any(al.match.get(n) is None for n in ("queries", "keys", "values")):
        return None
    where = {al.entries[al.match[n]].line for n in ("queries", "keys", "values")}
    if len(where) != 1 or line in where:
        return None
    at_line = [e for e in al.entries if e.line == line and e.tensor.numel() == al.failing.tensor.numel()]
    if not any(other_roles(e.tensor, al) for e in at_line):
        return None  # not a product of other roles: something else (a layout inside a helper) differs
    split = where.pop()
    traced = {e.line for e in al.entries}
    operands = {b for n in assigned_before(al.source, line) if (b := bound_at(al.source, line, n)) in traced}
    if len(operands) == 1:
        split = operands.pop()  # where the scores' operands got their names (`v, k, q = [... for c in chunks]`)
    return al.at(split, al.failing, f"line {split} computes the queries, keys and values, but the scores at line {line} "
                                    f"combine other ones than the reference's queries and keys: the results of line "
                                    f"{split} are taken in another order than they are laid out", through=None)


def roles_swapped(al: Alignment):
    return swapped_roles(al, al.pick[1].line)


def merged_otherwise(al: Alignment):
    """A layout-only stage (the merged heads) not reproduced, while one line after the last match only rearranges
    that match's values into the stage's shape (`y.permute(0, 2, 3, 1).reshape(B, T, C)`): that line lays them out
    otherwise. A layout built over several lines abstains (which move is wrong is not known)."""
    f = al.failing
    if not f.strict or al.through is None or al.pick is None:
        return None
    made = [(i, e) for i, e in enumerate(al.entries) if i > al.start and e.op in REARRANGE
            and tuple(e.tensor.shape) == tuple(f.tensor.shape) and matches(e.tensor, al.through)]
    lines = {e.line for _, e in made}
    if len(lines) != 1 or made[-1][0] > al.pick[0]:
        return None
    i, e = made[-1]
    if any(x.op not in MOVES for x in al.entries if x.line == e.line) or moved_before(al, e):
        return ABSTAIN if moved_before(al, e) else None
    return al.at(e.line, f, f"the tensor at line {e.line} ({e.op}) holds the values of the {label(al.through.name)} laid "
                            f"out otherwise than the {label(f.name)} (a wrong transpose, permute, view or reshape)",
                 cause=REARRANGED.get(f.name))
