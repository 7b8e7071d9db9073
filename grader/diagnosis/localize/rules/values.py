"""Rules for a value made on another line (a mask, a scale) or computed with fewer digits."""
from __future__ import annotations

from grader.diagnosis.layout import affine, rtol_for
from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.compare import shaped_as
from grader.diagnosis.localize.source import (applies_root, assigned_before, attribute_uses, binary_operands, built_elsewhere,
                                              calls_file_function, made_for, mask_argument, mask_value, names_one_value, read_lines,
                                              reads_size, takes_root)
from grader.diagnosis.localize.text import label
from grader.diagnosis.localize.rules.abstain import ABSTAIN
from grader.diagnosis.localize.rules.kinds import ADDS, CASTS, MOVES, NOT_THE_MASK, PATTERN
from grader.diagnosis.localize.rules.reads import untraced_reads
from grader.diagnosis.localize.rules.tensors import half_precision, line_result


def built_before(al: Alignment, line: int, how: str | None):
    """The line where the submission parts from the reference reads a value the trace does not follow (a bool mask,
    a Python scalar), built by one statement on another line: the earliest line whose value can be wrong.

    A mask the masking call on `line` reads from elsewhere (a local name, or self.<name> made in the class) is that
    line's suspect unless the difference is the fill value, a softmax or a layout. When the call indexes it otherwise
    than `m[:n, :n]`, or the difference is an inversion of a buffer used as it is or of a local mask flipped on the
    line, the call and the mask are equally suspect: no line; a buffer flipped on the line is the line's own flip.
    A scalar is the suspect when the difference is a constant factor, it is the one value the line reads from
    elsewhere (a local name, or self.<name> computed in the class), its own statement makes only it
    (`d = x.shape[-1]`, `scale = 1 / math.sqrt(d)`), no other line uses it, and a root is taken of it (at the line,
    `math.sqrt(d)`, or where it is made): the size inside is what can be wrong. A size read as it is
    (`d_k = q.shape[-1]`, then `/ d_k`) is right: the line forgot the root. A value named as the scale (`scale = d_k`,
    then `/ scale`) is meant to be applied as it is: where it is made. Any other value without a root
    (`temperature = float(d)`, then `/ temperature`) may be wrong where it is made or where it is used: no line.
    Sizes unpacked together whose others serve no other line but an assert (`*_, n, d = value.shape`, then
    `/ sqrt(d)`) are made for this use, as one value is. Otherwise (`B, T, C = x.shape` with B and T shaping
    other lines, self.d_out, several values) the line picked it."""
    state, built, inverts, slicing = mask_value(al.source, line)
    mask = mask_argument(al.source, line)
    if state != "here" and (how is None or how.startswith(PATTERN) or not how.startswith(NOT_THE_MASK)):
        if how is not None and "inverted" in how and (inverts or state == "attribute"):
            # a buffer flipped on the line: the line's own flip; a buffer used as it is (a pattern of allowed
            # positions used as blocked ones) or a local mask flipped here: built the other way round, or used so
            return None if inverts and state == "attribute" else ABSTAIN
        if built is None or slicing == "other":
            return ABSTAIN  # several assignments build it, or the call's own index may be what is wrong
        what = f", and {how.removeprefix('it ')}" if how is not None and how.startswith(PATTERN) else ""
        return al.at(built, al.failing, f"{al.prefix()}the mask applied at line {line} is built at line {built}{what}")
    factor = how is not None and how.startswith("it equals the") and " times " in how
    if not factor:
        return None
    found = {n: a for n, a in untraced_reads(al, line).items() if n != mask}
    if len(found) != 1:
        return None  # none, or several combined on the line: the line's own choice
    name, a = next(iter(found.items()))
    uses = attribute_uses(al.source, line, name[5:]) if name.startswith("self.") else read_lines(al.source, a, name)
    if len(uses) > 1 or not (name.startswith("self.") or names_one_value(al.source, a) or made_for(al.source, a, name)):
        return None  # one of several names unpacked together for other uses, or a value other lines use too: the line picked it
    if not (applies_root(al.source, line, name) or takes_root(al.source, a)) and reads_size(al.source, a):
        return None  # `d_k = q.shape[-1]`, then `/ d_k`: the size is right, the line forgot its root
    if applies_root(al.source, line, name) or takes_root(al.source, a):
        return al.at(a, al.failing, f"{al.prefix()}the tensor at line {line} is the first that differs: "
                                    f"{how.removeprefix('it ')}; it is scaled by {name}, set at line {a}: that value is "
                                    f"not the reference's")
    if "scale" in name.lower() and not calls_file_function(al.source, a):  # `scale = d_k`, then `/ scale`
        return al.at(a, al.failing, f"{al.prefix()}the tensor at line {line} is the first that differs: "
                                    f"{how.removeprefix('it ')}; it is scaled by {name}, set at line {a}: that value is "
                                    f"not the reference's factor")
    return ABSTAIN


def added_operand(al: Alignment):
    """The picked entry adds two values: at the masking step, the last matched stage (the scores, right) and one value
    made on one other line (an additive mask, `ext = (1.0 - pad) * -10000.0`, then `s = s + ext`): that value is what
    differs, at its line. At the scaling step an addition on another line than the scores' is no scale: the scale is
    missing, and where it belongs (the scores line, the softmax line) is a matter of taste: no line."""
    if al.pick is None or al.pick[1].op not in ADDS or al.through is None:
        return None
    line = al.pick[1].line
    if al.failing.name == "scaled_scores":
        return ABSTAIN if line != al.entries[al.start].line else None  # `q @ k.T + 1 / sqrt(d)`: the line's own
    pair = binary_operands(al.source, line)
    if al.failing.name != "masked_scores" or pair is None or pair[0] not in ("Add", "Sub"):
        return None
    made, once = assigned_before(al.source, line), built_elsewhere(al.source, line)
    through = al.entries[al.start].line
    other = [n for n in pair[1] if made.get(n) != through]
    if len(other) != 1 or len(pair[1]) - len(other) != 1 or other[0] not in once:
        return None
    a = once[other[0]]
    return al.at(a, al.failing, f"{al.prefix()}the tensor at line {line} ({al.pick[1].op}) is the first that differs: it "
                                f"adds {other[0]}, made at line {a}, to the {label(al.through.name)}, which are right: "
                                f"{other[0]} is not the mask the reference adds")


def value_built_before(al: Alignment):
    """built_before() for the entry where the submission parts from the reference."""
    return built_before(al, al.pick[1].line, al.how[0] if al.same_size else None)


def scaled_earlier(al: Alignment):
    """The picked entry is the failing stage times a constant, and an entry before it, on another line, is already a
    stage the submission reproduces times a constant (`q = ... / math.sqrt(d)` as well as `k = ... / math.sqrt(d)`):
    the factor comes in there."""
    how = al.how[0]
    if not (how.startswith("it equals the") and " times " in how):
        return None
    for i, e in al.odd:
        if i >= al.pick[0] or e.line == al.pick[1].line or not line_result(al.entries, i):
            continue
        for s in al.earlier:
            if s.tensor.numel() == e.tensor.numel() and any((k := affine(y.double(), s.tensor.double(), rtol_for(e.tensor) * 10))
                                                            and k[0] == "ratio" for y in shaped_as(e.tensor, s.tensor)):
                return al.at(e.line, al.failing, f"the tensor at line {e.line} ({e.op}) is the {label(s.name)} times a "
                                                 f"constant, and from there the {label(al.failing.name)} differ by a "
                                                 f"constant factor ({how.removeprefix('it ')})", None)
    return None


def lost_precision(al: Alignment):
    """A float16/bfloat16 entry up to the picked one: where the digits were lost."""
    if (low := half_precision(al.entries, al.pick[0] + 1)) is None:
        return None
    if low.op in MOVES and low.op not in CASTS:
        return ABSTAIN  # it only moves values that were already half precision: cast in code the trace does not follow
    return al.at(low.line, al.failing, f"{al.prefix()}the tensor at line {low.line} ({low.op}) is computed in "
                                       f"{str(low.tensor.dtype).removeprefix('torch.')}, and from there the "
                                       f"{label(al.failing.name)} differ: keep this step in float32 or float64")
