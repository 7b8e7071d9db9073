"""Exercise 13's own module (named by info.toml `module`): its checks, its mistakes, and the rules that name them.

Loaded by file path by the grader; see grader/pack.py for what such a module may define.
"""
import math

import torch

from grader.diagnosis.behaviour import attempt, close, crash_or, failed, match, report
from grader.diagnosis.diagnoses import make
from grader.harness import compare, expect
from grader.suites import ON_DEVICE, check


def qkv(kit, c, salt=0):
    return [kit.randn(c["B"], c["H"], c["T"], c["d"], salt=salt + i) for i in range(3)]


@check("numerics")
def test_alibi_matches_reference(kit, ex):
    """The output equals the reference in float64 and float32."""
    args = qkv(kit, ex.config)
    want, _ = kit.ref_run(None, args)
    got, _ = kit.run(None, args)
    compare(got[0], want[0], "output")
    got, _ = kit.run(None, [a.float() for a in args], dtype=torch.float32)
    compare(got[0], want[0], "float32 output", dtype=torch.float32)


@check("masking")
def test_alibi_future_does_not_leak(kit, ex):
    """Changing the last key and value leaves every earlier query's output unchanged."""
    q, k, v = qkv(kit, ex.config, salt=10)
    base, _ = kit.run(None, [q, k, v])
    k2, v2 = k.clone(), v.clone()
    k2[..., -1, :] += 3
    v2[..., -1, :] += 3
    out, _ = kit.run(None, [q, k2, v2])
    leak = (out[0][..., :-1, :] - base[0][..., :-1, :]).abs().max().item()
    expect(leak <= 1e-9, f"changing the last token changed earlier outputs by {leak:.3g}: a query sees the future",
           "future_token_leak")


@check("device", evidence=ON_DEVICE)
def test_alibi_runs_on_another_device(kit, ex):
    """Runs on a second device (cuda:0, emulated where no GPU is): positions and slopes are made on the input's device."""
    c = ex.config
    (got,), _ = kit.run(None, qkv(kit, c), device="emulated")
    want = (c["B"], c["H"], c["T"], c["d"])
    expect(tuple(got.shape) == want, f"on the device the output shape is {tuple(got.shape)}, expected {want}", "shape_mismatch")


# -- mistakes: the reference with a bug on purpose ---------------------------------------------------------
MISTAKES = {
    "alibi_bias_sign": "with the bias +m_h·(i − j) instead of −m_h·(i − j) (far keys favoured)",
    "alibi_slopes_reversed": "with the slopes given to the heads in reverse order",
    "alibi_bias_missing": "without the ALiBi bias",
}
ALIASES = {"alibi_slopes_reversed": "alibi_slopes_order"}
EXCLUSIVE = [set(MISTAKES)]
DIAGNOSES = {
    "alibi_bias_sign": {
        "title": "The ALiBi bias has the wrong sign",
        "explanation": "ALiBi penalises distance: the score of key j for query i loses m_h·(i − j), so nearer keys weigh "
                       "more. Adding the bias instead rewards the most distant tokens, the opposite of a recency prior.",
        "hint": "Subtract slope * (i - j) from the scaled scores; i - j is positive for keys in the past.",
    },
    "alibi_slopes_order": {
        "title": "The ALiBi slopes are given to the wrong heads",
        "explanation": "Head h (0-based) has slope 2^(−8(h+1)/H): the first head looks most locally, the last most "
                       "globally. Reversing the order gives each head another head's range.",
        "hint": "Build the slopes from torch.arange(1, H + 1): 2 ** (-8 * arange / H), in that order.",
    },
    "alibi_bias_missing": {
        "title": "No ALiBi bias: plain causal attention",
        "explanation": "Without the bias the attention has no notion of position at all (there are no position "
                       "embeddings in an ALiBi model), so the order of the tokens is lost.",
        "hint": "Add -slope_h * (i - j) to the scaled scores of head h before the softmax.",
    },
}


def alibi_variant(q, k, v, bugs=frozenset(), wrong_dim=None):
    B, H, T, d = q.shape
    scale = 1.0 if "no_scaling" in bugs else 1 / d if "scale_not_sqrt" in bugs else 1 / math.sqrt(d)
    scores = q @ k.transpose(-2, -1) * scale
    pos = torch.arange(T)
    dist = (pos[:, None] - pos[None, :]).to(q.dtype)
    slopes = 2.0 ** (-8.0 * torch.arange(1, H + 1, dtype=q.dtype) / H)
    if "alibi_slopes_reversed" in bugs:
        slopes = slopes.flip(0)
    bias = slopes.view(H, 1, 1) * dist
    if "alibi_bias_sign" in bugs:
        scores = scores + bias
    elif "alibi_bias_missing" not in bugs:
        scores = scores - bias
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v


# -- diagnosis -----------------------------------------------------------------------------------------------
def diagnose(ex, kit, verdict) -> list:
    """One probe against the variants; a right probe leaves the failing checks' own messages."""
    c = ex.config
    found = [make("api_mismatch", t.message) for t in failed(verdict, "signature_mismatch")]
    args = qkv(kit, c, salt=20)
    got, err = attempt(lambda: kit.run(None, args)[0])
    if err is not None:
        return found + [crash_or(err)]
    if close(got[0], alibi_variant(*args)):
        return found + [make(t.evidence[0] if t.evidence else "wrong_output", t.message) for t in verdict.failures() if t.own]
    bugs = [*MISTAKES, "no_scaling", "scale_not_sqrt"]
    matches = match(ex, [(args, got)], lambda a, b, wd: [alibi_variant(*a, bugs=b)], bugs, [], c["d"])
    return found + report(ex, matches, c["d"])
