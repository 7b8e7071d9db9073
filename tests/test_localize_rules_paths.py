"""grader/diagnosis/localize/rules/paths.py: a call on another path, traced after one that reproduced every stage.
Each case on its own, without a sandbox: a functional source with a `fused` switch (not the corpus's module form)."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules
from grader.diagnosis.localize.run import switched
from tests.localize_helpers import stage

SOURCE = """import torch
import torch.nn.functional as F
def attend(q, k, v, fused=False, p=0.0):
    d = q.shape[-1]
    q = q * 1.0
    if fused:
        o = F.scaled_dot_product_attention(q, k, v)
        o = o * d ** 0.5
        o = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        keep = p
        o = F.scaled_dot_product_attention(q, k, v, dropout_p=keep)
        o = F.scaled_dot_product_attention(
            q, k, v)
    else:
        o = (q @ k.transpose(-2, -1) / d ** 0.5).softmax(-1) @ v
    return o.transpose(1, 2)
def fused(q, k, v, causal):
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
o2 = fused(1, 2, 3, False)
"""


def case(line: int, ran: frozenset = frozenset({4, 5, 15, 16}), extra: tuple = ()):
    g = torch.Generator().manual_seed(3)
    q = torch.randn(2, 2, 4, 3, generator=g, dtype=torch.float64)
    right = torch.randn(2, 2, 4, 3, generator=g, dtype=torch.float64)
    stages = [stage("queries", 5, q), stage("merged", 16, right.transpose(1, 2))]
    entries = [loc.Traced("mul", 5, q), *extra, loc.Traced("scaled_dot_product_attention", line, right + 1),
               loc.Traced("transpose", 16, (right + 1).transpose(1, 2))]
    return loc.Alignment(entries, stages, source=SOURCE, ran=ran)


def test_the_first_difference_on_a_line_only_the_other_path_runs_is_that_line():
    found = rules.other_path(case(7))
    assert found is not None and found.line == 7 and found.stage == "context", found  # the fused call: the context
    found = rules.other_path(case(9))  # dropout_p=p: an input of the entry point is what the caller passed
    assert found is not None and found.line == 9, found


def test_no_earlier_call_or_a_shared_line_or_a_setting_made_elsewhere_gives_no_line():
    assert rules.other_path(case(7, ran=frozenset())) is None  # the first call: not this rule's case
    assert rules.other_path(case(5)) is rules.ABSTAIN  # the line runs on both paths, right on the other
    assert rules.other_path(case(18)) is rules.ABSTAIN  # is_causal=causal in a helper: which caller passed what
    assert rules.other_path(case(11)) is rules.ABSTAIN  # dropout_p=keep, set on another line
    assert rules.other_path(case(12)) is rules.ABSTAIN  # over two lines: which argument differs is not known
    before = (loc.Traced("mul", 8, torch.ones(3)),)  # another of this path's lines differs first
    assert rules.other_path(case(7, extra=before)) is rules.ABSTAIN


def test_only_switches_the_traced_call_has_off_are_traced_again():
    init = {"n": 8, "fused": False, "p": 0.0}
    sweep = ({"fused": True}, {"n": 4}, {"n": 2, "fused": True}, {"fused": False}, {}, {"other": True})
    assert switched(sweep, init) == [{"fused": True}]


def test_a_module_with_a_switch_is_traced_again_with_it_on_and_one_without_once():
    from grader.catalog import load_catalog
    from grader.diagnosis import localize as loc
    from grader.harness import Harness

    catalog = load_catalog()
    ex = next(e for e in catalog.exercises if e.kind == "module" and any(isinstance(v, bool) for v in e.config.values()))
    first, other = loc.trace_call(ex, Harness(ex, None))
    assert other["params"] is first["params"] and other["args"] is first["args"] and "path" not in first
    assert {k for k, v in other["init"].items() if v != first["init"][k]} == set(other["path"]) and all(other["path"].values())
    plain = next(e for e in catalog.exercises if e.kind == "module" and not any(isinstance(v, bool) for v in e.config.values()))
    assert isinstance(loc.trace_call(plain, Harness(plain, None)), dict)


SPREAD = """import math
import torch.nn.functional as F
def attend(q, k, v, fused=False):
    if fused:
        o = F.scaled_dot_product_attention(q / math.sqrt(q.shape[-1]), k, v,
                                           is_causal=True)
    else:
        o = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).softmax(-1) @ v
    return o.transpose(1, 2)
"""


def test_an_operator_written_whole_on_one_line_of_a_call_over_several_is_that_line():
    g = torch.Generator().manual_seed(4)
    q, right = torch.randn(2, 2, 4, 3, generator=g, dtype=torch.float64), torch.randn(2, 2, 4, 3, generator=g, dtype=torch.float64)
    stages = [stage("queries", 3, q), stage("merged", 9, right.transpose(1, 2))]

    def case(op):
        entries = [loc.Traced(op, 5, q / 7), loc.Traced("scaled_dot_product_attention", 5, right + 1),
                   loc.Traced("transpose", 9, (right + 1).transpose(1, 2))]
        return loc.Alignment(entries, stages, source=SPREAD, ran=frozenset({8, 9}))
    found = rules.other_path(case("div"))
    assert found is not None and found.line == 5, found  # q / sqrt(d): the op is on line 5, whatever line 6 passes
    assert rules.other_path(case("softmax")) is rules.ABSTAIN  # no operator of that kind written on the line
