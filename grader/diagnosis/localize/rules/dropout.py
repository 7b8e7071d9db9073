"""Rules for dropout: one that is not the reference's, and a missing one in training mode."""
from __future__ import annotations

from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.compare import part_dims
from grader.diagnosis.localize.text import label
from grader.diagnosis.localize.rules.abstain import ABSTAIN
from grader.diagnosis.localize.rules.reads import untraced_reads
from grader.diagnosis.localize.rules.tensors import dropped_from
from grader.diagnosis.localize.source import discarded_at, reads_size


def dropout_misplaced(al: Alignment):
    """A dropout that is not the reference's: active in evaluation, or applied to another tensor. Active in
    evaluation with a rate or flag made on another line the trace does not follow: that line or the call, no line."""
    for i, e in al.odd:
        if "dropout" not in e.op:
            continue
        if not al.train:
            earlier = [x for x in al.entries[:i] if x.tensor.numel() == e.tensor.numel()][-4:]
            if not any(dropped_from(e.tensor, x.tensor) for x in earlier):
                continue  # an inactive dropout passing on a tensor that differs for another reason
            if any(not reads_size(al.source, a) for a in untraced_reads(al, e.line).values()):
                return ABSTAIN  # its rate or flag is set on another line (`p = self.dropout if self.train else 0`)
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
    at the line making the weights when that line also uses them (`(softmax(s) @ v)`); when the weights are made on
    one line and used on another, the dropout belongs after the first or before the second, a matter of taste: no line.
    A dropout whose result is thrown away (`self.dropout(w)` on its own line, discarded_at) is that line."""
    if not al.train:
        return None
    f = al.failing
    if len(dropped := discarded_at(al.source, "dropout")) == 1:
        return al.at(dropped[0], f, f"no dropout is applied in training mode: the dropout at line "
                                    f"{dropped[0]} makes a new tensor and its result is thrown away")
    pick = next((e for e in al.entries[al.match["weights"] + 1:] if e.tensor.numel() != f.tensor.numel()), None) \
        if f.name == "dropped_weights" and al.match.get("weights") is not None else None
    if pick is None or any("dropout" in x.op for x in al.entries):
        return ABSTAIN
    weights = al.entries[al.match["weights"]].line  # where the dropout belongs: after the weights are made
    if pick.line != weights:
        return ABSTAIN
    return al.at(weights, f, f"{al.prefix()}no dropout is applied in training mode: the attention weights of line "
                             f"{weights} are used without it at line {pick.line} ({pick.op})")
