"""grader/diagnosis/localize/rules/constants.py and localize/constants.py: a mask or a table the code builds itself.

Small functions written here (not corpus files), traced in this process by the tracer the worker uses, and aligned
with a small reference of their own; no sandbox."""
from __future__ import annotations

import math

import torch

from grader.diagnosis import localize as loc
from grader.diagnosis.localize import rules
from grader.diagnosis.localize.align import decide
from grader.diagnosis.localize.constants import mask_match, roots, table_match
from grader.sandbox.trace import Tracer

MASK_REF = '''
import math, torch
def attend(q, k, pad):
    B, L, S = q.shape[0], q.shape[1], k.shape[1]
    blocked = torch.ones(L, S, dtype=torch.bool).triu(1)
    blocked = blocked | pad.view(B, 1, S)
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # stage: scores
    s = s.masked_fill(blocked, -1e9)  # stage: masked_scores
    return s.softmax(-1)  # stage: weights
'''

TABLE_REF = '''
import torch
def rope_angles(x, positions, base=100.0):
    half = x.shape[-1] // 2
    inv = base ** (-torch.arange(half, dtype=torch.float64) * 2 / x.shape[-1])
    angles = positions.double()[:, None] * inv  # stage: angles
    return x * torch.cat([angles, angles], -1).cos()  # stage: rotated
'''


def traced(tmp_path, name: str, src: str, fn: str, args):
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    scope = {}
    exec(compile(src, str(path), "exec"), scope)
    tracer = Tracer(str(path), [a for a in args if isinstance(a, torch.Tensor)])
    with torch.no_grad(), tracer:
        scope[fn](*args)
    def to(es):
        return [loc.Traced(e.op, e.line, e.tensor, e.data, e.uses) for e in es]
    return to(tracer.entries), to(tracer.consts)


def aligned(tmp_path, ref_src: str, src: str, fn: str, args, how=decide):
    ref, ref_consts = traced(tmp_path, "ref", ref_src, fn, args)
    stages = loc.stages_from_trace(ref, loc.stage_lines(ref_src))
    entries, consts = traced(tmp_path, "sub", src, fn, args)
    return how(entries, stages, source=src, reference=[r for r in ref if not any(r.tensor is s.tensor for s in stages)],
               consts=consts, reference_consts=ref_consts + ref)


def locate(tmp_path, ref_src: str, src: str, fn: str, args):
    return aligned(tmp_path, ref_src, src, fn, args)


def mask_args():
    g = torch.Generator().manual_seed(3)
    pad = torch.zeros(3, 4, dtype=torch.bool)
    pad[1, 3:], pad[2, 1:] = True, True
    return [torch.randn(3, 4, 5, generator=g, dtype=torch.float64), torch.randn(3, 4, 5, generator=g, dtype=torch.float64), pad]


def line_in(src: str, text: str) -> int:
    return next(i for i, s in enumerate(src.splitlines(), 1) if text in s)


def sub_mask(body: str) -> str:
    return ('import math, torch\ndef attend(q, k, pad):\n    B, L, S = q.shape[0], q.shape[1], k.shape[1]\n'
            + body + '    s = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(m, -1e9)\n    return s.softmax(-1)\n')


def test_the_tracer_keeps_masks_and_tables_apart_from_the_data_entries(tmp_path):
    entries, consts = traced(tmp_path, "ref", MASK_REF, "attend", mask_args())
    assert all(e.tensor.is_floating_point() for e in entries)  # the data entries as before: floating only
    ops = [c.op for c in consts]
    assert ops == ["ones", "triu", "view", "__or__"], ops
    assert consts[1].uses == (0,) and sorted(consts[3].uses) == [1, 2]
    masked = next(e for e in entries if e.op == "masked_fill")
    assert masked.uses == (3,)  # the entry names the mask it read


def test_the_consts_are_bounded_whatever_the_code_builds(tmp_path):
    src = "import torch\ndef f(x):\n    big = torch.ones(1 << 15)\n    for _ in range(500):\n        t = torch.arange(4)\n    return x * (big[:4] + t)\n"
    entries, consts = traced(tmp_path, "sub", src, "f", [torch.randn(4, dtype=torch.float64)])
    from grader.sandbox.trace import MAX_CONST_ELEMENTS, MAX_CONSTS
    assert len(consts) <= MAX_CONSTS and sum(c.tensor.numel() for c in consts) <= MAX_CONST_ELEMENTS
    assert all(c.tensor.numel() < 1 << 15 for c in consts)  # too big: left out, and its readers say so (-1)
    assert any(-1 in c.uses for c in consts) or any(-1 in e.uses for e in entries)


def test_a_mask_is_compared_where_it_is_applied():
    pad = torch.tensor([[False, False, True], [False, True, True]])
    ref = pad.view(2, 1, 1, 3)
    assert mask_match(pad[:, None, None, :].expand(2, 4, 3, 3), [ref]) == "same"  # expanded over heads and queries
    assert mask_match(~pad.view(2, 1, 1, 3), [ref]) == "negated"  # allowed positions
    assert mask_match(pad.view(2, 1, 3, 1), [ref]) is None  # on the queries: the same values, applied otherwise
    none, every = torch.zeros(3, 3, dtype=torch.bool), torch.ones(3, 3, dtype=torch.bool)
    assert mask_match(none, [every, ref]) == "negated" and mask_match(none, [none, every]) == "both"


def test_a_table_is_compared_up_to_layout_sign_and_dtype():
    inv = 100.0 ** (-torch.arange(4, dtype=torch.float64) / 4)
    assert table_match(torch.cat([inv, inv]).float(), [inv]) == "same"  # duplicated halves, float32
    assert table_match(inv.repeat_interleave(2)[None, :], [inv]) == "same"  # pairs interleaved
    assert table_match(-torch.log(inv), [torch.log(inv)]) == "negated"
    assert table_match(1 / inv, [inv]) is None


def test_a_padding_mask_reshaped_for_the_queries_is_its_line(tmp_path):
    src = sub_mask("    causal = torch.ones(L, S, dtype=torch.bool).triu(1)\n"
                   "    onq = pad.view(B, S, 1)\n"
                   "    m = causal | onq\n")
    found = locate(tmp_path, MASK_REF, src, "attend", mask_args())
    assert found is not None and not isinstance(found, rules.Abstain) and found.line == line_in(src, "onq = pad"), found


def test_masks_combined_the_wrong_way_is_the_combining_line(tmp_path):
    src = sub_mask("    causal = torch.ones(L, S, dtype=torch.bool).triu(1)\n"
                   "    p = pad[:, None, :]\n"
                   "    m = causal & p\n")
    found = locate(tmp_path, MASK_REF, src, "attend", mask_args())
    assert found is not None and not isinstance(found, rules.Abstain) and found.line == line_in(src, "causal & p"), found


def test_a_mask_in_the_other_convention_is_where_the_convention_breaks(tmp_path):
    """allowed positions: the causal part is built as allowed (tril), the padding one as blocked, then all flipped."""
    src = sub_mask("    keep = torch.ones(L, S, dtype=torch.bool).tril()\n"
                   "    keep = keep & pad[:, None, :]\n"
                   "    m = ~keep\n")
    found = locate(tmp_path, MASK_REF, src, "attend", mask_args())
    assert found is not None and not isinstance(found, rules.Abstain) and found.line == line_in(src, "keep & pad"), found


def test_an_inversion_on_another_line_than_its_reader_gives_no_line(tmp_path):
    """`p = ~pad` may be the mistake, or `causal | p` reading it: either fix works."""
    src = sub_mask("    causal = torch.ones(L, S, dtype=torch.bool).triu(1)\n"
                   "    p = ~pad[:, None, :]\n"
                   "    m = causal | p\n")
    al = aligned(tmp_path, MASK_REF, src, "attend", mask_args(), how=loc.Alignment)
    assert al.failing.name == "masked_scores" and rules.wrong_mask(al) is None


def test_the_reference_own_masks_built_otherwise_give_no_line(tmp_path):
    src = sub_mask("    i = torch.arange(L)[:, None]\n"
                   "    j = torch.arange(S)[None, :]\n"
                   "    allowed = (j <= i) & ~pad.unsqueeze(1)\n"
                   "    m = ~allowed\n")
    assert locate(tmp_path, MASK_REF, src, "attend", mask_args()) is None  # every stage reproduced


def rope_args():
    g = torch.Generator().manual_seed(4)
    return [torch.randn(2, 5, 6, generator=g, dtype=torch.float64), torch.arange(5) + 300]


def sub_rope(body: str) -> str:
    return ("import torch, math\ndef rope_angles(x, positions, base=100.0):\n    d = x.shape[-1]\n" + body
            + "    angles = positions.double()[:, None] * inv\n    return x * torch.cat([angles, angles], -1).cos()\n")


def test_a_frequency_table_built_wrong_is_its_line(tmp_path):
    src = sub_rope("    e = torch.arange(0, d, 2, dtype=torch.float64)\n"
                   "    e = e / (d // 2)\n"  # 4i/d: twice the exponent
                   "    inv = torch.exp(-math.log(base) * e)\n")
    found = locate(tmp_path, TABLE_REF, src, "rope_angles", rope_args())
    assert found is not None and not isinstance(found, rules.Abstain) and found.line == line_in(src, "e = e /"), found


def test_a_frequency_table_right_in_the_end_gives_no_line(tmp_path):
    src = sub_rope("    e = torch.arange(0, d, 2, dtype=torch.float64) / d\n"
                   "    inv = 1.0 / (base ** e)\n")
    assert locate(tmp_path, TABLE_REF, src, "rope_angles", rope_args()) is None


def test_positions_replaced_by_a_range_are_that_line(tmp_path):
    src = ("import torch\ndef rope_angles(x, positions, base=100.0):\n    d = x.shape[-1]\n"
           "    inv = base ** (-torch.arange(d // 2, dtype=torch.float64) * 2 / d)\n"
           "    t = torch.arange(x.shape[-2], dtype=torch.float64)\n"
           "    angles = t[:, None] * inv\n"
           "    return x * torch.cat([angles, angles], -1).cos()\n")
    found = locate(tmp_path, TABLE_REF, src, "rope_angles", rope_args())
    assert found is not None and not isinstance(found, rules.Abstain) and found.line == line_in(src, "t = torch.arange"), found


def test_wrong_tables_begun_on_two_lines_give_no_line():
    ok = loc.Traced("arange", 1, torch.arange(4.0), False)
    a = loc.Traced("mul", 2, torch.arange(4.0) * 3, False, (0,))
    b = loc.Traced("arange", 3, torch.arange(7.0), False)
    c = loc.Traced("add", 4, torch.ones(7, 4), False, (1, 2))
    assert roots([ok, a, b, c], [3], [torch.arange(4.0)]) is not None
    assert {x.line for _, x in roots([ok, a, b, c], [3], [torch.arange(4.0)])} == {2, 3}
    assert roots([ok, a, None, c], [3], [torch.arange(4.0)]) is None  # a const dropped: unknown
    assert math.isfinite(1.0)


def test_the_workers_consts_are_validated_as_untrusted_data():
    from grader.diagnosis.localize.untrusted import validate, validate_consts
    good = {"op": "triu", "line": 3, "shape": [2, 2], "dtype": "bool", "data": False, "uses": [0]}
    reply = {"entries": [{"op": "mul", "line": 2, "shape": [2], "dtype": "float64", "uses": [1, -1]}],
             "consts": [good, {**good, "line": 99}, {**good, "dtype": "complex64"}, {**good, "shape": [4]},
                        {**good, "uses": ["x"]}, {**good, "uses": list(range(20))}, "junk"]}
    mask = torch.ones(2, 2, dtype=torch.bool)
    out = {"trace.0": torch.ones(2, dtype=torch.float64), **{f"const.{i}": mask for i in range(7)}}
    consts = validate_consts(reply, out, n_lines=10)
    assert consts[0] is not None and consts[0].uses == (0,) and consts[1:4] == [None, None, None] and consts[6] is None
    assert consts[4].uses == () and consts[5].uses == ()  # malformed uses: the entry reads nothing known
    entries, _ = validate(reply, out, n_lines=10)
    assert entries[0].uses == (1, -1)
    assert validate_consts({"consts": [good] * 500}, {f"const.{i}": mask for i in range(500)}, 10).__len__() <= 64
    assert validate_consts(None, out, 10) == [] and validate_consts(reply, None, 10) == []
