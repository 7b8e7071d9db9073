"""grader/diagnosis/localize/source.py: the submission is parsed once per verdict, whatever the rules ask of it."""
from __future__ import annotations

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import source
from tests.localize_helpers import SCALE_SOURCE, scale_alignment


def test_every_helper_reads_one_parse_of_the_source():
    source.parse.cache_clear()
    al = scale_alignment(6, 1.5)
    found = loc.align(al.entries, al.stages, source=SCALE_SOURCE)
    assert found is not None
    info = source.parse.cache_info()
    assert info.misses == 1 and info.hits >= 3, info
    assert source.parse(SCALE_SOURCE) is source.parse(SCALE_SOURCE)


def test_a_source_that_does_not_parse_gives_no_facts():
    broken = "def f(:\n    return 1\n"
    assert source.parse(broken) is None
    assert source.assignments(broken) == {} and source.return_after(broken, 2) is None


def test_a_size_chosen_on_another_line_as_a_slice_bound_or_by_a_condition():
    src = ("def f(x, pad, cache=None):\n"
           "    seq = x.size(-1)\n"
           "    B, H, T, D = x.shape\n"
           "    n = x.size(1) if cache is None else 1\n"
           "    def split(t):\n"
           "        return t.view(B, n, H, -1)\n"
           "    P = 0 if cache is None else cache.size(2)\n"
           "    m = pad[P:seq, P:seq] / seq\n"
           "    return pad.view(B, 1, 1, T), split(x), m[:T, :T]\n")
    assert source.size_chosen_elsewhere(src, 8) == {"seq": 2}  # a slice bound made for its use; P = 0 by default
    assert source.size_chosen_elsewhere(src, 6) == {"n": 4}  # picked by a condition, read in a closure
    assert source.size_chosen_elsewhere(src, 9) == {}  # sizes unpacked together from a shape are what they are
    assert source.size_chosen_elsewhere(src, 2) == {}


def test_where_the_operands_of_a_line_got_their_names():
    src = ("def f(qkv, B, T):\n"
           "    q, k, v = qkv.split(4, dim=-1)\n"
           "    k = k.view(B, T, 2, 2).transpose(1, 2)\n"
           "    q = q.view(B, T, 2, 2).transpose(1, 2)\n"
           "    v2, k2, q2 = [c.view(B, T, 2, 2) for c in qkv.chunk(3, -1)]\n"
           "    return q @ k.transpose(-2, -1), q2 @ k2.transpose(-2, -1)\n")
    assert source.bound_at(src, 6, "q") == 2 and source.bound_at(src, 6, "k") == 2
    assert source.bound_at(src, 6, "q2") == 5 and source.bound_at(src, 3, "k") == 2
    assert source.bound_at(src, 2, "q") is None


def test_a_layer_picked_by_a_condition():
    src = ("class A:\n    def __init__(self, d, out):\n        self.w_o = Linear(d, d) if out else Identity()\n"
           "        self.w_q = Linear(d, d)\n")
    assert source.chosen_by_condition(src, 3) and not source.chosen_by_condition(src, 4)


def test_a_shared_tree_is_walked_once_in_ast_walks_order(monkeypatch):
    import ast

    tree = source.parse(SCALE_SOURCE + "\n# walked\n")
    calls = []
    real = ast.walk
    monkeypatch.setattr(source.ast, "walk", lambda node: calls.append(node) or real(node))
    first = source.walk(tree)
    assert list(first) == list(real(tree))
    assert source.walk(tree) is first and calls == [tree]
    func = source.function_at(tree, 3)
    assert func is not None and calls == [tree]  # the helpers read the kept walk, not a new one
