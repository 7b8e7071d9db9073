"""Exercise 1's own checks and mistakes: the sliding-window mask (the generic `causal` feature cannot be used,
it wants every past key to get weight)."""
import math

import torch

from grader.diagnosis.behaviour import attempt, close, crash_or, failed, match, report
from grader.diagnosis.diagnoses import make
from grader.harness import compare, expect
from grader.probes import probe_params, read_weights
from grader.suites import check


def inputs(kit, c, T=None, salt=0, B=2):
    return kit.randn(B, T or c["context_length"], c["d_in"], salt=salt)


@check("masking")
def test_future_does_not_leak(kit, ex, init):
    """Changing the last token leaves every earlier output unchanged."""
    w = kit.weights(init, salt=3)
    x = inputs(kit, init, salt=30)
    base, _ = kit.run(init, [x], params=w)
    x2 = x.clone()
    x2[:, -1, :] += 3
    out, _ = kit.run(init, [x2], params=w)
    leak = (out[0][:, :-1] - base[0][:, :-1]).abs().max().item()
    expect(leak <= 1e-9, f"changing the last token changed earlier outputs by {leak:.3g}: a query sees the future",
           "future_token_leak")


@check("window")
def test_old_tokens_fall_out_of_the_window(kit, ex, init):
    """Changing token 0 changes no output at a query i >= window, and does change query window - 1."""
    W, T = init["window"], init["context_length"]
    if W >= T:
        return  # the window covers every token: nothing falls out
    w = kit.weights(init, salt=4)
    x = inputs(kit, init, salt=40)
    base, _ = kit.run(init, [x], params=w)
    x2 = x.clone()
    x2[:, 0, :] += 3
    out, _ = kit.run(init, [x2], params=w)
    diff = (out[0] - base[0]).abs().amax(dim=(0, 2))  # per query position
    far = diff[W:].max().item()
    expect(far <= 1e-9, f"with window={W}, changing token 0 changed the output of query {W + int(diff[W:].argmax())} "
                        f"by {far:.3g}: a query sees a key {W} or more tokens back", "check_failed")
    edge = diff[W - 1].item()
    expect(edge > 1e-6, f"with window={W}, changing token 0 left query {W - 1}'s output unchanged: "
                        f"the oldest key inside the window is blocked", "check_failed")


@check("window")
def test_window_weights_are_exact(kit, ex):
    """Through the probe: keys outside the window get exactly 0, keys inside it a positive weight."""
    p = ex.probe
    params, x = probe_params(ex, kit.weights(p, salt=5))
    if x.dim() == 2:
        x = x.unsqueeze(0)  # the probe is one unbatched sequence; the contract wants (B, T, d_in)
    out, _ = kit.run(p, [x], params=params)
    weights, _ = read_weights(ex, out[0])
    T = weights.shape[-1]
    pos = torch.arange(T)
    dist = pos[:, None] - pos[None, :]
    allowed = (dist >= 0) & (dist < p["window"])
    blocked_max = weights[..., ~allowed].abs().max().item()
    expect(blocked_max <= 1e-12, f"with window={p['window']}, a key outside the window gets weight {blocked_max:.3g}; "
                                 f"it must get exactly 0", "check_failed")
    inside_min = weights[..., allowed].min().item()
    expect(inside_min > 0, f"with window={p['window']}, a key inside the window gets weight {inside_min:.3g}; "
                           f"every key with i - window < j <= i must be attended", "check_failed")


# -- mistakes ------------------------------------------------------------------------------------------------
MISTAKES = {
    "window_one_too_wide": "with query i also attending key i - window (window + 1 keys)",
    "window_one_too_narrow": "with query i attending only keys i - window + 1 < j <= i (window - 1 keys)",
    "window_missing": "with a plain causal mask (no window: every past key is attended)",
    "window_not_causal": "with a two-sided window |i - j| < window (future keys attended too)",
}
ALIASES = {"window_one_too_wide": "window_off_by_one", "window_one_too_narrow": "window_off_by_one"}
EXCLUSIVE = [set(MISTAKES)]
DIAGNOSES = {
    "window_off_by_one": {
        "title": "The sliding window is off by one",
        "explanation": "Query i must see exactly `window` keys: itself and the window - 1 before it, i.e. "
                       "i - window < j <= i. Using <= instead of < (or the reverse) on the distance adds or drops "
                       "the oldest key, so every query past the start of the sequence mixes in the wrong tokens.",
        "hint": "With dist = i - j, a key is allowed when 0 <= dist < window; block dist >= window.",
    },
    "window_missing": {
        "title": "No sliding window: plain causal attention",
        "explanation": "The causal mask is there, but keys more than window - 1 tokens back are still attended, "
                       "so the cost and the receptive field grow with the sequence instead of staying local.",
        "hint": "Also block the keys with i - j >= window, not only those with j > i.",
    },
    "window_not_causal": {
        "title": "The window is two-sided: queries see the future",
        "explanation": "A window |i - j| < window lets query i attend the next window - 1 tokens too. In a "
                       "decoder those tokens do not exist yet at generation time, so the model learns to cheat.",
        "hint": "Keep the causal condition j <= i and add the window on the past side only: 0 <= i - j < window.",
    },
}


def linear(t, w, name):
    y = t @ w[f"{name}.weight"].T
    b = w.get(f"{name}.bias")
    return y if b is None else y + b


def sw_variant(x, w, init, bugs=frozenset(), wrong_dim=None):
    """The reference in float64 with any of the bugs on purpose (kit names no_scaling, scale_wrong_dim too)."""
    H, d_out, W = init["num_heads"], init["d_out"], init["window"]
    hd = d_out // H
    B, T, _ = x.shape
    q, k, v = (linear(x, w, n).view(B, T, H, hd).transpose(1, 2) for n in ("W_query", "W_key", "W_value"))
    scale = 1.0 if "no_scaling" in bugs else 1 / math.sqrt(wrong_dim) if "scale_wrong_dim" in bugs else 1 / math.sqrt(hd)
    scores = q @ k.transpose(-2, -1) * scale
    pos = torch.arange(T)
    dist = pos[:, None] - pos[None, :]
    if "window_missing" in bugs:
        allowed = dist >= 0
    elif "window_not_causal" in bugs:
        allowed = dist.abs() < W
    elif "window_one_too_wide" in bugs:
        allowed = (dist >= 0) & (dist <= W)
    elif "window_one_too_narrow" in bugs:
        allowed = (dist >= 0) & (dist < W - 1)
    else:
        allowed = (dist >= 0) & (dist < W)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    ctx = (weights @ v).transpose(1, 2).reshape(B, T, d_out)
    return linear(ctx, w, "out_proj")


def diagnose(ex, kit, verdict) -> list:
    init = dict(ex.config)
    found = [make("api_mismatch", t.message) for t in failed(verdict, "signature_mismatch")]
    later = [make("heads_not_divisible", t.message) for t in failed(verdict, "construct_should_raise")]
    w = kit.weights(init, salt=60)
    x = inputs(kit, init, salt=61)
    got, err = attempt(lambda: kit.run(init, [x], params=w)[0])
    if err is not None:
        return found + [crash_or(err)] + later
    short, err = attempt(lambda: kit.run(init, [x[:, :3]], params=w)[0])
    if err is not None and err.code not in ("timeout", "worker_exit"):
        return found + [make("mask_not_sliced", f"the full context runs, but with 3 of "
                                                f"{init['context_length']} tokens: {err}")] + later
    meta, err = attempt(lambda: kit.run(init, [x], params=w, device="meta")[0])
    if err is not None and err.code not in ("timeout", "worker_exit"):
        device = [make("mask_device", f"on the meta device: {err}")]
    else:
        device = []
    if close(got[0], sw_variant(x, w, init)):
        return found + device + later + [make("wrong_output", t.message) for t in verdict.failures() if t.own]
    hd = init["d_out"] // init["num_heads"]
    bugs = [*MISTAKES, "no_scaling", "scale_wrong_dim"]
    matches = match(ex, [([x, w, init], [got[0]])],
                    lambda a, b, wd: [sw_variant(*a, bugs=b, wrong_dim=wd)],
                    bugs, [init["d_out"], init["d_in"]], hd)
    named = report(ex, matches, hd)
    if not named:
        named = [make("wrong_output", t.message) for t in verdict.failures()[:1]]
    return found + named + device + later
