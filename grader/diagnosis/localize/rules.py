"""The rules, in the order align() tries them. Each reads an Alignment and returns a Localization (this line),
ABSTAIN (no line can be trusted: report none) or None (not this rule's case: ask the next one).
Helpers that answer one question about tensors come first; each is tested on its own (tests/test_localize.py)."""
from __future__ import annotations

import torch

from grader.diagnosis.layout import affine, close, rtol_for
from grader.diagnosis.localize.alignment import Alignment, also_computed
from grader.diagnosis.localize.compare import PARALLEL, matches, part_dims, shaped_as
from grader.diagnosis.localize.explain import MISSING_STEP, REARRANGED
from grader.diagnosis.localize.model import Localization, Stage, Traced
from grader.diagnosis.localize.source import (applies_root, attribute_built_at, attribute_uses, attributes_read_at, built_elsewhere,
                                              calls_self,
                                              aliases, assigned_before, in_helper, makes_tensor, mask_argument, reads_size, mask_built_at, mask_value, masking_lines, names_one_value, read_lines,
                                              return_after, takes_root)
from grader.diagnosis.localize.text import label


class Abstain:
    """No line can be trusted. `cause`: the mistake the difference still names (a diagnosis id) when only its line
    is ambiguous (heads laid out wrongly over two lines), with `evidence` for its message."""
    def __init__(self, cause: str | None = None, evidence: str = ""):
        self.cause, self.evidence = cause, evidence

    def __repr__(self) -> str:
        return "ABSTAIN" if self.cause is None else f"ABSTAIN({self.cause})"


ABSTAIN = Abstain()
PATTERN = ("it blocks", "it leaves", "it also blocks")  # how a mask's blocked positions differ (not its fill value)
REARRANGE = {"transpose", "permute", "view", "reshape", "contiguous", "flatten", "unflatten", "T", "mT", "movedim",
             "swapaxes", "squeeze", "unsqueeze", "view_as", "reshape_as", "t"}  # the same values, laid out otherwise
PRODUCTS = {"matmul", "bmm", "einsum", "__matmul__", "mm", "baddbmm"}
MOVES = {"split", "chunk", "unbind", "__getitem__", "cat", "stack", "view", "reshape", "transpose", "permute", "contiguous",
         "flatten", "unflatten", "narrow", "select", "expand", "expand_as", "repeat", "repeat_interleave", "index_select",
         "gather", "roll", "flip", "t", "T", "mT", "squeeze", "unsqueeze", "movedim", "swapaxes", "clone", "to", "float",
         "double", "half", "type", "type_as", "view_as", "reshape_as", "tensor_split"}  # move, pick or cast values only
NOT_THE_MASK = ("where the", "it equals the softmax", "it holds the values", "it equals the")  # a fill, a softmax, a layout, a factor


# -- questions about tensors ----------------------------------------------------------------------
def dropped_from(c: torch.Tensor, x: torch.Tensor) -> bool:
    """c looks like dropout (p = 0.5) of x: zeros, and twice x elsewhere, up to layout."""
    for y in shaped_as(c, x):
        kept = y != 0
        if 0 < int(kept.sum()) < y.numel() and close(y[kept], 2 * x[kept], rtol_for(y, x) * 10):
            return True
    return False


def half_precision(entries: list[Traced], before: int) -> Traced | None:
    """The first entry before index `before` computed in float16/bfloat16 in a float64 trace: where precision is lost."""
    return next((e for e in entries[:before] if e.tensor.dtype in (torch.float16, torch.bfloat16)), None)


def frequencies_only(c: torch.Tensor, angles: Stage) -> bool:
    """Angles whose positions column is right (frequency 0 is base**0 = 1) while others differ: the frequencies are
    wrong, and they are computed from constants (torch.arange), which the trace does not follow."""
    x = angles.tensor.double()
    if c.shape != x.shape or x.dim() != 2 or x.shape[-1] < 2:
        return False
    return close(c[:, 0].double(), x[:, 0], rtol_for(c, x) * 10)


def scaled_reference(e: Traced, reference: list[Traced]) -> str | None:
    """How e is a tensor the reference computes times a constant (a scale applied with another value), or None."""
    for r in reference:
        if r.tensor.shape == e.tensor.shape and (k := affine(e.tensor.double(), r.tensor.double(), rtol_for(e.tensor) * 10)):
            if k[0] == "ratio":
                return f"it equals the reference's tensor of line {r.line} times {k[1]:.4g}"
    return None


def untraced_reads(al: Alignment, line: int) -> dict[str, int]:
    """{name: line} for the values the statement on `line` reads that are made on another line the trace does not
    follow (no tensor recorded there): a local name assigned once, or self.<name> computed in the class."""
    traced = {e.line for e in al.entries}
    found = {n: a for n, a in built_elsewhere(al.source, line).items() if a not in traced and not calls_self(al.source, a)}
    for name in attributes_read_at(al.source, line):
        if (a := attribute_built_at(al.source, line, name)) is not None and a not in traced:
            found[f"self.{name}"] = a
    return found


def shaped_elsewhere(al: Alignment, line: int) -> tuple[int, Traced] | None:
    """A tensor the statement on `line` reads, made on one other line by a rearrangement (transpose, view, ...) into
    a shape that no tensor of the reference has: when `line` raises, that shape is the likely cause."""
    shapes = {tuple(r.tensor.shape) for r in al.reference} | {tuple(s.tensor.shape) for s in al.stages}
    for name, a in built_elsewhere(al.source, line, bases=True).items():
        made = [e for e in al.entries if e.line == a]
        if made and made[-1].op in MOVES and tuple(made[-1].tensor.shape) not in shapes:
            return a, made[-1]
    return None


def moved_before(al: Alignment, e: Traced) -> bool:
    """The entry only rearranges values, and its line reads a tensor that another line made by rearranging values
    too (`y = y.transpose(-1, -2)`, then `y = y.view(B, T, C)`): a layout built over several lines. A repeat, a
    cat or an index picks by its own arguments: not a rearrangement."""
    if e.op not in REARRANGE:
        return False
    for a in assigned_before(al.source, e.line).values():
        made = [x for x in al.entries if x.line == a]
        if made and made[-1].op in REARRANGE:
            return True
    return False


def products(entries: list[Traced]) -> int:
    """How many matrix products a trace holds (a block loop's iterations show in them)."""
    return sum(e.op in PRODUCTS for e in entries)


def line_result(entries: list[Traced], i: int) -> bool:
    """Entry i is the value its line computes (the last op of one run of that line), not a step inside it: a line
    may compute `q @ k.T / sqrt(d)` in another order than the reference and still give the same value."""
    return i + 1 == len(entries) or entries[i + 1].line != entries[i].line


def rearranged_input(al: Alignment, before: int) -> tuple[int, Traced, Stage] | None:
    """The last queries/keys/values the submission computed before an entry, when laid out unlike the reference's."""
    found = []
    for s in al.earlier:
        if s.name not in PARALLEL:
            continue
        last = [i for i, e in enumerate(al.entries[:before]) if matches(e.tensor, s)]
        got = al.entries[last[-1]].tensor.shape if last else None
        if got is not None and got != s.tensor.shape and got[-1] == s.tensor.shape[-1]:  # not a transpose for a matmul
            found.append((last[-1], al.entries[last[-1]], s))
    return min(found, key=lambda f: f[0]) if found else None


def other_roles(c: torch.Tensor, al: Alignment) -> bool:
    """c is the product of two of the reference's queries, keys and values other than queries times keys."""
    by = {s.name: s.tensor.double() for s in al.stages if s.name in ("queries", "keys", "values")}
    if len(by) != 3:
        return False
    pairs = [(a, b) for a in by for b in by if a != b and (a, b) != ("queries", "keys")]
    for a, b in pairs:
        x, y = by[a], by[b]
        if x.shape[-1] != y.shape[-1]:
            continue
        t = x @ y.transpose(-2, -1)
        if t.numel() == c.numel() and any(close(z.double(), t, rtol_for(c) * 10) or (k := affine(z.double(), t, rtol_for(c) * 10))
                                          and k[0] == "ratio" for z in shaped_as(c, t)):
            return True
    return False


def swapped_roles(al: Alignment, line: int) -> Localization | None:
    """Queries, keys and values each computed right, by one call that returns them together (a fused split), but
    the scores combine the wrong ones: the roles are assigned in another order on that line."""
    if al.failing.name != "scores" or any(al.match.get(n) is None for n in ("queries", "keys", "values")):
        return None
    where = {al.entries[al.match[n]].line for n in ("queries", "keys", "values")}
    if len(where) != 1 or line in where:
        return None
    at_line = [e for e in al.entries if e.line == line and e.tensor.numel() == al.failing.tensor.numel()]
    if not any(other_roles(e.tensor, al) for e in at_line):
        return None  # not a product of other roles: something else (a layout inside a helper) differs
    split = where.pop()
    return al.at(split, al.failing, f"line {split} computes the queries, keys and values, but the scores at line {line} "
                                    f"combine other ones than the reference's queries and keys: the results of line "
                                    f"{split} are taken in another order than they are laid out", through=None)


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
    (`d_k = q.shape[-1]`, then `/ d_k`) is right: the line forgot the root. Any other value without a root
    (`temperature = float(d)`, then `/ temperature`) may be wrong where it is made or where it is used: no line.
    Otherwise (`B, T, C = x.shape`, self.d_out, several values) the line picked it."""
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
    if len(uses) > 1 or not (name.startswith("self.") or names_one_value(al.source, a)):
        return None  # one of several names unpacked together, or a value other lines use too: the line picked it
    if not (applies_root(al.source, line, name) or takes_root(al.source, a)) and reads_size(al.source, a):
        return None  # `d_k = q.shape[-1]`, then `/ d_k`: the size is right, the line forgot its root
    if applies_root(al.source, line, name) or takes_root(al.source, a):
        return al.at(a, al.failing, f"{al.prefix()}the tensor at line {line} is the first that differs: "
                                    f"{how.removeprefix('it ')}; it is scaled by {name}, set at line {a}: that value is "
                                    f"not the reference's")
    return ABSTAIN


# -- the rules --------------------------------------------------------------------------------------
def dropout_misplaced(al: Alignment):
    """A dropout that is not the reference's: active in evaluation, or applied to another tensor."""
    for i, e in al.odd:
        if "dropout" not in e.op:
            continue
        if not al.train:
            earlier = [x for x in al.entries[:i] if x.tensor.numel() == e.tensor.numel()][-4:]
            if not any(dropped_from(e.tensor, x.tensor) for x in earlier):
                continue  # an inactive dropout passing on a tensor that differs for another reason
            stage = next((s for s in al.stages if s.name == "dropped_weights"), al.failing)
            before = [s for s in al.stages[:al.stages.index(stage)] if al.match[s.name] is not None and s.name != stage.name]
            return al.at(e.line, stage, f"the tensor at line {e.line} ({e.op}) is the first that differs: dropout is active "
                                        f"in evaluation mode (it must act only in training mode)", before[-1] if before else None)
        weights = next((s for s in al.stages if s.name == "weights"), None)
        if weights is not None and (part_dims(e.tensor, weights) or dropped_from(e.tensor, weights.tensor)):
            continue  # on (a head of) the weights, with other random draws than the reference: not a mistake
        src = next((s for s in al.stages if s.tensor.numel() == e.tensor.numel() and dropped_from(e.tensor, s.tensor)), None)
        what = f"the {label(src.name)}" if src is not None else f"a tensor of shape {tuple(e.tensor.shape)}"
        return al.at(e.line, al.failing, f"dropout is applied at line {e.line} to {what}; "
                                         f"the reference applies it to the attention weights")
    return None


def training_pass(al: Alignment):
    """In training mode anything else that differs may be other random draws: only a missing dropout is located,
    at the line making the weights it belongs after (the line using them may be another: labelled less often)."""
    if not al.train:
        return None
    f = al.failing
    pick = next((e for e in al.entries[al.match["weights"] + 1:] if e.tensor.numel() != f.tensor.numel()), None) \
        if f.name == "dropped_weights" and al.match.get("weights") is not None else None
    if pick is None or any("dropout" in x.op for x in al.entries):
        return ABSTAIN
    weights = al.entries[al.match["weights"]].line  # where the dropout belongs: after the weights are made
    return al.at(weights, f, f"{al.prefix()}no dropout is applied in training mode: the attention weights of line "
                             f"{weights} are used without it at line {pick.line} ({pick.op})")


def first_divergence(al: Alignment):
    """A reference that marks only its output (its work happens in a loop or in helpers): every tensor it computes is
    a step to line up with, so the first tensor the reference never computes is where the submission parts from it."""
    if len(al.stages) != 1:
        return None
    if products(al.entries) < products(al.reference):
        return ABSTAIN  # fewer matrix products than the reference: a loop skipped work, no line computes a wrong value
    ends = [(i, e) for i, e in al.rest if line_result(al.entries, i)]
    if not ends:
        return None
    e = ends[0][1]
    if products(al.entries) > products(al.reference) and any(x.line == e.line and also_computed(x, al.reference)
                                                             for x in al.entries):
        return ABSTAIN  # more products than the reference, on a line that is right elsewhere: extra work, maybe
    if e.op in MOVES:
        return ABSTAIN  # a slice, cast or rearrangement differs: what it was taken from, or how, is not known
    if tuple(e.tensor.shape) not in {tuple(r.tensor.shape) for r in al.reference} | {tuple(s.tensor.shape) for s in al.stages}:
        return ABSTAIN  # no tensor of the reference has its shape: the work is cut otherwise (other blocks), not comparable
    if (found := built_before(al, e.line, scaled_reference(e, al.reference))) is not None:
        return found
    return al.at(e.line, al.failing, f"the tensor at line {e.line} ({e.op}) is the first that differs: the reference "
                                     f"computes no tensor equal to it (shape {tuple(e.tensor.shape)})")


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
                            f"({al.pick[1].op}) then combines the wrong dimensions", None)


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
    if in_helper(al.source, raised["line"]):
        return ABSTAIN  # raised in a helper on what a caller passed: which call, and which argument, is not known
    if any(aliases(al.source, a) for a in built_elsewhere(al.source, raised["line"]).values()):
        return ABSTAIN  # it reads another name for an argument (`src = x`): the name chosen there may be the mistake
    if (shaped := shaped_elsewhere(al, raised["line"])) is not None:
        a, e = shaped
        return al.at(a, al.failing, f"{al.prefix()}it raised {raised['type']} at line {raised['line']}, on the tensor "
                                    f"of line {a} ({e.op}), shaped {tuple(e.tensor.shape)}: the reference never has a "
                                    f"tensor of that shape")
    return al.at(raised["line"], al.failing, f"{al.prefix()}it raised {raised['type']} at line {raised['line']} "
                                             f"before computing the {label(al.failing.name)}")


def nothing_after(al: Alignment):
    """Nothing differs after the last matched stage: the step is missing (the return after it, else that line)."""
    if al.pick is not None:
        return None
    through, failing = al.through, al.failing
    if through is None or any(s.name not in PARALLEL for s in al.later if al.match[s.name] is not None):
        return ABSTAIN
    line = al.entries[al.start].line
    ret = return_after(al.source, line)
    if ret is not None:
        return al.at(ret, failing, f"your code matches the reference through the {label(through.name)} (line {line}) "
                                   f"and returns at line {ret} without the {label(failing.name)} step")
    return al.at(line, failing, f"your code matches the reference through the {label(through.name)} (line {line}) "
                                f"and computes nothing from there: the {label(failing.name)} step is missing")


def untraced_angles(al: Alignment):
    """Angles that come from untraced constants (arange, base ** ...): no line can be trusted."""
    if al.failing.name == "angles" and (not al.same_size or frequencies_only(al.pick[1].tensor, al.failing)):
        return ABSTAIN
    return None


def out_of_order(al: Alignment):
    """A matrix product that matches no stage comes before the last stage the submission reproduces (attention
    computed before the cache it should read is grown): the submission works in another order than the reference,
    so the first entry after that match is not where they part: no line."""
    if any(e.op in PRODUCTS for i, e in al.odd if i < al.start):
        return ABSTAIN
    return None


def lost_precision(al: Alignment):
    """A float16/bfloat16 entry up to the picked one: where the digits were lost."""
    if (low := half_precision(al.entries, al.pick[0] + 1)) is None:
        return None
    return al.at(low.line, al.failing, f"{al.prefix()}the tensor at line {low.line} ({low.op}) is computed in "
                                       f"{str(low.tensor.dtype).removeprefix('torch.')}, and from there the "
                                       f"{label(al.failing.name)} differ: keep this step in float32 or float64")


def other_shape(al: Alignment):
    """The first entry that differs has another size than the failing stage: that line, by its shape."""
    if al.same_size:
        return None
    e = al.pick[1]
    return al.at(e.line, al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the first that differs: it has "
                                     f"shape {tuple(e.tensor.shape)} (the reference's {label(al.failing.name)}: "
                                     f"{tuple(al.failing.tensor.shape)})")


def roles_swapped(al: Alignment):
    return swapped_roles(al, al.pick[1].line)


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


def several_masks(al: Alignment):
    """The picked entry blocks other positions than the failing stage, and several masking calls ran on the scores
    (a padding mask and a causal one, applied one after the other, before the softmax): the first of them never
    equals the stage, whichever is wrong: no line."""
    how = al.how[0] if al.same_size else None
    if how is None or not how.startswith(PATTERN):
        return None
    after = al.entries[al.start + 1:]
    end = next((k for k, e in enumerate(after) if "softmax" in e.op), len(after))
    ran = {e.line for e in after[:end]} & masking_lines(al.source)  # on the scores: before the softmax
    return ABSTAIN if len(ran) > 1 else None


def value_built_before(al: Alignment):
    """built_before() for the entry where the submission parts from the reference."""
    return built_before(al, al.pick[1].line, al.how[0] if al.same_size else None)


def unused_result(al: Alignment):
    """The picked entry derives from a stage before the last matched one: that match's result is never used."""
    base, through, earlier = al.how[1], al.through, al.earlier
    if base is None or through is None or base not in earlier or earlier.index(base) >= earlier.index(through) \
            or through.name in PARALLEL:
        return None
    line = al.entries[al.start].line
    e = al.pick[1]
    return al.at(line, al.failing, f"the result of line {line} ({label(through.name)}) is never used: the tensor at line "
                                   f"{e.line} ({e.op}) is the softmax of the {label(base.name)}")


def missing_step(al: Alignment):
    """The picked entry is the softmax of the last matched stage: the failing step (scaling, masking) is missing
    between them. A missing scale belongs on the line of that match or on the softmax line: reported only when they
    are one line (`softmax(q @ k.T)`), else no line. A masking call that runs after the softmax is the misplaced
    step: its line. Any other missing mask: no line (it belongs on the scores line, the next or the softmax, a
    matter of taste; or a masking call in a branch that did not run)."""
    how, base, cause = al.how
    if al.failing.name not in MISSING_STEP or cause is None or base is None or al.through is None:
        return None
    line, e = al.entries[al.start].line, al.pick[1]
    if al.failing.name != "masked_scores" and line != e.line:
        return ABSTAIN  # a missing scale belongs on the scores line or on the softmax line: either is as right
    if al.failing.name == "masked_scores":
        masks = masking_lines(al.source)
        later = [x.line for x in al.entries[al.pick[0]:] if x.line in masks and x.line != e.line]
        if later:
            return al.at(later[0], al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the softmax of "
                                               f"the {label(base.name)}: the mask is applied at line {later[0]}, after "
                                               f"it, instead of to the scores before it", cause=cause)
        return ABSTAIN  # where a missing mask belongs (this line, the next, the softmax) is a matter of taste
    return al.at(line, al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the softmax of the "
                                   f"{label(base.name)}: the {label(al.failing.name)} step is missing; it belongs on or "
                                   f"after line {line}", cause=cause)


def unexplained_elsewhere(al: Alignment):
    """The picked entry differs in no way explain() names, and it only moves, picks or casts values (a split, a
    slice, a cat) that another line made, or it reads a value the trace does not follow (a scale, a setting made on
    another line; not a size read from a shape),
    or only its size is the failing stage's (another last dimension), or float32 steps precede it (rounding): the
    difference may come from elsewhere as well as from the line: no line."""
    if not al.how[0].startswith("it differs") or al.pick is None:
        return None
    e = al.pick[1]
    traced = {x.line for x in al.entries}
    moved = e.op in MOVES and any(a in traced for a in built_elsewhere(al.source, e.line, bases=True).values())
    sizes = {n: a for n, a in untraced_reads(al, e.line).items() if not reads_size(al.source, a)}
    if moved or sizes or e.tensor.shape[-1] != al.failing.tensor.shape[-1]:
        return ABSTAIN  # (last: only the size is the failing stage's, by chance: another quantity)
    if any(x.tensor.dtype == torch.float32 for x in al.entries[:al.pick[0] + 1]):
        return ABSTAIN  # float32 steps in a float64 trace: the difference may be rounding alone
    return None


def first_difference(al: Alignment):
    """The picked entry's line, with how it differs."""
    how, _, cause = al.how
    e = al.pick[1]
    return al.at(e.line, al.failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the first that differs: {how}",
                 cause=cause)
