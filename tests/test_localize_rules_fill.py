"""grader/diagnosis/localize/run.py half_raise: a masked_fill that raised in half precision on a fill value made on
its own line. Without a sandbox."""
from __future__ import annotations

from grader.diagnosis.localize import source
from grader.diagnosis.localize.run import half_raise

SRC = """import torch
LOW = -1e30
class A:
    def forward(self, s, m, w):
        big = -float(3e38)
        t = s.masked_fill_(m, big)
        low = w.min()
        u = s.masked_fill_(m, low)
        v = s.masked_fill_(m, LOW)
        return t, u, v
"""
RAISED = {"type": "RuntimeError"}


def test_a_fill_made_once_of_constants_in_the_function_is_the_line_to_fix():
    assert source.fill_made_at(SRC, 6) == 5
    found = half_raise(SRC, {**RAISED, "line": 6})
    assert found.line == 5 and "made at line 5" in found.evidence, found


def test_a_fill_a_tensor_makes_or_a_constant_of_the_module_gives_no_line():
    assert source.fill_made_at(SRC, 8) is None and half_raise(SRC, {**RAISED, "line": 8}) is None
    assert source.fill_made_at(SRC, 9) is None and half_raise(SRC, {**RAISED, "line": 9}) is None
    twice = SRC.replace("        t = s", "        big = big / 2\n        t = s")
    assert source.fill_made_at(twice, 7) is None  # assigned twice: which value is not known from the text
