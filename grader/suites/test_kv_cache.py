"""Exercise 8 (kv_cache): forward(x, k_cache=None, v_cache=None) -> (y, k_cache, v_cache).

The worker builds a fresh module for every request, so the suite drives the decoding loop
itself: each step sends the new token(s) and the cache the previous step returned, and checks
the step's output against the full causal forward pass over the whole sequence.
"""
import torch

from grader.suites import check, needs
from grader.suites.cases import init_cases
from grader.suites.harness import compare, expect

PROMPT = 3


def sizes(ex, init):
    nh = ex.dim("heads", init)
    return ex.dim("input", init), ex.dim("output", init), nh, ex.dim("output", init) // nh, ex.dim("context", init)


def step(kit, init, params, x, cache=(), **kw):
    """One request: (y, k, v) from the submission, shapes checked against the contract."""
    d_in, d_out, nh, hs, _ = sizes(kit.exercise, init)
    outs, grads = kit.run(init, [x, *cache], params=params, n_outputs=3, check_shapes=False, **kw)
    if kw.get("device") == "meta":
        return outs, grads
    y, k, v = outs
    B, T = x.shape[:2]
    P = cache[0].shape[2] if cache else 0
    expect(tuple(y.shape) == (B, T, d_out), f"y for {T} new token(s) has shape {tuple(y.shape)}, expected {(B, T, d_out)}")
    for name, c in (("k_cache", k), ("v_cache", v)):
        want = (B, nh, P + T, hs)
        expect(tuple(c.shape) == want, f"the returned {name} after {P} cached + {T} new token(s) has shape "
                                       f"{tuple(c.shape)}, expected (B, num_heads, P+T, head_dim) = {want}")
    return (y, k, v), grads


def reference(kit, init, params, x, cache=()):
    outs, _ = kit.ref_run(init, [x, *cache], params=params)
    return outs


@check("shape")
@needs("kv_cache")
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
@needs("kv_cache")
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
@needs("kv_cache")
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
@needs("kv_cache")
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
@needs("kv_cache")
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
        expect(name in got, f"no gradient reached {what}: is the output detached from it?")
        compare(got[name], g, f"gradient of {what} (cached step)", token_dim=None)


@check("masking")
@needs("kv_cache")
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
            expect(False, f"changing token {j} changed the output at token {i} by {delta[i].item():.3g}: a token can see the future")


@check("device")
@needs("kv_cache")
def test_cached_step_runs_on_meta_device(kit, ex):
    """A cached step runs on the meta device: the mask and anything built in forward follow the inputs."""
    init = ex.config
    d_in, d_out, nh, hs, _ = sizes(ex, init)
    cache = (kit.randn(2, nh, PROMPT, hs), kit.randn(2, nh, PROMPT, hs, salt=1))
    for T in (1, 2):
        shapes, _ = step(kit, init, kit.weights(init), kit.randn(2, T, d_in), cache, device="meta")
        want = [(2, T, d_out), (2, nh, PROMPT + T, hs), (2, nh, PROMPT + T, hs)]
        expect(shapes == want, f"on the meta device, {T} new token(s) after {PROMPT} cached gave shapes {shapes}, expected {want}")


@check("device")
@needs("kv_cache", "cuda")
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
