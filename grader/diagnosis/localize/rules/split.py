"""The rule for heads split otherwise on one line: the projection is right up to layout, its split is not."""
from __future__ import annotations

from grader.diagnosis.layout import close, rtol_for, same_values
from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.compare import PARALLEL, matches
from grader.diagnosis.localize.explain import REARRANGED
from grader.diagnosis.localize.source import in_helper, makes_tensor, reads_size
from grader.diagnosis.localize.text import label
from grader.diagnosis.localize.rules.abstain import ABSTAIN
from grader.diagnosis.localize.rules.kinds import MOVES, REARRANGE
from grader.diagnosis.localize.rules.reads import moved_before, untraced_reads


def split_otherwise(al: Alignment):
    """Queries, keys or values matched up to layout (the projection), then, before the entry where the submission
    parts from the reference, rearranged into exactly the stage's shape with its values in another order (`t.view(b,
    n, hs, nh).permute(0, 3, 1, 2)`, in a helper or not): every such tensor is made on one line that only moves
    values, so the heads are split otherwise there (its sizes are right: the shape is). A layout built over several
    lines, a helper's size arguments or an index made elsewhere leave the line unknown: no line."""
    if al.pick is None or al.failing.name in PARALLEL:
        return None
    found = []
    for s in al.earlier:
        if s.name not in PARALLEL:
            continue
        for j, x in enumerate(al.entries[:al.pick[0]]):
            if j > al.match[s.name] and x.op in REARRANGE and x.tensor.shape == s.tensor.shape \
                    and same_values(x.tensor, s.tensor, rtol_for(x.tensor, s.tensor)) \
                    and not close(x.tensor, s.tensor, rtol_for(x.tensor, s.tensor)) and not any(matches(x.tensor, t) for t in al.stages):
                found.append((x, s))
    if not found:
        return None
    lines = {x.line for x, _ in found}
    if len(lines) != 1:
        return ABSTAIN
    x, s = found[0]
    if any(e.op not in MOVES for e in al.entries if e.line == x.line) or moved_before(al, x) or in_helper(al.source, x.line) \
            or any(makes_tensor(al.source, a) and not reads_size(al.source, a) for a in untraced_reads(al, x.line).values()):
        return ABSTAIN
    return al.at(x.line, s, f"the tensor at line {x.line} ({x.op}) has the shape of the {label(s.name)} and holds their "
                            f"values in another order: the heads are split otherwise (a wrong view, transpose or permute), "
                            f"and from there the {label(al.failing.name)} differ", None, REARRANGED.get(s.name))
