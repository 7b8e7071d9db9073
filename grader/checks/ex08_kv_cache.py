"""Exercise 8 (kv_cache): forward(x, k_cache=None, v_cache=None) -> (y, k_cache, v_cache).

The worker builds a fresh module for every request, so the suite drives the decoding loop
itself: each step sends the new token(s) and the cache the previous step returned, and checks
the step's output against the full causal forward pass over the whole sequence.
"""
import torch

from grader.diagnosis.diagnoses import make
from grader.diagnosis.behaviour import (api, attempt, close, crash_or, delta, evidence, match, noncontiguous_view,
                                        raised_applying_mask, report, sweep_runs)
from grader.diagnosis.variants import attend, linear, module_bugs, module_forward, wrong_dims
from grader.harness import compare, expect
from grader.suites import ON_DEVICE, check, needs

PROMPT = 3


def sizes(ex, init):
    nh = ex.dim("heads", init)
    return ex.dim("input", init), ex.dim("output", init), nh, ex.dim("output", init) // nh, ex.dim("context", init)


def step(kit, init, params, x, cache=(), **kw):
    """One request: (y, k, v) from the submission, shapes checked against the contract."""
    d_in, d_out, nh, hs, _ = sizes(kit.exercise, init)
    outs, grads = kit.run(init, [x, *cache], params=params, n_outputs=3, check_shapes=False, **kw)
    y, k, v = outs
    B, T = x.shape[:2]
    P = cache[0].shape[2] if cache else 0
    expect(tuple(y.shape) == (B, T, d_out), f"y for {T} new token(s) has shape {tuple(y.shape)}, expected {(B, T, d_out)}",
           "shape_mismatch")
    for name, c in (("k_cache", k), ("v_cache", v)):
        want = (B, nh, P + T, hs)
        expect(tuple(c.shape) == want, f"the returned {name} after {P} cached + {T} new token(s) has shape "
                                       f"{tuple(c.shape)}, expected (B, num_heads, P+T, head_dim) = {want}", "shape_mismatch")
    return (y, k, v), grads


def reference(kit, init, params, x, cache=()):
    outs, _ = kit.ref_run(init, [x, *cache], params=params)
    return outs


@check("shape")
def test_cache_shapes(kit, ex, init):
    """y is (B, T, d_out); the caches grow from (B, nh, P, hs) to (B, nh, P+T, hs), for a prompt, one token and a chunk."""
    params = kit.weights(init)
    d_in, *_ = sizes(ex, init)
    for B in (2, 1):
        x = kit.randn(B, PROMPT + 3, d_in)
        (_, k, v), _ = step(kit, init, params, x[:, :PROMPT])
        (_, k, v), _ = step(kit, init, params, x[:, PROMPT : PROMPT + 1], (k, v))
        step(kit, init, params, x[:, PROMPT + 1 :], (k, v))


@check("numerics")
def test_full_forward_matches_reference(kit, ex, init):
    """Without a cache, y equals causal multi-head attention and the returned caches are the keys and values, float64."""
    params = kit.weights(init)
    d_in, *_, ctx = sizes(ex, init)
    for i, T in enumerate((ctx, 4, 1)):
        x = kit.randn(2, T, d_in, salt=i)
        got, _ = step(kit, init, params, x)
        want = reference(kit, init, params, x)
        for name, g, w in zip(("y", "k_cache", "v_cache"), got, want):
            compare(g, w, f"{name} of a full forward over {T} tokens")


@check("numerics")
def test_token_by_token_decoding_equals_full_forward(kit, ex, init):
    """A prompt of 3 tokens, then one token per call, each fed the cache of the call before: every output equals the full pass."""
    params = kit.weights(init)
    d_in, *_, ctx = sizes(ex, init)
    x = kit.randn(2, ctx, d_in, salt=5)
    y_full, k_full, v_full = reference(kit, init, params, x)
    (y, k, v), _ = step(kit, init, params, x[:, :PROMPT])
    compare(y, y_full[:, :PROMPT], "y of the prompt")
    for t in range(PROMPT, ctx):
        (y, k, v), _ = step(kit, init, params, x[:, t : t + 1], (k, v))
        compare(y[:, 0], y_full[:, t], f"y of token {t}, decoded with {t} cached token(s), vs the full forward pass",
                token_dim=None)
    compare(k, k_full, f"k_cache after decoding all {ctx} tokens vs the keys of the full pass")
    compare(v, v_full, f"v_cache after decoding all {ctx} tokens vs the values of the full pass")


@check("numerics")
def test_chunked_decoding_is_causal(kit, ex):
    """With a cache, a chunk of several new tokens is causal within the chunk: prompt 3, then chunks of 3 and 2."""
    init = ex.config
    params = kit.weights(init)
    d_in, *_, ctx = sizes(ex, init)
    x = kit.randn(2, PROMPT + 5, d_in, salt=6)
    y_full, _, _ = reference(kit, init, params, x)
    cache = reference(kit, init, params, x[:, :PROMPT])[1:]
    (y, k, v), _ = step(kit, init, params, x[:, PROMPT : PROMPT + 3], cache)
    compare(y, y_full[:, PROMPT : PROMPT + 3], f"y of a chunk of 3 new tokens after {PROMPT} cached "
                                               f"(tokens {PROMPT}..{PROMPT + 2})")
    (y, _, _), _ = step(kit, init, params, x[:, PROMPT + 3 :], (k, v))
    compare(y, y_full[:, PROMPT + 3 :], f"y of a chunk of 2 new tokens after {PROMPT + 3} cached")


@check("numerics")
def test_cached_step_float32_and_gradients(kit, ex):
    """A cached step matches in float32, and backward reaches x, both caches and every parameter with the reference's gradients."""
    init = ex.config
    params = kit.weights(init)
    d_in, d_out, nh, hs, _ = sizes(ex, init)
    x = kit.randn(2, PROMPT + 2, d_in, salt=7)
    cache = reference(kit, init, params, x[:, :PROMPT])[1:]
    new = x[:, PROMPT:]
    want = reference(kit, init, params, new, cache)
    (y32, _, _), _ = step(kit, init, params, new.float(), tuple(c.float() for c in cache), dtype=torch.float32)
    compare(y32, want[0], "float32 y of a cached step", dtype=torch.float32)
    gout = [kit.randn(2, 2, d_out, salt=8), kit.randn(2, nh, PROMPT + 2, hs, salt=9), kit.randn(2, nh, PROMPT + 2, hs, salt=10)]
    _, got = step(kit, init, params, new, cache, grad_out=gout)
    _, want_g = kit.ref_run(init, [new, *cache], params=params, grad_out=gout)
    names = {"arg0": "x", "arg1": "k_cache", "arg2": "v_cache"}
    for name, g in want_g.items():
        what = names.get(name, name.removeprefix("param."))
        expect(name in got, f"no gradient reached {what}: is the output detached from it?", "no_gradient")
        compare(got[name], g, f"gradient of {what} (cached step)", token_dim=None)


@check("masking")
def test_future_tokens_do_not_leak(kit, ex):
    """Full forward: changing token j leaves y at every earlier token unchanged."""
    init = ex.config
    params = kit.weights(init)
    d_in, *_, T = sizes(ex, init)
    x = kit.randn(2, T, d_in, salt=11)
    (base, _, _), _ = step(kit, init, params, x)
    for j in range(T - 1, 0, -1):
        x2 = x.clone()
        x2[:, j] = kit.randn(2, d_in, salt=70 + j) * 3
        (out, _, _), _ = step(kit, init, params, x2)
        delta = (out[:, :j] - base[:, :j]).abs().amax(dim=(0, 2))
        if delta.max() > 1e-9:
            i = int(delta.argmax())
            expect(False, f"changing token {j} changed the output at token {i} by {delta[i].item():.3g}: a token can see the future",
                   "future_token_leak")


@check("device", evidence=ON_DEVICE)
def test_cached_step_runs_on_another_device(kit, ex):
    """A cached step runs on a second device (cuda:0, emulated where no GPU is): the mask and anything built in
    forward follow the inputs (step() checks the shapes)."""
    init = ex.config
    d_in, d_out, nh, hs, _ = sizes(ex, init)
    cache = (kit.randn(2, nh, PROMPT, hs), kit.randn(2, nh, PROMPT, hs, salt=1))
    for T in (1, 2):
        step(kit, init, kit.weights(init), kit.randn(2, T, d_in), cache, device="emulated")


@check("device")
@needs("cuda")
def test_cached_step_on_cuda(kit, ex):
    """On the GPU, a cached step in float32 matches the reference: y and both grown caches."""
    init = ex.config
    params = kit.weights(init)
    d_in, *_ = sizes(ex, init)
    x = kit.randn(2, PROMPT + 2, d_in, salt=12)
    cache = reference(kit, init, params, x[:, :PROMPT])[1:]
    want = reference(kit, init, params, x[:, PROMPT:], cache)
    got, _ = step(kit, init, params, x[:, PROMPT:].float(), tuple(c.float() for c in cache), dtype=torch.float32,
                  device="cuda")
    for name, g, w in zip(("y", "k_cache", "v_cache"), got, want):
        compare(g, w, f"CUDA float32 {name} of a cached step", dtype=torch.float32)


# -- mistakes ------------------------------------------------------------------------------------------------
KV_BUGS = ("kv_cache_ignored", "kv_cache_mask_top_left", "kv_cache_mask_dropped", "kv_cache_order")
SCORING_BUGS = frozenset({"no_scaling", "scale_not_sqrt", "scale_wrong_dim", "softmax_wrong_dim"})  # kv_step makes these
MISTAKES = {
    "kv_cache_ignored": "with the new tokens attending only to each other, not to the cached ones",
    "kv_cache_mask_top_left": "with the mask rows of positions 0..T-1 (mask[:T, :P+T]) instead of P..P+T-1",
    "kv_cache_mask_dropped": "with no causal mask once a cache is given",
    "kv_cache_order": "with the new keys and values placed before the cached ones",
}
ALIASES = {"kv_cache_mask_top_left": "kv_cache_mask_offset", "kv_cache_mask_dropped": "kv_cache_mask_offset"}


def kv_step(ex, init: dict, params: dict, x, k_cache=None, v_cache=None, bugs=frozenset(), wrong_dim=None):
    """Exercise 8's forward(x, k_cache, v_cache) -> (y, k, v) as a function of its parameters, with optional mistakes
    (the cache's own, and attention's scale, mask and softmax mistakes)."""
    roles = ex.roles
    q, k, v = (linear(x, params, roles[r]) for r in "qkv")
    B, T, d_out = q.shape
    nh = ex.dim("heads", init) or 1
    hs = d_out // nh
    q, k, v = (t.view(B, T, nh, hs).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
    k_new, v_new = k, v
    if k_cache is not None:
        pair = ((k, k_cache), (v, v_cache)) if "kv_cache_order" in bugs else ((k_cache, k), (v_cache, v))
        k, v = (torch.cat(p, dim=2) for p in pair)
    P = k.size(2) - T
    future = torch.ones(P + T, P + T, dtype=torch.bool).triu(1)
    keys, values = (k_new, v_new) if "kv_cache_ignored" in bugs else (k, v)
    if "kv_cache_ignored" in bugs:
        blocked = future[:T, :T]
    elif "kv_cache_mask_top_left" in bugs:
        blocked = future[:T, : P + T]
    elif "kv_cache_mask_dropped" in bugs and k_cache is not None:
        blocked = None
    else:
        blocked = future[P : P + T, : P + T]
    y, _ = attend(q, keys, values, blocked=blocked, bugs=bugs, wrong_dim=wrong_dim)  # (B, nh, T, hs)
    y = linear(y.transpose(1, 2).reshape(B, T, d_out), params, roles["o"])
    return y, k, v




# -- diagnosis ----------------------------------------------------------------------------------------------
def diagnose(ex, kit, verdict) -> list:
    """Full forward (exercise 4's variants), then one cached token, then a cached chunk, each from the reference's cache."""
    from dataclasses import replace

    found, stop = api(ex, kit, verdict)
    if stop:
        return found
    init = ex.config
    params = kit.weights(init)
    d_in, nh = ex.dim("input", init), ex.dim("heads", init)
    hs = ex.dim("output", init) // nh
    T = ex.dim("context", init)
    x = kit.randn(2, T, d_in, salt=77)
    causal = replace(ex, features=ex.features | {"causal"})  # the full pass is exercise 4's causal attention
    y_full, k_full, v_full = kv_step(ex, init, params, x)
    right = hs

    def run(args):
        return attempt(lambda: kit.run(init, args, params=params, n_outputs=3, check_shapes=False)[0])

    got, err = run([x])
    if err is not None:
        if err.code == "output_count":
            return found + [make("api_mismatch", f"forward must return (y, k_cache, v_cache): {err}")]
        if err.code == "view_noncontiguous":
            return found + noncontiguous_view(causal, err, sweep_runs(ex, kit, n_outputs=3, check_shapes=False))
        return found + [crash_or(err)]
    base, wd, scoring = frozenset(), None, []
    if not close(got[0], y_full):
        matches = match(ex, [(x, got[:1])], lambda a, b, wd: [module_forward(causal, init, params, a, b, wd)],
                         module_bugs(causal, init), wrong_dims(causal, init), right)
        if len(matches) != 1 or not matches[0][0] <= SCORING_BUGS:
            return found + (report(ex, matches, right) or [make("wrong_output", f"full forward: y differs from the "
                                                                            f"reference (max |Δ| = {delta(got[0], y_full):.3g})")])
        # a mistake in the scores (scale, mask, softmax) leaves the cache to check: the decoding steps are compared
        # with the reference that makes the same mistake, and a cache mistake, earlier in the forward, comes first
        (base, wd), = matches
        scoring = report(ex, matches, right)
        y_full, _, _ = kv_step(ex, init, params, x, bugs=base, wrong_dim=wd)
    return found + cache_rules(ex, kit, verdict, init, params, x, got, y_full, k_full, v_full, base, wd) + scoring


def cache_rules(ex, kit, verdict, init, params, x, got, y_full, k_full, v_full, base, wd) -> list:
    """The cache's mistakes, from the submission's full pass (got) and decoding steps after a reference cache."""
    nh = ex.dim("heads", init)
    hs = ex.dim("output", init) // nh
    T = ex.dim("context", init)
    right = hs

    def run(args):
        return attempt(lambda: kit.run(init, args, params=params, n_outputs=3, check_shapes=False)[0])

    found = []
    want = (2, nh, T, hs)
    if any(tuple(c.shape) != want for c in got[1:]):
        return found + [make("kv_cache_layout", f"without a cache, {T} tokens returned caches of shapes "
                                                f"{[tuple(c.shape) for c in got[1:]]}; expected {want}")]
    if not (close(got[1], k_full) and close(got[2], v_full)):
        return found + [make("kv_cache_layout", "without a cache, the returned caches are not the keys and values "
                                                "after the head split")]
    cache = (k_full[:, :, :PROMPT], v_full[:, :, :PROMPT])
    probes = []
    for n in (1, 3):
        new = x[:, PROMPT : PROMPT + n]
        got, err = run([new, *cache])
        if err is not None:
            what = f"with {PROMPT} cached tokens, {n} new token(s) fail: {err}"
            if n > 1 and probes and raised_applying_mask(kit, err):
                return found + [make("kv_cache_mask_offset", f"one new token works; {what}")]
            if n > 1 and probes:  # raised elsewhere: an exception tied to the number of new tokens, with its line
                return found + [crash_or(err, text=f"one new token works; {what}")]
            if err.code not in ("size_mismatch", "view_noncontiguous"):  # not a shape the cache did not fit: the exception
                return found + [crash_or(err, text=what)]
            return found + [make("kv_cache_layout", what)]
        y, k, v = got
        for name, c in (("k_cache", k), ("v_cache", v)):  # either cache alone left unappended
            P = c.shape[2] if c.dim() == 4 else None
            if P in (n, PROMPT) and tuple(c.shape) != (2, nh, PROMPT + n, hs):
                short = make("kv_cache_not_appended", f"after {PROMPT} cached and {n} new token(s) the returned {name} "
                                                      f"holds {P} positions, not {PROMPT + n}")
                alone = kv_step(ex, init, params, new, *cache, bugs=base | {"kv_cache_ignored"}, wrong_dim=wd)[0]
                if P == n and close(y, alone) and not close(y, y_full[:, PROMPT : PROMPT + n]):
                    # neither attended to nor kept: the cache is ignored, and what it returns follows from that
                    return found + [make("kv_cache_ignored", f"with {PROMPT} cached and {n} new token(s), the new "
                                                             "tokens attend only to each other"), short]
                return found + [short]
        if tuple(k.shape) != (2, nh, PROMPT + n, hs) or tuple(v.shape) != tuple(k.shape):
            return found + [make("kv_cache_layout", f"after {PROMPT} cached and {n} new token(s) the returned caches are "
                                                    f"{tuple(k.shape)} and {tuple(v.shape)}; expected {(2, nh, PROMPT + n, hs)}")]
        _, k_swapped, _ = kv_step(ex, init, params, new, *cache, bugs=frozenset({"kv_cache_order"}))
        if close(k, k_swapped) and not close(k, k_full[:, :, : PROMPT + n]):
            return found + [make("kv_cache_order", f"after {PROMPT} cached and {n} new token(s) the returned k_cache "
                                                   "holds the new positions first")]
        probes.append(((new, *cache), [y]))
        if not close(y, y_full[:, PROMPT : PROMPT + n]):
            # the earlier probes equal the reference: a mistake that shows only for this many new tokens (a chunk
            # taking another path than one token) is matched on this probe alone
            matches = match(ex, probes[-1:], lambda a, b, _: [kv_step(ex, init, params, *a, bugs=b | base, wrong_dim=wd)[0]],
                            list(KV_BUGS), [], right)
            if matches:
                return found + report(ex, matches, right, f"with {PROMPT} cached and {n} new token(s), ")
            return found + [make("wrong_output", f"with {PROMPT} cached and {n} new token(s), y differs from the full "
                                                 f"forward pass (max |Δ| = {delta(y, y_full[:, PROMPT:PROMPT + n]):.3g})")]
    return found + ([] if base else evidence(verdict, own=True))


def trace_call(ex, kit) -> dict:
    """The call `grade` traces to point at a line: new tokens after a cache of PROMPT tokens. Batch, new tokens,
    heads and head size all differ, so that a layout is never ambiguous (a (B, T, d_out) projection lines up
    with (B, nh, T, hs) queries only when no two of those sizes are equal)."""
    init = ex.config
    d_in, d_out, nh, hs, context = sizes(ex, init)
    taken = {nh, hs, d_out}
    B = next(b for b in (3, 5, 6, 7, 1) if b not in taken)
    T = next((t for t in (5, 3, 6, 7, 2) if t not in taken | {B} and PROMPT + t <= context), 2)
    cache = {"k_cache": kit.randn(B, nh, PROMPT, hs, salt=851), "v_cache": kit.randn(B, nh, PROMPT, hs, salt=852)}
    return {"init": init, "params": kit.weights(init, salt=804), "args": [kit.randn(B, T, d_in, salt=850)],
            "kwargs": cache}
