"""Exercise 7 (padding_mask): a key-padding mask plus an optional causal mask, no NaN, float16 and bfloat16.

padded_attention(query, key, value, key_padding_mask=None, causal=False) -> output (B, H, L, d_v).
Inputs are (B, H, L, d) with d_k != d_v; the batch mixes a full sequence, a padded one and a
one-token one, padded on the right or (as for generation) on the left, so that a causal mask
leaves some queries with no key at all.
"""
import torch

from grader.diagnosis.diagnoses import make
from grader.diagnosis.behaviour import MASK, attempt, close, crash_or, evidence, failed, match, raised_at, report
from grader.diagnosis.variants import PADDING_BUGS, SCALE_BUGS, attend
from grader.harness import compare, expect, unravel
from grader.numerics import dtype_name
from grader.suites import ON_DEVICE, check, needs


def qkv(kit, c, *, L=None, S=None, B=None, salt=0, scale=1.0):
    B, L, S = B or c["B"], L or c["L"], S or c["S"]
    return [kit.randn(B, c["H"], L, c["d_k"], salt=salt) * scale, kit.randn(B, c["H"], S, c["d_k"], salt=salt + 1) * scale,
            kit.randn(B, c["H"], S, c["d_v"], salt=salt + 2)]


def padding(lengths, S, *, left=False) -> torch.Tensor:
    """(B, S) bool, True = padding: sequence b has lengths[b] real tokens, padded on the right (or left)."""
    pos = torch.arange(S)
    lengths = torch.tensor(lengths)[:, None]
    return pos >= lengths if not left else pos < S - lengths


def empty_rows(mask: torch.Tensor, causal: bool, L: int) -> torch.Tensor:
    """(B, L) bool: queries with no key left to attend to."""
    S = mask.size(-1)
    blocked = mask[:, None, :] | (torch.ones(L, S, dtype=torch.bool).triu(1) if causal else torch.zeros(L, S, dtype=torch.bool))
    return blocked.all(-1)


def cases(c):
    """(description, kwargs, L, S): the situations the contract names."""
    L = S = c["L"]
    return [
        ("no mask", {}, L, S),
        ("causal, no padding", {"causal": True}, L, S),
        ("right padding", {"key_padding_mask": padding([S, 4, 1], S)}, L, S),
        ("left padding + causal", {"key_padding_mask": padding([S, 4, 1], S, left=True), "causal": True}, L, S),
        ("right padding + causal", {"key_padding_mask": padding([S, 3, 2], S), "causal": True}, L, S),
        (f"{L - 2} queries, {S + 2} keys, right padding", {"key_padding_mask": padding([S + 2, 5, 2], S + 2)}, L - 2, S + 2),
    ]


@check("shape", evidence={"dtype_changed": "dtype_not_kept"})
def test_padded_output_shapes(kit, ex):
    """output is (B, H, L, d_v) with d_k != d_v, L != S without a causal mask, batch 1, one token."""
    c = ex.config
    for B, L, S, kwargs in [(3, 6, 6, {}), (1, 1, 1, {}), (2, 4, 7, {"key_padding_mask": padding([7, 3], 7)}),
                            (3, 6, 6, {"key_padding_mask": padding([6, 4, 1], 6, left=True), "causal": True})]:
        args = qkv(kit, c, B=B, L=L, S=S)
        (out,), _ = kit.run(None, args, kwargs, check_shapes=False)
        want = (B, c["H"], L, c["d_v"])
        expect(tuple(out.shape) == want, f"output shape {tuple(out.shape)} for query {tuple(args[0].shape)}, "
                                         f"value {tuple(args[2].shape)}; expected {want}", "shape_mismatch")


@check("numerics", evidence={"dtype_changed": "dtype_not_kept"})
def test_padded_matches_reference_float64(kit, ex):
    """Outputs equal the reference in float64: no mask, causal, right and left padding, with and without causal."""
    c = ex.config
    for i, (what, kwargs, L, S) in enumerate(cases(c)):
        args = qkv(kit, c, L=L, S=S, salt=10 * i)
        got, _ = kit.run(None, args, kwargs)
        want, _ = kit.ref_run(None, args, kwargs)
        expect(not torch.isnan(got[0]).any(), f"{what}: the output contains NaN", "non_finite")
        compare(got[0], want[0], f"output ({what})")


@check("masking")
def test_padded_keys_get_zero_weight(kit, ex):
    """Read through one-hot values: padded (and future) keys get weight exactly 0, the other weights sum to 1."""
    c = ex.config
    S = c["S"]
    eye = torch.eye(S, dtype=torch.float64).expand(c["B"], c["H"], S, S).clone()  # value = identity: output = weights
    for what, kwargs, L, _ in cases(c)[2:5]:
        q, k, _ = qkv(kit, c, salt=3)
        (w,), _ = kit.run(None, [q, k, eye], kwargs, check_shapes=False)
        mask = kwargs["key_padding_mask"]
        blocked = mask[:, None, None, :] | (torch.ones(L, S, dtype=torch.bool).triu(1) if kwargs.get("causal") else False)
        leak = w.masked_fill(~blocked, 0).abs()
        if leak.max() > 1e-12:
            b, h, i, j = unravel(int(leak.argmax()), leak.shape)
            kind = "a padding key" if mask[b, j] else "a future key"
            expect(False, f"{what}: in sequence {b}, query {i} puts weight {w[b, h, i, j].item():.3g} on key {j}, {kind}",
                   "future_weight")
        sums = w.sum(-1)
        want = (~empty_rows(mask, bool(kwargs.get("causal")), L))[:, None, :].double().expand_as(sums)
        compare(sums, want, f"{what}: sum of each query's weights (1, or 0 for a query with no key)", token_dim=-1)


@check("masking")
def test_queries_with_no_key_give_zeros(kit, ex):
    """A query whose every key is blocked (left padding + causal, or an all-padding sequence) outputs 0, not NaN."""
    c = ex.config
    S = c["S"]
    for what, kwargs in [("left padding + causal", {"key_padding_mask": padding([S, 4, 1], S, left=True), "causal": True}),
                         ("a sequence of padding only", {"key_padding_mask": padding([S, 0, 2], S)})]:
        args = qkv(kit, c, salt=20)
        (out,), _ = kit.run(None, args, kwargs)
        empty = empty_rows(kwargs["key_padding_mask"], bool(kwargs.get("causal")), c["L"])  # (B, L)
        rows = out.permute(0, 2, 1, 3)[empty]  # (rows, H, d_v)
        b, i = (int(t) for t in empty.nonzero()[0])
        expect(not torch.isnan(rows).any(), f"{what}: query {i} of sequence {b} has no key to attend to and its output "
                                            "is NaN: softmax over a row of -inf is 0/0", "non_finite")
        expect(bool((rows == 0).all()), f"{what}: query {i} of sequence {b} has no key to attend to; its output must be 0, "
                                        f"got {out[b, 0, i].tolist()} (an average of values that are padding?)", "value_mismatch")


@check("numerics", evidence={"dtype_changed": "dtype_not_kept", "dtype_overflow": "fp16_fill_overflow",
                             "non_finite": "fp16_fill_overflow", "*": "wrong_output"})
def test_half_precision_float16_and_bfloat16(kit, ex):
    """float16 and bfloat16 inputs give a result of the same dtype that matches the reference: no fill-value overflow, no NaN."""
    c = ex.config
    S = c["S"]
    kwargs = {"key_padding_mask": padding([S, 4, 1], S, left=True), "causal": True}
    args = qkv(kit, c, salt=30)
    want, _ = kit.ref_run(None, args, kwargs)
    for dtype in (torch.float16, torch.bfloat16):
        name = dtype_name(dtype)
        got, _ = kit.run(None, [a.to(dtype) for a in args], kwargs, dtype=dtype)
        expect(not torch.isnan(got[0]).any(), f"{name}: the output contains NaN (a fill value that overflows to -inf?)",
               "non_finite")
        compare(got[0], want[0], f"{name} output (left padding + causal)", dtype=dtype)


@check("numerics", evidence={"non_finite": "masked_rows_nan_grad", "*": "wrong_output"})
def test_padded_gradients_are_finite_and_match(kit, ex):
    """Gradients of query, key and value match the reference and stay finite, with queries that have no key."""
    c = ex.config
    S = c["S"]
    kwargs = {"key_padding_mask": padding([S, 4, 1], S, left=True), "causal": True}
    args = qkv(kit, c, salt=40)
    gout = [kit.randn(c["B"], c["H"], c["L"], c["d_v"], salt=45)]
    _, got = kit.run(None, args, kwargs, grad_out=gout)
    _, want = kit.ref_run(None, args, kwargs, grad_out=gout)
    for i, name in enumerate(["query", "key", "value"]):
        expect(f"arg{i}" in got, f"no gradient reached {name}: is the output detached from it?", "no_gradient")
        g = got[f"arg{i}"]
        expect(not torch.isnan(g).any(), f"the gradient of {name} contains NaN: a NaN hidden in the forward pass "
                                         "(softmax of a row of -inf, then torch.where or indexing) still flows backward",
               "non_finite")
        compare(g, want[f"arg{i}"], f"gradient of {name}")


@check("masking")
def test_no_nan_with_large_scores(kit, ex):
    """Large scores in float32 with padding and a causal mask give finite results that match the reference."""
    c = ex.config
    S = c["S"]
    kwargs = {"key_padding_mask": padding([S, 3, 2], S), "causal": True}
    args = qkv(kit, c, salt=50, scale=30.0)
    got, _ = kit.run(None, [a.float() for a in args], kwargs, dtype=torch.float32)
    expect(bool(torch.isfinite(got[0]).all()), "NaN or inf in the output for large scores", "non_finite")
    want, _ = kit.ref_run(None, args, kwargs)
    compare(got[0], want[0], "float32 output for large scores", dtype=torch.float32)


@check("device", evidence=ON_DEVICE)
def test_padded_runs_on_another_device(kit, ex):
    """On a second device (cuda:0, emulated where no GPU is; the mask there too), nothing is created on the CPU
    inside the function."""
    c = ex.config
    S = c["S"]
    kwargs = {"key_padding_mask": padding([S, 4, 1], S, left=True), "causal": True}
    (got,), _ = kit.run(None, qkv(kit, c), kwargs, device="emulated")
    want = (c["B"], c["H"], c["L"], c["d_v"])
    expect(tuple(got.shape) == want, f"on the device the output shape is {tuple(got.shape)}, expected {want}", "shape_mismatch")


@check("device")
@needs("cuda")
def test_padded_matches_reference_on_cuda(kit, ex):
    """On the GPU, float32 and float16 results (left padding + causal) match the reference within dtype tolerances."""
    c = ex.config
    S = c["S"]
    kwargs = {"key_padding_mask": padding([S, 4, 1], S, left=True), "causal": True}
    args = qkv(kit, c, salt=60)
    want, _ = kit.ref_run(None, args, kwargs)
    for dtype in (torch.float32, torch.float16):
        got, _ = kit.run(None, [a.to(dtype) for a in args], kwargs, dtype=dtype, device="cuda")
        compare(got[0], want[0], f"CUDA {str(dtype)[6:]} output", dtype=dtype)


# -- mistakes ------------------------------------------------------------------------------------------------
ROW_BUGS = ("masked_rows_not_zero", "masked_rows_unmasked", "masked_rows_nan")
MISTAKES = {
    "causal_ignored": "with causal=True ignored (no causal mask)",
    "mask_combine_wrong": "with the causal and padding masks combined by & (blocked only where both block)",
    "mask_combine_and_empty": "with the masks combined by &, a missing one counting as all False (so one mask alone blocks nothing)",
    "mask_diagonal": "with the causal mask blocking the diagonal too (triu without diagonal=1)",
    "padding_dropped_with_causal": "with the key-padding mask dropped whenever the causal mask is applied too (the second "
                                   "masked_fill starts again from the unmasked scores)",
    "causal_dropped_with_padding": "with the causal mask dropped whenever a key-padding mask is given too",
    "masked_rows_not_zero": "with queries that have no key giving the average of all values instead of 0",
    "masked_rows_unmasked": "with queries that have no key attending over every key, as if unmasked (one constant "
                            "subtracted from all their scores leaves their softmax as it was), instead of giving 0",
    "masked_rows_nan": "with queries that have no key giving NaN",
}
ALIASES = {"masked_rows_unmasked": "masked_rows_not_zero", "causal_ignored": "mask_missing", "mask_combine_and_empty": "mask_combine_wrong",
           "padding_dropped_with_causal": "padding_mask_ignored", "causal_dropped_with_padding": "mask_missing"}
EXCLUSIVE = [{*ROW_BUGS, "mask_zero_fill", "mask_after_softmax"},
             {"mask_combine_wrong", "mask_combine_and_empty", "padding_dropped_with_causal", "causal_dropped_with_padding"},
             {"causal_ignored", "mask_diagonal"}]


def padded_attend(q, k, v, key_padding_mask=None, causal=False, bugs=frozenset(), wrong_dim=None):
    """Exercise 7's reference (B, H, L, d) with optional mistakes; NaN where a mistake cannot run for these shapes."""
    B, H, L, _ = q.shape
    S = k.size(-2)
    nan = torch.full((*q.shape[:-1], v.size(-1)), float("nan"), dtype=q.dtype)
    future = torch.ones(L, S, dtype=torch.bool).triu(0 if "mask_diagonal" in bugs else 1) \
        if causal and "causal_ignored" not in bugs else None
    pad = None
    if key_padding_mask is not None and "padding_mask_ignored" not in bugs:
        m = ~key_padding_mask if "padding_mask_inverted" in bugs else key_padding_mask
        if "padding_mask_on_queries" in bugs:
            if L != S:
                return nan
            pad = m.view(B, 1, S, 1)
        elif "padding_mask_broadcast" in bugs:
            if B != H:
                return nan
            pad = m.view(1, B, 1, S)
        else:
            pad = m.view(B, 1, 1, S)
    if future is not None and pad is not None and "padding_dropped_with_causal" in bugs:
        pad = None
    if future is not None and pad is not None and "causal_dropped_with_padding" in bugs:
        future = None
    if "mask_combine_and_empty" in bugs:  # & with an all-False stand-in for the missing mask
        future = torch.zeros(L, S, dtype=torch.bool) if future is None else future
        pad = torch.zeros(B, 1, 1, S, dtype=torch.bool) if pad is None else pad
    if future is not None and pad is not None:
        blocked = (future & pad) if bugs & {"mask_combine_wrong", "mask_combine_and_empty"} else (future | pad)
    else:
        blocked = future if future is not None else pad
    core = bugs & {*SCALE_BUGS, "softmax_wrong_dim", "mask_zero_fill", "mask_after_softmax"}
    out, _ = attend(q, k, v, blocked=blocked, bugs=core, wrong_dim=wrong_dim)
    if blocked is not None and not core & {"mask_zero_fill", "mask_after_softmax"}:
        empty = blocked.expand(B, H, L, S).all(-1, keepdim=True)  # queries with no key: NaN from attend
        if "masked_rows_nan" in bugs:
            fill = torch.tensor(float("nan"), dtype=q.dtype)
        elif "masked_rows_not_zero" in bugs:
            fill = v.mean(-2, keepdim=True)
        elif "masked_rows_unmasked" in bugs:
            fill, _ = attend(q, k, v, bugs=core, wrong_dim=wrong_dim)
        else:
            fill = torch.zeros((), dtype=q.dtype)
        out = torch.where(empty, fill, out)
    return out


def padding_bugs(with_nan: bool) -> list[str]:
    rows = ["masked_rows_nan"] if with_nan else ["masked_rows_not_zero", "masked_rows_unmasked"]
    return [*PADDING_BUGS, "causal_ignored", "mask_combine_wrong", "mask_combine_and_empty", "padding_dropped_with_causal",
            "causal_dropped_with_padding", "mask_diagonal", *rows, *SCALE_BUGS, "softmax_wrong_dim",
            "mask_zero_fill", "mask_after_softmax"]




# -- diagnosis ----------------------------------------------------------------------------------------------
def diagnose(ex, kit, verdict) -> list:
    """Probes with left padding + causal and right padding; the variants know the padding and row mistakes."""
    c = ex.config
    found = [make("api_mismatch", t.message) for t in failed(verdict, "signature_mismatch")]
    S = c["S"]
    settings = [{"key_padding_mask": padding([S, 4, 1], S, left=True), "causal": True},
                {"key_padding_mask": padding([S, 3, 0], S)}]

    def probes_for(B):
        out = []
        for i, kwargs in enumerate(settings):
            args = qkv(kit, c, B=B, salt=90 + 3 * i)
            if B != c["B"]:
                kwargs = {**kwargs, "key_padding_mask": kwargs["key_padding_mask"][:B]}
            got, err = attempt(lambda: kit.run(None, args, kwargs)[0])
            if err is not None:
                return None, err
            out.append(((args, kwargs), got))
        return out, None

    probes, err = probes_for(c["B"])
    if err is not None:
        if err.code == "dtype_changed":
            return found + [make("dtype_not_kept", err)]
        if err.code == "dtype_overflow":
            return found + [make("fp16_fill_overflow", err)]
        if c["H"] > 1 and err.code == "size_mismatch":  # a (B, 1, S) mask lines up with the heads: try B == H
            probes, err2 = probes_for(c["H"])
            if err2 is None:
                with_nan = any(bool(torch.isnan(got[0]).any()) for _, got in probes)
                matches = match(ex, probes, lambda a, b, wd: [padded_attend(*a[0], **a[1], bugs=b, wrong_dim=wd)],
                                 padding_bugs(with_nan), [c["d_v"]], c["d_k"])
                if matches:
                    return found + report(ex, matches, c["d_k"], f"it fails for {c['B']} sequences of {c['H']} heads ({err}); "
                                                              f"with {c['H']} sequences ")
        return found + [crash_or(err)]
    if all(close(got[0], padded_attend(*a, **kw)) for (a, kw), got in probes):
        return found + evidence(verdict, own=True)
    with_nan = any(bool(torch.isnan(got[0]).any()) for _, got in probes)
    matches = match(ex, probes, lambda a, b, wd: [padded_attend(*a[0], **a[1], bugs=b, wrong_dim=wd)],
                     padding_bugs(with_nan), [c["d_v"]], c["d_k"])
    # a fill that overflows float16 is a second mistake of its own (it only shows in half precision), at the mask step:
    # after a mask built wrongly (seen in every dtype), before what the softmax leaves to rows with no key
    overflow = [make("fp16_fill_overflow", t.message) for t in failed(verdict, "dtype_overflow")][:1]
    if not matches:  # a mistake the variants lack as well (a causal mask aligned another way): is the mask read as keep?
        return found + inverted_padding(kit, c) + overflow
    return found + raised_at(MASK, overflow, report(ex, matches, c["d_k"]), wider=True)


def inverted_padding(kit, c) -> list:
    """padding_mask_inverted when, given the inverted mask (True = real token), the output equals the reference's for the
    mask itself: right padding, no causal mask, every query with a key."""
    S = c["S"]
    kwargs = {"key_padding_mask": padding([S if b == 0 else max(S - 2 - b, 1) for b in range(c["B"])], S)}
    args = qkv(kit, c, salt=96)
    got, err = attempt(lambda: kit.run(None, args, {"key_padding_mask": ~kwargs["key_padding_mask"]})[0])
    if err is not None or not close(got[0], padded_attend(*args, **kwargs)):
        return []
    return [make("padding_mask_inverted", "given the inverted mask (True = real token) your output equals the reference's "
                                          "for the mask itself (right padding, no causal mask): True is read as keep")]


def trace_call(ex, kit) -> list[dict]:
    """The calls `grade` traces to point at a line: right padding, and the causal mask when L = S; then, if that one
    shows no difference, left padding with the causal mask, which leaves some queries no key at all; then the first
    in float16 (only a raise is read from it)."""
    c = ex.config
    q, k, v = qkv(kit, c, salt=850)
    lengths = [max(1, c["S"] - 2 * i) for i in range(c["B"])]
    calls = [{"init": None, "params": {}, "args": [q, k, v], "kwargs": {"key_padding_mask": padding(lengths, c["S"])},
              "scalars": {"causal": c["L"] == c["S"]}}]
    if c["L"] == c["S"]:
        calls.append({**calls[0], "kwargs": {"key_padding_mask": padding(lengths, c["S"], left=True)},
                      "scalars": {"causal": True}})
    calls.append({**calls[0], "args": [t.half() for t in (q, k, v)], "dtype": "float16"})  # a fill float16 cannot hold
    return calls
