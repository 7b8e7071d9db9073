"""Exercise 2's own checks and mistakes: a GQA decode step (a custom function, so every check is here)."""
import math

import torch

from grader.diagnosis.behaviour import attempt, close, crash_or, evidence, failed, match, report
from grader.diagnosis.diagnoses import make
from grader.harness import compare, expect
from grader.suites import check


def qkv(kit, c, salt=0, G=None, H=None):
    B, S, d = c["B"], c["S"], c["d"]
    H = H or c["H"]
    G = G or c["G"]
    return [kit.randn(B, H, 1, d, salt=salt), kit.randn(B, G, S, d, salt=salt + 1), kit.randn(B, G, S, d, salt=salt + 2)]


@check("shape")
def test_output_shape(kit, ex):
    """The output is (B, H, 1, d)."""
    c = ex.config
    got, _ = kit.run(None, qkv(kit, c))
    want = (c["B"], c["H"], 1, c["d"])
    expect(tuple(got[0].shape) == want, f"the output shape is {tuple(got[0].shape)}, expected {want}", "shape_mismatch")


@check("numerics")
def test_matches_reference(kit, ex):
    """The output equals the reference in float64 and float32."""
    args = qkv(kit, ex.config, salt=10)
    want, _ = kit.ref_run(None, args)
    got, _ = kit.run(None, args)
    compare(got[0], want[0], "output")
    got, _ = kit.run(None, [a.float() for a in args], dtype=torch.float32)
    compare(got[0], want[0], "float32 output", dtype=torch.float32)


@check("numerics")
def test_mqa_and_mha_extremes(kit, ex):
    """G = 1 (multi-query) and G = H (multi-head) give the reference's output too."""
    c = ex.config
    for G in (1, c["H"]):
        args = qkv(kit, c, salt=20 + G, G=G)
        want, _ = kit.ref_run(None, args)
        got, _ = kit.run(None, args)
        compare(got[0], want[0], f"output with G={G}")


@check("numerics")
def test_gradients(kit, ex):
    """Gradients of q and both caches equal the reference's."""
    args = qkv(kit, ex.config, salt=30)
    g = [kit.randn(*kit.ref_run(None, args)[0][0].shape, salt=33)]
    want, wg = kit.ref_run(None, args, grad_out=g)
    got, gg = kit.run(None, args, grad_out=g)
    for name in ("arg0", "arg1", "arg2"):
        expect(name in gg, f"no gradient came back for {name}", "check_failed")
        compare(gg[name], wg[name], f"gradient of {['q', 'k_cache', 'v_cache'][int(name[-1])]}")


@check("device")
def test_runs_on_meta_device(kit, ex):
    """Runs on meta tensors: nothing is made on the CPU."""
    c = ex.config
    shapes, _ = kit.run(None, qkv(kit, c), device="meta")
    want = (c["B"], c["H"], 1, c["d"])
    expect(tuple(shapes[0]) == want, f"on the meta device the output shape is {shapes[0]}, expected {want}",
           "shape_mismatch")


# -- mistakes ------------------------------------------------------------------------------------------------
MISTAKES = {
    "gqa_groups_interleaved": "with query head h using KV group h % G (`.repeat` instead of `.repeat_interleave`)",
    "gqa_first_group_only": "with every query head using KV group 0",
    "gqa_softmax_wrong_dim": "with the softmax over the query dimension (every weight 1) instead of the cached positions",
}
EXCLUSIVE = [{"gqa_groups_interleaved", "gqa_first_group_only"}]
DIAGNOSES = {
    "gqa_groups_interleaved": {
        "title": "Wrong group mapping: heads take the KV groups in turn",
        "explanation": "Consecutive query heads share a KV group: head h uses group h // (H // G). Tiling the cache "
                       "with `.repeat(1, n, 1, 1)` gives head h group h % G instead, so most heads read another "
                       "group's keys and values (the model was trained with the other layout).",
        "hint": "Expand the caches with k_cache.repeat_interleave(H // G, dim=1), which repeats each group in place.",
    },
    "gqa_first_group_only": {
        "title": "Every query head reads the first KV group",
        "explanation": "Only group 0's keys and values are used (e.g. `k_cache[:, :1]` broadcast to every head): "
                       "that is multi-query attention on part of the cache, and the other G - 1 groups are ignored.",
        "hint": "Give head h the group h // (H // G): repeat_interleave each of the G groups H // G times along dim 1.",
    },
    "gqa_softmax_wrong_dim": {
        "title": "The softmax runs over the wrong dimension",
        "explanation": "The scores are (B, H, 1, S): the distribution is over the S cached positions, the last "
                       "dimension. A softmax over dim -2 normalises a dimension of size 1, so every weight is 1 and "
                       "the output is the plain sum of the values.",
        "hint": "torch.softmax(scores, dim=-1).",
    },
}


def gqa_variant(q, k_cache, v_cache, bugs=frozenset(), wrong_dim=None):
    B, H, L, d = q.shape
    G = k_cache.shape[1]
    n = H // G
    if "gqa_groups_interleaved" in bugs:
        idx = torch.arange(H) % G
    elif "gqa_first_group_only" in bugs:
        idx = torch.zeros(H, dtype=torch.long)
    else:
        idx = torch.arange(H) // n
    k, v = k_cache[:, idx], v_cache[:, idx]
    scale = 1.0 if "no_scaling" in bugs else 1 / d if "scale_not_sqrt" in bugs else 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    weights = torch.softmax(scores, dim=-2 if "gqa_softmax_wrong_dim" in bugs else -1)
    return weights @ v


def diagnose(ex, kit, verdict) -> list:
    c = ex.config
    found = [make("api_mismatch", t.message) for t in failed(verdict, "signature_mismatch")]
    probes = [qkv(kit, c, salt=50), qkv(kit, c, salt=53, G=3)]
    outs = []
    for args in probes:
        got, err = attempt(lambda: kit.run(None, args)[0])
        if err is not None:
            return found + [crash_or(err)]
        outs.append((args, got))
    if all(close(got[0], gqa_variant(*args)) for args, got in outs):
        return found + evidence(verdict, own=True)
    bugs = [*MISTAKES, "no_scaling", "scale_not_sqrt"]
    matches = match(ex, outs, lambda a, b, wd: [gqa_variant(*a, bugs=b)], bugs, [], c["d"])
    named = report(ex, matches, c["d"])
    if not named:
        named = [make("wrong_output", t.message) for t in verdict.failures()[:1]]
    return found + named


def trace_call(ex, kit) -> dict:
    return {"init": None, "params": {}, "args": qkv(kit, ex.config, salt=85), "kwargs": {}, "scalars": {}}
