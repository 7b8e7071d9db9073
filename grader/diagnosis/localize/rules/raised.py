"""The rule for a forward that raised before computing the failing stage."""
from __future__ import annotations

from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.compare import PARALLEL
from grader.diagnosis.localize.source import (assigned_before, binary_operands, built_elsewhere, aliases, in_helper, mask_built_at,
                                             passed_unshaped, size_chosen_elsewhere,
                                             sizes_computed_elsewhere)
from grader.diagnosis.localize.text import label
from grader.diagnosis.localize.rules.abstain import ABSTAIN
from grader.diagnosis.localize.rules.reads import cast_elsewhere, shaped_elsewhere


def raised_here(al: Alignment):
    """The forward raised before any entry of the failing stage's size: the line that raised."""
    raised, pick = al.raised, al.pick
    if raised is None or not raised.get("line") or not (pick is None or (not al.same_size and pick[1].line >= raised["line"])):
        return None
    elsewhere, built = mask_built_at(al.source, raised["line"])
    if elsewhere and built is None and al.failing.name == "masked_scores":
        return ABSTAIN  # raised applying a mask built over several lines: which one is wrong is not known
    if elsewhere and built is not None:  # a mask that does not broadcast: the line that shapes it
        return al.at(built, al.failing, f"{al.prefix()}it raised {raised['type']} at line {raised['line']}, applying the "
                                        f"mask built at line {built}, before computing the {label(al.failing.name)}")
    if len(chosen := set(size_chosen_elsewhere(al.source, raised["line"]).values())) == 1:
        a = chosen.pop()
        return al.at(a, al.failing, f"{al.prefix()}it raised {raised['type']} at line {raised['line']}, on a size "
                                    f"chosen at line {a}, before computing the {label(al.failing.name)}")
    if in_helper(al.source, raised["line"]) and not passed_unshaped(al.source, raised["line"]):
        return ABSTAIN  # raised in a helper on what a caller passed: which call, and which argument, is not known
    if (sized := sized_elsewhere(al, raised["line"])) is not None:
        if len(sized) != 1:
            return ABSTAIN  # a reshape given sizes computed on several lines: which one is wrong is not known
        a = sized.pop()
        return al.at(a, al.failing, f"{al.prefix()}it raised {raised['type']} at line {raised['line']}, reshaping a "
                                    f"tensor the reference has into a size computed at line {a}, before computing "
                                    f"the {label(al.failing.name)}")
    if any(aliases(al.source, a) for a in built_elsewhere(al.source, raised["line"]).values()):
        return ABSTAIN  # it reads another name for an argument (`src = x`): the name chosen there may be the mistake
    if reads_later_stage(al, raised["line"]):
        return ABSTAIN  # raised on a stage the reference computes after the failing one: a skipped step may be the mistake
    if (cast := cast_elsewhere(al, raised["line"])) is not None:
        a, e = cast
        return al.at(a, al.failing, f"{al.prefix()}it raised {raised['type']} at line {raised['line']}, on the tensor "
                                    f"of line {a} ({e.op}), computed in {str(e.tensor.dtype).removeprefix('torch.')} "
                                    f"where the other operands are not")
    if (shaped := shaped_elsewhere(al, raised["line"])) is not None:
        a, e = shaped
        return al.at(a, al.failing, f"{al.prefix()}it raised {raised['type']} at line {raised['line']}, on the tensor "
                                    f"of line {a} ({e.op}), shaped {tuple(e.tensor.shape)}: the reference never has a "
                                    f"tensor of that shape")
    if added_mask(al.source, raised["line"]):
        return ABSTAIN  # raised adding a mask made on other lines (over several, maybe): its shape, or this line
    return al.at(raised["line"], al.failing, f"{al.prefix()}it raised {raised['type']} at line {raised['line']} "
                                             f"before computing the {label(al.failing.name)}")


def sized_elsewhere(al: Alignment, line: int) -> set[int] | None:
    """The lines computing the sizes the reshape that raised on `line` is given (sizes_computed_elsewhere), when
    there are any and the tensor it reshapes has a shape the reference has (the projection's output): the tensor is
    right and the other sizes are what they are, so a computed size is what does not fit."""
    sized = sizes_computed_elsewhere(al.source, line)
    if not sized:
        return None
    made = [e for e in al.entries if e.line in {line, *built_elsewhere(al.source, line, bases=True).values()}]
    shapes = {tuple(r.tensor.shape) for r in al.reference} | {tuple(s.tensor.shape) for s in al.stages}
    return sized if made and tuple(made[-1].tensor.shape) in shapes else None


def added_mask(source: str, line: int) -> bool:
    """The statement on `line` adds (or subtracts) a mask held in a local name assigned above it (`scores = scores +
    mask`, the mask made by `torch.full(...)` and `.triu(...)` a few lines before): when it raises on a shape, the
    mask's shape is as suspect as the addition."""
    pair = binary_operands(source, line)
    made = assigned_before(source, line)
    return pair is not None and pair[0] in ("Add", "Sub") and any("mask" in n.lower() and n in made for n in pair[1])


def reads_later_stage(al: Alignment, line: int) -> bool:
    """The statement that raised reads a tensor matching a stage the reference computes after the failing one (the
    scores, while the values come later in the file): it raised on the way past that stage, not computing the failing
    one, and whether that step or one skipped before it (a missing scale) is the mistake is not known. Keys read
    while the queries are missing are computed side by side with them (PARALLEL), not past them."""
    made = set(assigned_before(al.source, line).values())
    return any(s.name not in PARALLEL and al.match[s.name] is not None and al.entries[al.match[s.name]].line in made
               for s in al.later)
