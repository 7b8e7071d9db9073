"""Exercise 12 (cross_attention): forward(x, context, context_padding_mask=None) -> (B, T, d_out).

x and context have different lengths (T != S) and widths (d_in != d_context); the context of a
batch is padded on the right to a common length.
"""
import torch

from grader.suites import check, needs
from grader.suites.harness import compare, expect

T, S = 4, 7


def widths(ex, init):
    return ex.dim("input", init), ex.dim("context_width", init), ex.dim("output", init)


def padding(lengths, S_=S) -> torch.Tensor:
    return torch.arange(S_)[None, :] >= torch.tensor(lengths)[:, None]  # (B, S), True = padding


def inputs(kit, ex, init, *, B=3, T_=T, S_=S, salt=0):
    d_in, d_ctx, _ = widths(ex, init)
    return kit.randn(B, T_, d_in, salt=salt), kit.randn(B, S_, d_ctx, salt=salt + 1)


def run(kit, init, params, x, context, mask=None, **kw):
    args = [x, context] + ([mask] if mask is not None else [])
    return kit.run(init, args, params=params, check_shapes=False, **kw)


@check("shape")
@needs("cross")
def test_cross_output_shapes(kit, ex, init):
    """(B, T, d_out) for T < S, T > S, one query, one context token, batch 1."""
    params = kit.weights(init)
    d_out = ex.dim("output", init)
    for B, T_, S_ in [(3, T, S), (2, S + 2, 3), (1, 1, S), (2, T, 1)]:
        x, context = inputs(kit, ex, init, B=B, T_=T_, S_=S_)
        (out,), _ = run(kit, init, params, x, context)
        expect(tuple(out.shape) == (B, T_, d_out), f"x {tuple(x.shape)} and context {tuple(context.shape)} gave output "
                                                   f"{tuple(out.shape)}, expected {(B, T_, d_out)}")


@check("numerics")
@needs("cross")
def test_cross_matches_reference_float64(kit, ex, init):
    """Equal to the reference in float64, without and with a padding mask on the context (T != S, d_in != d_context)."""
    params = kit.weights(init)
    x, context = inputs(kit, ex, init, salt=3)
    for what, mask in (("no mask", None), ("context padded to lengths 7, 3, 1", padding([S, 3, 1]))):
        got, _ = run(kit, init, params, x, context, mask)
        want, _ = kit.ref_run(init, [x, context] + ([mask] if mask is not None else []), params=params)
        compare(got[0], want[0], f"output ({what})")


@check("numerics")
@needs("cross")
def test_cross_float32_and_gradients(kit, ex):
    """float32 matches; backward reaches x, context and every parameter with the reference's gradients."""
    init = ex.config
    params = kit.weights(init)
    x, context = inputs(kit, ex, init, salt=5)
    mask = padding([S, 4, 2])
    got, _ = run(kit, init, params, x.float(), context.float(), mask, dtype=torch.float32)
    want, _ = kit.ref_run(init, [x, context, mask], params=params)
    compare(got[0], want[0], "float32 output with a padding mask", dtype=torch.float32)
    gout = [kit.randn(3, T, ex.dim("output", init), salt=6)]
    _, got_g = run(kit, init, params, x, context, mask, grad_out=gout)
    _, want_g = kit.ref_run(init, [x, context, mask], params=params, grad_out=gout)
    names = {"arg0": "x", "arg1": "context"}
    for name, g in want_g.items():
        what = names.get(name, name.removeprefix("param."))
        expect(name in got_g, f"no gradient reached {what}: is the output detached from it?")
        compare(got_g[name], g, f"gradient of {what}", token_dim=None)


@check("masking")
@needs("cross")
def test_padded_context_is_ignored(kit, ex):
    """Changing the padded context tokens leaves every output unchanged; changing a real one changes the outputs."""
    init = ex.config
    params = kit.weights(init)
    x, context = inputs(kit, ex, init, salt=7)
    mask = padding([S, 3, 1])
    base, _ = run(kit, init, params, x, context, mask)
    noisy = context.clone()
    noisy[mask] = kit.randn(int(mask.sum()), context.size(-1), salt=8) * 5
    out, _ = run(kit, init, params, x, noisy, mask)
    delta = (out[0] - base[0]).abs().amax(dim=-1)  # (B, T)
    if delta.max() > 1e-9:
        b, i = (int(t) for t in torch.unravel_index(delta.argmax(), delta.shape))
        expect(False, f"changing the padding of context {b} (its tokens {int((~mask[b]).sum())}..{S - 1}) changed the "
                      f"output of query {i} by {delta[b, i].item():.3g}: padded context tokens must get weight 0")
    real = context.clone()
    real[1, 0] = real[1, 0] + 3
    out, _ = run(kit, init, params, x, real, mask)
    expect(bool((out[0][1] - base[0][1]).abs().max() > 1e-6),
           "changing a real context token (sequence 1, token 0) did not change the outputs: is the mask inverted?")


@check("masking")
@needs("cross")
def test_queries_are_independent(kit, ex):
    """Not causal, not self-attention: changing query token j changes output j only, and every query sees all real context."""
    init = ex.config
    params = kit.weights(init)
    x, context = inputs(kit, ex, init, salt=9)
    base, _ = run(kit, init, params, x, context)
    for j in range(T):
        x2 = x.clone()
        x2[:, j] = kit.randn(3, x.size(-1), salt=40 + j) * 3
        out, _ = run(kit, init, params, x2, context)
        delta = (out[0] - base[0]).abs().amax(dim=(0, 2))  # per query token
        others = [i for i in range(T) if i != j and delta[i] > 1e-9]
        if others:
            expect(False, f"changing query token {j} changed the output of token {others[0]} by {delta[others[0]].item():.3g}: "
                          "in cross-attention a query's output depends only on that query and the context")
    last = context.clone()
    last[:, -1] = last[:, -1] + 3
    out, _ = run(kit, init, params, x, last)
    expect(bool((out[0][:, 0] - base[0][:, 0]).abs().max() > 1e-6),
           f"changing the last context token did not change the output of query 0: is a causal mask applied? "
           "Cross-attention sees the whole source")


@check("device")
@needs("cross")
def test_cross_runs_on_meta_device(kit, ex):
    """The module runs on the meta device, with the mask there too."""
    init = ex.config
    x, context = inputs(kit, ex, init)
    shapes, _ = run(kit, init, kit.weights(init), x, context, padding([S, 3, 1]), device="meta")
    want = (3, T, ex.dim("output", init))
    expect(shapes[0] == want, f"on the meta device the output shape is {shapes[0]}, expected {want}")


@check("device")
@needs("cross", "cuda")
def test_cross_matches_reference_on_cuda(kit, ex):
    """On the GPU, float32 results with a padding mask match the reference."""
    init = ex.config
    params = kit.weights(init)
    x, context = inputs(kit, ex, init, salt=11)
    mask = padding([S, 3, 1])
    got, _ = run(kit, init, params, x.float(), context.float(), mask, dtype=torch.float32, device="cuda")
    want, _ = kit.ref_run(init, [x, context, mask], params=params)
    compare(got[0], want[0], "CUDA float32 output with a padding mask", dtype=torch.float32)
