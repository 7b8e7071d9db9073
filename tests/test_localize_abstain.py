"""The right line or none (issue 21, item 1): the rules that abstain when the first difference may come from a value
the trace does not follow (a scale, a mask, a size made on another line), and those that name that line when it
alone explains the difference. Each is tested on its own, without a sandbox."""
from __future__ import annotations

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules, source
from tests.localize_helpers import CLASS, line_of, scores_pair, stage

def test_what_a_mask_is_made_from():
    """A buffer (one hop to the local it is made from), a prefix slice, another slice, a flip on the call's line."""
    s2, s3, s4, s5 = (line_of(f"s{i} = ") for i in (2, 3, 4, 5))
    assert source.mask_value(CLASS, s2) == ("attribute", line_of("future = torch"), False, "prefix")
    assert source.mask_value(CLASS, s3)[3] == "other"
    assert source.mask_value(CLASS, s4) == ("one", line_of("keep = "), True, "none")
    assert source.mask_value(CLASS, s5) == ("attribute", line_of('"causal"'), True, "none")
    assert source.mask_value(CLASS, line_of("s6 = "))[0] == "here"  # no masking call
    assert source.mask_built_at(CLASS, s2) == (False, None)  # a raise: a buffer is the call's to slice
    assert source.mask_built_at(CLASS, s4) == (True, line_of("keep = "))
    assert source.masking_lines(CLASS) == {s2, s3, s4, s5}
    bare = "from torch import where\ndef f(s, m):\n    a = where(m, s, 0.0)\n    b = s * m\n    return a, b\n"
    assert source.masking_lines(bare) == {3} and source.applies_mask(bare, 3) and not source.applies_mask(bare, 4)


def test_where_a_setting_of_the_class_is_made():
    assert source.attribute_built_at(CLASS, line_of("s1 = "), "scale") == line_of("self.scale = ")
    assert source.attribute_built_at(CLASS, line_of("s1 = "), "d") is None  # a copy of an argument: a setting
    pair = "class A:\n    def __init__(self, d, h):\n        self.d, self.h = d, h\n    def f(self):\n        return self.d\n"
    assert source.attribute_built_at(pair, 5, "d") is None
    named = "class A:\n    def __init__(self, n):\n        b = tril(n)\n        self.register_buffer('m', b)\n    def f(self):\n        return self.m\n"
    assert source.attribute_built_at(named, 6, "m") == 3  # a buffer registered by name: where that local is made
    assert source.attributes_read_at(CLASS, line_of("s1 = ")) == ["scale"]
    assert source.attribute_uses(CLASS, line_of("s1 = "), "scale") == {line_of("s1 = ")}
    assert source.applies_root("x = math.sqrt(self.d)\n", 1, "self.d")
    assert source.reads_size("d = q.shape[-1]\n", 1) and source.reads_size("B, T, C = x.size()\n", 1)
    assert not source.reads_size("t = float(self.d)\n", 1) and not source.reads_size("hs = C // n\n", 1)


def test_a_large_negative_fill_blocks_as_minus_infinity_does():
    _, masked = scores_pair()
    assert loc.matches(masked.masked_fill(torch.isneginf(masked), -1e9), stage("masked_scores", 31, masked))
    assert not loc.matches(masked.masked_fill(torch.isneginf(masked), 0.0), stage("masked_scores", 31, masked))


def test_an_abstention_is_told_from_nothing_to_locate():
    """decide() returns ABSTAIN, so that the training-mode pass does not name a line the evaluation pass refused."""
    from grader.diagnosis.localize.align import decide

    s, masked = scores_pair()
    stages = [stage("scores", 30, s), stage("masked_scores", 31, masked)]
    src = "def f(s, m):\n    b = m\n    b = b | m\n    return s.masked_fill(b, -1e9)\n"
    assert decide([loc.Traced("div", 1, s)], stages, {"type": "RuntimeError", "line": 4}, source=src) is rules.ABSTAIN
    assert decide([loc.Traced("div", 1, s), loc.Traced("masked_fill", 4, masked)], stages, source=src) is None


def test_an_abstention_that_names_the_mistake_names_it_without_a_line(monkeypatch):
    """Heads laid out wrongly over two lines: no line, but the diagnosis is still heads_merge_wrong."""
    from grader import results
    from grader.catalog import load_catalog
    from grader.diagnosis.diagnoses import make
    from grader.diagnosis.localize import run
    from grader.results import Status, Verdict

    monkeypatch.setattr(run, "locate", lambda ex, harness, src: rules.Abstain("heads_merge_wrong", "laid out otherwise"))
    verdict = Verdict(4, "x", "t", [results.TestResult("t", "numerics", Status.FAILED, "x")], [make("wrong_output")],
                      "cpu", 0.0)
    run.localize_verdict(verdict, load_catalog().get(4), object(), "x = 1\n")
    assert verdict.localization is None and verdict.diagnoses[0].id == "heads_merge_wrong"


def test_an_exception_raised_only_for_some_inputs_points_at_the_line_that_raised():
    from grader import results
    from grader.diagnosis import RAISED_CODES
    from grader.diagnosis.diagnoses import make
    from grader.diagnosis.localize.raising import raising_line
    from grader.results import Status, Verdict

    src = "import torch\ndef f(q, k):\n    s = q @ k.transpose(1, 2)\n    return s\n"
    def verdict(line, diagnosis="runtime_error", code="raised_exception"):
        t = results.TestResult("unbatched", "shapes", Status.ERROR, "IndexError", line=line, code=code)
        return Verdict(1, "x", "t", [t], [make(diagnosis)], "cpu", 0.0)
    found = raising_line(verdict(3), src, RAISED_CODES)
    assert found is not None and found.line == 3 and "IndexError" not in found.evidence  # its message is not ours to show
    assert raising_line(verdict(3, "wrong_output"), src, RAISED_CODES) is None  # another mistake named: not its line
    assert raising_line(verdict(None), src, RAISED_CODES) is None
    helper = "def g(t):\n    return t.transpose(1, 2)\ndef f(q):\n    return g(q.flatten(1))\n"
    assert raising_line(verdict(2), helper, RAISED_CODES) is None  # in a helper: the helper or the call
    unshaped = helper.replace("g(q.flatten(1))", "g(q)")  # its one caller passes its input as it comes: the helper's line
    assert raising_line(verdict(2), unshaped, RAISED_CODES).line == 2


def test_a_line_raising_on_a_size_of_another_tensor_is_not_named():
    """`n = q.size(1)` read by `m.reshape(2, n)`: on inputs where the keys' length differs the size may be taken from
    the wrong tensor where it is unpacked as well as used wrongly here. A size of the tensor the line works on is its own."""
    from grader import results
    from grader.diagnosis import RAISED_CODES
    from grader.diagnosis.diagnoses import make
    from grader.diagnosis.localize.raising import raising_line
    from grader.results import Status, Verdict

    t = results.TestResult("lengths", "shapes", Status.ERROR, "RuntimeError", line=4, code="raised_exception")
    verdict = Verdict(2, "x", "t", [t], [make("runtime_error")], "cpu", 0.0)
    other = "def f(q, k, m):\n    n = q.size(1)\n    s = q @ k.transpose(1, 2)\n    m = m.reshape(2, n)\n    return s, m\n"
    assert raising_line(verdict, other, RAISED_CODES) is None
    own = other.replace("n = q.size(1)", "n = m.size(1)")
    assert raising_line(verdict, own, RAISED_CODES).line == 4
