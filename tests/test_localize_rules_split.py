"""grader/diagnosis/localize/rules/split.py: heads split otherwise on one line, after a projection right up to layout.
Built by hand, without a sandbox: plain functions with a module-level helper (not the corpus's classes)."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules
from tests.localize_helpers import stage

HELPER = """def heads(t):
    b, n, _ = t.shape
    return t.view(b, n, 4, 2).permute(0, 3, 1, 2)
def attend(x, wq, wk):
    q = heads(x @ wq)
    k = heads(x @ wk)
    return q @ k.transpose(-2, -1)
"""
SIZED = HELPER.replace("def heads(t):", "def heads(t, a=4, c=2):").replace("view(b, n, 4, 2)", "view(b, n, a, c)")
TWO_LINES = """def heads(t):
    b, n, _ = t.shape
    t = t.view(b, n, 4, 2)
    return t.permute(0, 3, 1, 2)
def attend(x, wq, wk):
    q = heads(x @ wq)
    k = heads(x @ wk)
    return q @ k.transpose(-2, -1)
"""


def case(source: str, split_line: int, calls: tuple[int, int], product: int):
    g = torch.Generator().manual_seed(11)
    xq, xk = (torch.randn(2, 5, 8, generator=g, dtype=torch.float64) for _ in range(2))
    right = [t.view(2, 5, 2, 4).transpose(1, 2) for t in (xq, xk)]
    wrong = [t.view(2, 5, 4, 2).permute(0, 3, 1, 2) for t in (xq, xk)]
    stages = [stage("queries", 90, right[0]), stage("keys", 91, right[1]),
              stage("scores", 92, right[0] @ right[1].transpose(-2, -1))]
    entries = []
    for x, w, line in zip((xq, xk), wrong, calls):
        entries += [loc.Traced("matmul", line, x), loc.Traced("view", split_line - (source is TWO_LINES), x.view(2, 5, 4, 2)),
                    loc.Traced("permute", split_line, w)]
    entries += [loc.Traced("transpose", product, wrong[1].transpose(-2, -1)),
                loc.Traced("matmul", product, wrong[0] @ wrong[1].transpose(-2, -1))]
    return loc.Alignment(entries, stages, source=source)


def test_heads_rearranged_otherwise_on_one_line_of_a_helper_are_that_line():
    al = case(HELPER, 3, (5, 6), 7)
    assert al.failing.name == "scores" and al.through.name == "keys"  # the projections match up to layout
    found = rules.split_otherwise(al)
    assert found is not None and found.line == 3 and found.stage == "queries" and found.cause == "heads_split_wrong", found


def test_sizes_a_caller_passes_or_a_layout_over_two_lines_give_no_line():
    assert rules.split_otherwise(case(SIZED, 3, (5, 6), 7)) is rules.ABSTAIN
    assert rules.split_otherwise(case(TWO_LINES, 4, (6, 7), 8)) is rules.ABSTAIN


def test_heads_in_the_reference_order_are_not_this_rule_s_case():
    al = case(HELPER, 3, (5, 6), 7)
    al.entries[2].tensor = al.stages[0].tensor.clone()  # the queries split right: only the keys are rearranged
    found = rules.split_otherwise(loc.Alignment(al.entries, al.stages, source=HELPER))
    assert found is not None and found.stage == "keys", found
