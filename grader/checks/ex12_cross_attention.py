"""Exercise 12 (cross_attention): forward(x, context, context_padding_mask=None) -> (B, T, d_out).

x and context have different lengths (T != S) and widths (d_in != d_context); the context of a
batch is padded on the right to a common length.
"""
import torch

from grader.diagnosis.diagnoses import make
from grader.diagnosis.behaviour import MASK, attempt, bias_only, close, crash_or, evidence, failed, match, raised_at, report
from grader.diagnosis.variants import PADDING_BUGS, SCALE_BUGS, attend, linear
from grader.harness import compare, expect, unravel
from grader.suites import ON_DEVICE, check, needs

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
def test_cross_matches_reference_float64(kit, ex, init):
    """Equal to the reference in float64, without and with a padding mask on the context (T != S, d_in != d_context)."""
    params = kit.weights(init)
    x, context = inputs(kit, ex, init, salt=3)
    for what, mask in (("no mask", None), ("context padded to lengths 7, 3, 1", padding([S, 3, 1]))):
        got, _ = run(kit, init, params, x, context, mask)
        want, _ = kit.ref_run(init, [x, context] + ([mask] if mask is not None else []), params=params)
        compare(got[0], want[0], f"output ({what})")


@check("numerics")
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
        expect(name in got_g, f"no gradient reached {what}: is the output detached from it?", "no_gradient")
        compare(got_g[name], g, f"gradient of {what}", token_dim=None)


@check("masking")
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
        b, i = unravel(int(delta.argmax()), delta.shape)
        expect(False, f"changing the padding of context {b} (its tokens {int((~mask[b]).sum())}..{S - 1}) changed the "
                      f"output of query {i} by {delta[b, i].item():.3g}: padded context tokens must get weight 0")
    real = context.clone()
    real[1, 0] = real[1, 0] + 3
    out, _ = run(kit, init, params, x, real, mask)
    expect(bool((out[0][1] - base[0][1]).abs().max() > 1e-6),
           "changing a real context token (sequence 1, token 0) did not change the outputs: is the mask inverted?")


@check("masking")
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


@check("device", evidence=ON_DEVICE)
def test_cross_runs_on_another_device(kit, ex):
    """The module runs on a second device (cuda:0, emulated where no GPU is), with the mask there too."""
    init = ex.config
    x, context = inputs(kit, ex, init)
    (got,), _ = run(kit, init, kit.weights(init), x, context, padding([S, 3, 1]), device="emulated")
    want = (3, T, ex.dim("output", init))
    expect(tuple(got.shape) == want, f"on the device the output shape is {tuple(got.shape)}, expected {want}", "shape_mismatch")


@check("device")
@needs("cuda")
def test_cross_matches_reference_on_cuda(kit, ex):
    """On the GPU, float32 results with a padding mask match the reference."""
    init = ex.config
    params = kit.weights(init)
    x, context = inputs(kit, ex, init, salt=11)
    mask = padding([S, 3, 1])
    got, _ = run(kit, init, params, x.float(), context.float(), mask, dtype=torch.float32, device="cuda")
    want, _ = kit.ref_run(init, [x, context, mask], params=params)
    compare(got[0], want[0], "CUDA float32 output with a padding mask", dtype=torch.float32)


# -- mistakes ------------------------------------------------------------------------------------------------
CROSS_BUGS = ("cross_kv_from_queries", "cross_k_from_queries", "cross_v_from_queries", "cross_causal_mask")
MISTAKES = {
    "cross_kv_from_queries": "with keys and values projected from x instead of from context (self-attention)",
    "cross_k_from_queries": "with the keys projected from x instead of from context",
    "cross_v_from_queries": "with the values projected from x instead of from context",
    "cross_causal_mask": "with a causal mask over (queries, context tokens)",
}
ALIASES = {"cross_k_from_queries": "cross_kv_from_queries", "cross_v_from_queries": "cross_kv_from_queries"}
EXCLUSIVE = [{"cross_kv_from_queries", "cross_k_from_queries", "cross_v_from_queries"}]


def cross_forward(ex, init: dict, params: dict, x, context, mask=None, bugs=frozenset(), wrong_dim=None):
    """Exercise 12's forward(x, context, context_padding_mask) as a function of its parameters, with optional mistakes."""
    roles = ex.roles
    nh = ex.dim("heads", init) or 1
    B, T, _ = x.shape
    k_src = x if bugs & {"cross_kv_from_queries", "cross_k_from_queries"} else context
    v_src = x if bugs & {"cross_kv_from_queries", "cross_v_from_queries"} else context
    d_out = params[f"{roles['q']}.weight"].shape[0]
    if k_src.size(1) != v_src.size(1) or \
            any(t.size(-1) != params[f"{roles[r]}.weight"].shape[1] for r, t in (("k", k_src), ("v", v_src))):
        return torch.full((B, T, d_out), float("nan"), dtype=x.dtype)
    q = linear(x, params, roles["q"])
    k, v = linear(k_src, params, roles["k"]), linear(v_src, params, roles["v"])
    S, hs = k.size(1), d_out // nh
    if "heads_split_view" in bugs:  # viewed straight as (B, nh, tokens, hs): heads and tokens mixed up
        q = q.reshape(B, nh, T, hs)
        k, v = (t.reshape(B, nh, S, hs) for t in (k, v))
    elif "heads_not_split" in bugs:  # one head of width d_out, scaled as the contract's heads are
        q, k, v = (t.unsqueeze(1) for t in (q, k, v))
    else:
        q = q.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
        k, v = (t.view(B, S, nh, hs).transpose(1, 2) for t in (k, v))  # (B, nh, S, hs)
    blocked = None
    if mask is not None and "padding_mask_ignored" not in bugs:
        if mask.size(-1) < S:
            return torch.full((B, T, d_out), float("nan"), dtype=x.dtype)
        mask = mask[..., :S]  # keys from x: a mask that still runs must have been cut to x's length
        m = ~mask if "padding_mask_inverted" in bugs else mask
        if "padding_mask_on_queries" in bugs:
            if T != S:
                return torch.full((B, T, d_out), float("nan"), dtype=x.dtype)
            blocked = m.view(B, 1, S, 1)
        elif "padding_mask_broadcast" in bugs:
            if B != nh:
                return torch.full((B, T, d_out), float("nan"), dtype=x.dtype)
            blocked = m.view(1, B, 1, S)
        else:
            blocked = m.view(B, 1, 1, S)
    if "cross_causal_mask" in bugs:
        future = torch.ones(T, S, dtype=torch.bool).triu(1)
        blocked = future if blocked is None else blocked | future
    core = bugs & {*SCALE_BUGS, "softmax_wrong_dim", "mask_zero_fill", "mask_after_softmax"}
    y, _ = attend(q, k, v, blocked=blocked, bugs=core, scale_dim=hs, wrong_dim=wrong_dim)  # (B, nh, T, hs)
    y = y.reshape(B, T, d_out) if "heads_merge_wrong" in bugs or "heads_not_split" in bugs else y.transpose(1, 2).reshape(B, T, d_out)
    return y if "out_proj_missing" in bugs else linear(y, params, roles["o"])


def cross_bugs(ex, init: dict) -> list[str]:
    bugs = [*CROSS_BUGS, *PADDING_BUGS, *SCALE_BUGS, "softmax_wrong_dim", "mask_zero_fill", "mask_after_softmax",
            "out_proj_missing"]
    if (ex.dim("heads", init) or 1) > 1:
        bugs += ["heads_split_view", "heads_not_split", "heads_merge_wrong"]
    return bugs


def runs_at_base(ex, kit, init, bugs, wrong_dim) -> bool:
    """Whether the variant with these mistakes gives a finite output for the base probe's sizes, with a mask."""
    x, context = inputs(kit, ex, init, B=3, T_=4, salt=120)
    out = cross_forward(ex, init, kit.weights(init), x, context, padding([7, 3, 1]), bugs=bugs, wrong_dim=wrong_dim)
    return bool(torch.isfinite(out).all())


# -- diagnosis ----------------------------------------------------------------------------------------------
def diagnose(ex, kit, verdict) -> list:
    """Probes with and without a padding mask; shapes that only line up by accident are tried when the base case fails."""
    found = [make("api_mismatch", t.message) for t in failed(verdict, "signature_mismatch")]
    found += [make("heads_not_divisible", t.message) for t in failed(verdict, "construct_should_raise")]
    params_failed = failed(verdict, "parameter_names", "parameter_shapes")
    if params_failed:
        only_bias = bias_only(ex, kit) and not any(t.code == "parameter_shapes" for t in params_failed)
        found += [make("qkv_bias_ignored" if only_bias else "api_mismatch", t.message) for t in params_failed]
        if not only_bias:
            return found

    def probes_for(init, B=3, T=4):
        params = kit.weights(init)
        x, context = inputs(kit, ex, init, B=B, T_=T, salt=120)
        out = []
        for mask in (None, padding([7, 3, 1][:B])):
            got, err = attempt(lambda: run(kit, init, params, x, context, mask)[0])
            if err is not None:
                err.masked = mask is not None and bool(out)  # only the call with a padding mask raised
                return None, err
            out.append(((x, context, mask), got))
        return (params, out), None

    init = ex.config
    right = ex.dim("output", init) // (ex.dim("heads", init) or 1)
    wrong = sorted({ex.dim("input", init), ex.dim("context_width", init), ex.dim("output", init)} - {right})
    result, err = probes_for(init)
    if err is not None:
        # shapes that only line up by accident: d_context = d_in (keys from x), T = S (mask on the queries),
        # B = heads (a (B, 1, S) mask lined up with the heads)
        same = {**init, ex.dims["context_width"]: ex.dim("input", init)}
        heads = ex.dim("heads", init) or 1
        shown = []
        for alt, kw, what in [(same, {}, "d_context = d_in"), (init, {"T": 7}, "as many queries as context tokens"),
                              (same, {"T": 7}, "d_context = d_in and as many queries as context tokens"),
                              (init, {"B": heads}, f"a batch of {heads} (= heads)")]:
            result2, err2 = probes_for(alt, **kw)
            if err2 is None:
                params, probes = result2
                matches = match(ex, probes, lambda a, b, wd: [cross_forward(ex, alt, params, *a, bugs=b, wrong_dim=wd)],
                                 cross_bugs(ex, alt), wrong, right)
                raising = [m for m in matches if not runs_at_base(ex, kit, init, *m)]
                if raising:  # a mistake that confuses these sizes: its variant cannot run at the base sizes either
                    return found + report(ex, raising, right, f"it fails for the base case ({err}); with {what} ")
                shown = shown or report(ex, matches, right, f"where it runs, with {what}, ")
        if err.code == "view_noncontiguous":
            return found + [make("view_noncontiguous", err)] + shown
        if getattr(err, "masked", False):  # raised in the padding mask's handling: after a mistake seen earlier (a scale)
            return found + raised_at(MASK, [crash_or(err)], shown, wider=False)
        return found + [crash_or(err)] + shown  # the exception first: the mistakes seen where it runs do not raise
    params, probes = result
    if all(close(got[0], cross_forward(ex, init, params, *a)) for a, got in probes):
        return found + evidence(verdict, own=True)
    matches = match(ex, probes, lambda a, b, wd: [cross_forward(ex, init, params, *a, bugs=b, wrong_dim=wd)],
                     cross_bugs(ex, init), wrong, right)
    if not matches and not torch.isfinite(probes[0][1][0]).any():
        # no mask given and every output NaN: the default stands for "block every key"; the masked calls say how
        matches = match(ex, probes[1:], lambda a, b, wd: [cross_forward(ex, init, params, *a, bugs=b, wrong_dim=wd)],
                        cross_bugs(ex, init), wrong, right)
        return found + report(ex, matches, right, "without a mask every output is NaN (every key blocked); with one, ")
    return found + report(ex, matches, right)


def trace_call(ex, kit) -> dict:
    """The call `grade` traces to point at a line: three sequences, the context padded in two."""
    init = ex.config
    x, context = inputs(kit, ex, init, salt=850)
    return {"init": init, "params": kit.weights(init, salt=804), "args": [x, context],
            "kwargs": {"context_padding_mask": padding([S, 3, 1])}}
