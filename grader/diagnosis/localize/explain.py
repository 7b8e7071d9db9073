"""What a differing tensor is instead of the reference's stage (softmax over another dim, a mask inverted, ...), by a
few cheap transforms of the expected stage and its neighbours; the sentence says it."""
from __future__ import annotations

import torch

from grader.diagnosis.layout import affine, close, equivalent, rtol_for, same_values
from grader.diagnosis.localize.compare import PARALLEL, blocked, part_dims, shaped_as
from grader.diagnosis.localize.model import Stage
from grader.diagnosis.localize.text import label

# What a difference found at a stage amounts to, as a diagnosis id (when it is that plain).
REARRANGED = {"queries": "heads_split_wrong", "keys": "heads_split_wrong", "values": "heads_split_wrong",
              "merged": "heads_merge_wrong"}
MISSING_STEP = {"scaled_scores": "no_scaling", "masked_scores": "mask_missing"}
SAME_POSITIONS = "the same positions, another fill value"  # (-inf where the reference fills finfo.min)


def mask_difference(c: torch.Tensor, x: torch.Tensor, name: str, rtol: float) -> tuple[str, str | None] | None:
    """How c differs from the masked tensor x, when x has blocked positions and the rest agrees."""
    want = blocked(x)
    if not want.any() or want.all():
        return None
    other_fill = None
    for y in shaped_as(c, x):
        got = blocked(y.double())
        if torch.equal(got, want):
            if other_fill is None and close(y[~want], x[~want], rtol) and not torch.equal(y[want].double(), x[want]):
                fill, ref = float(y[want].double().min()), float(x[want].min())
                other_fill = (f"where the {label(name)} are blocked it holds {fill:.4g}, the reference's {ref:.4g}: "
                              f"{SAME_POSITIONS}", None)
            continue
        if torch.equal(got, ~want):
            return (f"it blocks exactly the positions the {label(name)} keep and keeps the blocked ones: the mask is inverted",
                    "mask_inverted")
        keep = ~(got | want)
        if keep.any() and not close(y[keep], x[keep], rtol):
            continue
        if not got.any():
            fill = y[want].double()
            what = f"{float(fill[0]) + 0.0:.4g}" if bool((fill == fill[0]).all()) else "finite values"
            return (f"where the {label(name)} are blocked (-inf) it holds {what}: blocked scores must be -inf "
                    f"so that the softmax gives them weight 0", "mask_zero_fill" if what == "0" else None)
        extra, missing = int((got & ~want).sum()), int((want & ~got).sum())
        if extra and not missing:
            n = x.shape[-1]
            diag = torch.eye(n, dtype=torch.bool).expand_as(got) if x.shape[-2] == n else None
            if diag is not None and torch.equal(got & ~want, diag):
                return f"it also blocks the diagonal, which the {label(name)} keep (each token may attend to itself)", "mask_diagonal"
            return f"it blocks {extra} position(s) the {label(name)} keep", None
        if missing and not extra:
            return f"it leaves {missing} position(s) open that the {label(name)} block", None
        return f"it blocks different positions than the {label(name)}", None
    return other_fill


def softmax_of(c: torch.Tensor, bases: list[Stage], rtol: float):
    """(stage, dim) when c is the softmax of one of the bases over some dim."""
    for base in bases:
        x = base.tensor.double()
        if x.numel() != c.numel():
            continue
        for d in range(x.dim() - 1, -1, -1):
            if x.shape[d] > 1 and equivalent(c, torch.softmax(x, dim=d), rtol):
                return base, d - x.dim()
    return None


def explain(c: torch.Tensor, failing: Stage, later: list[Stage], earlier: list[Stage], alts: list[Stage]) -> tuple[str, Stage | None, str | None]:
    """How c differs, by a few cheap transforms of the expected stage and its neighbours; the stage c derives from;
    and the diagnosis id that names the difference, when one does."""
    rtol = rtol_for(c, failing.tensor) * 10
    chain = [s for s in earlier[::-1] if s.name not in PARALLEL][:3]
    around = [failing] + later[:1] + alts
    for x in around:
        if x.tensor.numel() == c.numel() and (why := mask_difference(c, x.tensor.double(), x.name, rtol)):
            return why[0], None, why[1]
    found = softmax_of(c, chain + alts, rtol)
    if found is not None:
        base, dim = found
        if dim == -1:
            return (f"it equals the softmax of the {label(base.name)}: the {label(failing.name)} step is missing or wrong", base,
                    MISSING_STEP.get(failing.name))
        return f"it equals the {label(failing.name)} with softmax over dim {dim} instead of dim -1", base, "softmax_wrong_dim"
    for x in around + chain:
        if x.tensor.numel() != c.numel():
            continue
        t = x.tensor.double()
        if same_values(c, t, rtol):
            return (f"it holds the values of the {label(x.name)} in a different arrangement (a wrong transpose, view or reshape)",
                    None, REARRANGED.get(x.name))
        if t.dim() >= 2 and t.shape[-1] == t.shape[-2] and equivalent(c, t.transpose(-2, -1), rtol):
            return f"it equals the {label(x.name)} transposed", None, None
        for y in shaped_as(c, t):
            k = affine(y.double(), t, rtol)
            if k is not None:
                word = "times" if k[0] == "ratio" else "plus"
                return f"it equals the {label(x.name)} {word} {k[1]:.4g}", None, None
    if torch.isnan(c).any() and not torch.isnan(failing.tensor).any():
        return f"it contains NaN (the reference's {label(failing.name)}: none)", None, None
    return f"it differs from the {label(failing.name)} of the reference", None, None


def explain_part(c: torch.Tensor, failing: Stage, later, earlier, alts) -> tuple[str, Stage | None, str | None]:
    """explain() for a whole stage, or for one head of it (each stage sliced the same way)."""
    if c.numel() == failing.tensor.numel():
        return explain(c, failing, later, earlier, alts)
    shape = failing.tensor.shape
    fallback = None
    for d in part_dims(c, failing):
        for j in range(shape[d]):
            def cut(group):
                return [Stage(s.name, s.line, s.tensor.select(d, j)) for s in group
                        if s.tensor.dim() == len(shape) and s.tensor.shape[d] == shape[d]]
            how, base, cause = explain(c, cut([failing])[0], cut(later), cut(earlier), cut(alts))
            if not how.startswith("it differs"):
                return how.replace(" the ", " one head of the ", 1), base, cause
            fallback = fallback or (how, base, cause)
    return fallback or (f"it differs from the {label(failing.name)} of the reference", None, None)


