"""Exercise 10 (tiled_attention): exact attention block by block, with an online softmax, in bounded memory.

tiled_attention(query, key, value, causal=False, block_size=64) -> output (B, H, L, d_v).
Small cases use lengths that are not multiples of the block size (a short last block), blocks
larger than the sequence and blocks of one token. In the long case the worker records the largest
tensor the submission creates: no more than a tile of scores may ever exist, not even a (block_size, S)
strip; its full score matrix (16 x 2048 x 2048 float32, twice over for softmax) does not fit beside torch
in the worker's memory limit (info.toml: limits.memory_mb) either. Every row of it is compared.
"""
import math

import torch

from grader.diagnosis.diagnoses import make
from grader.diagnosis.behaviour import (attempt, close, crash_or, evidence, failed, match, on_another_device, report,
                                        with_device)
from grader.diagnosis.variants import SCALE_BUGS
from grader.harness import Mismatch, compare, expect
from grader.sandbox import SubmissionError
from grader.suites import ON_DEVICE, check, needs

LONG = {"B": 2, "H": 8, "T": 2048, "d": 8, "block_size": 256}


def qkv(kit, c, *, L=None, S=None, salt=0, scale=1.0):
    L, S = L or c["L"], S or c["S"]
    return [kit.randn(c["B"], c["H"], L, c["d_k"], salt=salt) * scale, kit.randn(c["B"], c["H"], S, c["d_k"], salt=salt + 1) * scale,
            kit.randn(c["B"], c["H"], S, c["d_v"], salt=salt + 2)]


def cases(c):
    """(description, L, S, kwargs)."""
    L, b = c["L"], c["block_size"]
    return [
        (f"{L} tokens, block_size {b}", L, L, {"block_size": b}),
        (f"{L} tokens, block_size {b}, causal", L, L, {"block_size": b, "causal": True}),
        (f"{L - 6} queries, {L} keys, block_size {b + 1}", L - 6, L, {"block_size": b + 1}),
        (f"{L} tokens, block_size 64 (one block)", L, L, {"block_size": 64}),
        (f"{L} tokens, block_size 1, causal", L, L, {"block_size": 1, "causal": True}),
        (f"{L + 3} tokens, block_size {b} (no short block), causal", L + 3, L + 3, {"block_size": b, "causal": True}),
    ]


@check("shape")
def test_tiled_output_shapes(kit, ex):
    """output is (B, H, L, d_v) for L != S, short last blocks, one token, and the default block_size."""
    c = ex.config
    for L, S, kwargs in [(c["L"], c["S"], {}), (c["L"] - 6, c["S"], {"block_size": c["block_size"]}), (1, 1, {"block_size": 3})]:
        args = qkv(kit, c, L=L, S=S)
        (out,), _ = kit.run(None, args, kwargs, check_shapes=False)
        want = (c["B"], c["H"], L, c["d_v"])
        expect(tuple(out.shape) == want, f"output shape {tuple(out.shape)} for query {tuple(args[0].shape)} and value "
                                         f"{tuple(args[2].shape)} ({kwargs or 'default block_size'}); expected {want}",
               "shape_mismatch")


@check("numerics", evidence="wrong_output")
def test_tiled_matches_reference_float64(kit, ex):
    """Equal to softmax(QKᵀ/√d_k)V in float64 for every block size: a short last block, one block, blocks of one token, causal."""
    c = ex.config
    for i, (what, L, S, kwargs) in enumerate(cases(c)):
        args = qkv(kit, c, L=L, S=S, salt=10 * i)
        got, _ = kit.run(None, args, kwargs)
        want, _ = kit.ref_run(None, args, kwargs)
        compare(got[0], want[0], f"output ({what})")


@check("numerics", evidence={"non_finite": "online_softmax_overflow", "*": "wrong_output"})
def test_tiled_large_scores_do_not_overflow(kit, ex):
    """Scores in the hundreds (float32): exp never overflows, because every exponent is score - running max <= 0."""
    c = ex.config
    for what, L, S, kwargs in cases(c)[:2]:
        args = qkv(kit, c, L=L, S=S, salt=40, scale=12.0)
        got, _ = kit.run(None, [a.float() for a in args], kwargs, dtype=torch.float32)
        expect(bool(torch.isfinite(got[0]).all()), f"{what}: NaN or inf in the float32 output for scores of up to "
                                                   f"{(args[0] @ args[1].transpose(-2, -1)).abs().max().item() / math.sqrt(c['d_k']):.0f}: "
                                                   "is the running maximum subtracted before exp?", "non_finite")
        want, _ = kit.ref_run(None, args, kwargs)
        compare(got[0], want[0], f"float32 output for large scores ({what})", dtype=torch.float32)


@check("numerics")
def test_tiled_gradients_match_reference(kit, ex):
    """Backward through the blocks gives the reference's gradients for query, key and value (causal, short last block)."""
    c = ex.config
    args = qkv(kit, c, salt=50)
    kwargs = {"block_size": c["block_size"], "causal": True}
    gout = [kit.randn(c["B"], c["H"], c["L"], c["d_v"], salt=55)]
    _, got = kit.run(None, args, kwargs, grad_out=gout)
    _, want = kit.ref_run(None, args, kwargs, grad_out=gout)
    for i, name in enumerate(["query", "key", "value"]):
        expect(f"arg{i}" in got, f"no gradient reached {name}: is the output detached from it?", "no_gradient")
        compare(got[f"arg{i}"], want[f"arg{i}"], f"gradient of {name}")


def size_text(n_bytes: int) -> str:
    """256 MiB, 1 GiB, 1.5 GiB: in MiB below a GiB (never "0 GiB")."""
    if n_bytes >= 2**30:
        return f"{n_bytes / 2**30:.3g} GiB"
    return f"{n_bytes / 2**20:.3g} MiB"


def run_measured(kit, args, kwargs, tile):
    """Run the submission once and ask the worker for the largest tensor any op created meanwhile, and (tile =
    (block, d)) the first one wider than a block in one of its last two dims and than d in the other."""
    tensors = {f"arg{i}": a for i, a in enumerate(args)}
    reply, out = kit.request({"op": "run", "init": None, "args": list(tensors), "scalars": kwargs, "dtype": "float32",
                              "largest": list(tile), "flow": {"q": "arg0", "k": "arg1"}}, tensors)
    largest = reply.get("largest") if isinstance(reply.get("largest"), dict) else {}
    shape = largest.get("shape") if isinstance(largest.get("shape"), list) else []
    strip = largest.get("strip") if isinstance(largest.get("strip"), list) else []
    scores = largest.get("scores")
    expect(isinstance(scores, dict), "the worker did not follow the scores (no data flow in its reply)")
    wide = {k: scores.get(k) for k in ("shape", "keys", "queries")} if scores else None
    got = out.get("out.0")
    expect(wide or (isinstance(got, torch.Tensor) and type(got) is torch.Tensor), "output 0 is not a plain tensor")
    return got, tuple(n for n in shape if isinstance(n, int)), tuple(n for n in strip if isinstance(n, int)), wide


@check("numerics", evidence={"out_of_memory": "scores_materialised", "tensor_too_large": "scores_materialised",
                             "*": "wrong_output"})
def test_long_sequence_never_builds_the_score_matrix(kit, ex):
    """16 heads x 2048 tokens in float32: no tensor larger than a tile of scores is ever created (not even a
    (block_size, S) strip), and every row of the output is exact."""
    B, H, T, d, block = LONG["B"], LONG["H"], LONG["T"], LONG["d"], LONG["block_size"]
    q, k, v = (kit.randn(B, H, T, d, salt=60 + i).float() for i in range(3))
    try:
        out, largest, strip, wide = run_measured(kit, [q, k, v], {"block_size": block}, tile=(block, d))
    except SubmissionError as exc:
        if not exc.memory:
            raise
        raise Mismatch(f"out of memory for {B}×{H} heads of {T} tokens (block_size={block}): the full score matrix "
                       f"alone is {size_text(B * H * T * T * 4)} in float32, its softmax and any float64 copy more; only "
                       f"blocks of at most ({B}, {H}, {block}, {block}) scores may exist at once ({exc.message[:120]})",
                       "out_of_memory") from None
    bound = B * H * max(block * block, T * d)  # a tile of scores, or the output itself
    expect(math.prod(largest) <= 2 * bound,
           f"while it ran, your code created a tensor of shape {largest} for {T} tokens and block_size={block}: "
           f"a tiled implementation holds at most ({B}, {H}, {block}, {block}) scores at once, never a "
           f"(block_size, S) strip or the full matrix", "tensor_too_large")
    expect(not strip, f"while it ran, your code created a tensor of shape {strip} for {T} tokens and block_size={block}: "
                      f"scores for more than {block} keys (or queries) at once, a strip rather than a "
                      f"({block}, {block}) tile, even if it has no more elements than one", "tensor_too_large")
    if wide:
        shape = tuple(n for n in wide.get("shape") or [] if isinstance(n, int))
        keys = wide.get("keys") if isinstance(wide.get("keys"), int) else 0
        over = f"more than {block} keys" if keys > block else f"more than {block} queries"
        expect(False, f"while it ran, your code computed a tensor of shape {shape} from the queries and the keys that "
                      f"holds scores for {over} at once (block_size={block}): a tiled implementation scores one "
                      f"({block}, {block}) tile of queries and keys at a time, whatever shape a strip is given",
               "tensor_too_large")
    expect(tuple(out.shape) == (B, H, T, d), f"output shape {tuple(out.shape)}, expected {(B, H, T, d)}", "shape_mismatch")
    want = long_reference(kit.seed, q, k, v)
    for r0 in range(0, T, 256):  # every row, a strip at a time
        compare(out[:, :, r0 : r0 + 256], want[:, :, r0 : r0 + 256],
                f"output of queries {r0}..{min(r0 + 256, T) - 1} out of {T}", dtype=torch.float32)


_LONG_REFERENCE: dict[int, torch.Tensor] = {}


def long_reference(seed: int, q, k, v) -> torch.Tensor:
    """The long case's exact output, computed here (never in the worker) a strip of queries at a time, in float64.
    Its inputs depend only on the seed, so a process that grades many submissions computes it once."""
    if seed not in _LONG_REFERENCE:
        kd, strips = k.double().transpose(-2, -1), []
        for r0 in range(0, q.shape[-2], 256):
            strips.append(torch.softmax(q[:, :, r0 : r0 + 256].double() @ kd / math.sqrt(q.shape[-1]), dim=-1) @ v.double())
        _LONG_REFERENCE[seed] = torch.cat(strips, dim=-2)  # (B, H, T, d)
    return _LONG_REFERENCE[seed]


@check("masking", evidence="wrong_output")
def test_tiled_causal_future_does_not_leak(kit, ex):
    """causal=True: changing key/value j leaves the outputs of every earlier query unchanged, across block borders."""
    c = ex.config
    q, k, v = qkv(kit, c, salt=70)
    kwargs = {"block_size": c["block_size"], "causal": True}
    base, _ = kit.run(None, [q, k, v], kwargs)
    for j in range(c["L"] - 1, 0, -1):
        k2, v2 = k.clone(), v.clone()
        k2[:, :, j] = kit.randn(c["B"], c["H"], c["d_k"], salt=80 + j) * 3
        v2[:, :, j] = kit.randn(c["B"], c["H"], c["d_v"], salt=90 + j) * 3
        out, _ = kit.run(None, [q, k2, v2], kwargs)
        delta = (out[0][:, :, :j] - base[0][:, :, :j]).abs().amax(dim=(0, 1, 3))
        if delta.max() > 1e-9:
            i = int(delta.argmax())
            expect(False, f"changing key {j} changed the output of query {i} by {delta[i].item():.3g} "
                          f"(block_size {c['block_size']}): a query sees the future", "future_token_leak")


@check("device", evidence=ON_DEVICE)
def test_tiled_runs_on_another_device(kit, ex):
    """On a second device (cuda:0, emulated where no GPU is) nothing is created on the CPU inside the function
    (running statistics, masks, positions)."""
    c = ex.config
    (got,), _ = kit.run(None, qkv(kit, c), {"block_size": c["block_size"], "causal": True}, device="emulated")
    want = (c["B"], c["H"], c["L"], c["d_v"])
    expect(tuple(got.shape) == want, f"on the device the output shape is {tuple(got.shape)}, expected {want}", "shape_mismatch")


@check("device")
@needs("cuda")
def test_tiled_matches_reference_on_cuda(kit, ex):
    """On the GPU, float32 results (causal, short last block) match the reference."""
    c = ex.config
    args = qkv(kit, c, salt=95)
    kwargs = {"block_size": c["block_size"], "causal": True}
    want, _ = kit.ref_run(None, args, kwargs)
    got, _ = kit.run(None, [a.float() for a in args], kwargs, dtype=torch.float32, device="cuda")
    compare(got[0], want[0], "CUDA float32 output", dtype=torch.float32)


# -- mistakes ------------------------------------------------------------------------------------------------
TILED_BUGS = ("online_no_rescale", "online_sum_not_rescaled", "online_acc_not_rescaled", "online_block_average",
              "tiled_remainder_dropped", "tiled_query_remainder_dropped", "tiled_diagonal_unmasked", "tiled_diagonal_skipped",
              "tiled_mask_block_local", "mask_zero_fill", "mask_missing")
MISTAKES = {
    "online_no_rescale": "with the running sum and accumulator never rescaled by exp(m_old - m_new) when the maximum grows",
    "online_sum_not_rescaled": "with the running sum l not rescaled by exp(m_old - m_new) when the maximum grows",
    "online_acc_not_rescaled": "with the accumulator acc not rescaled by exp(m_old - m_new) when the maximum grows",
    "online_block_average": "with a separate softmax per key block, the blocks' outputs then averaged",
    "tiled_remainder_dropped": "with the last, shorter block of keys left out",
    "tiled_query_remainder_dropped": "with the last, shorter block of queries never computed (fewer output rows)",
    "tiled_diagonal_unmasked": "with the key blocks that cross the diagonal left unmasked",
    "tiled_diagonal_skipped": "with the key blocks that cross the diagonal skipped",
    "tiled_mask_block_local": "with the causal mask built from positions inside each block (triu of a block) instead "
                              "of the positions in the whole sequence",
}
ALIASES = {"online_sum_not_rescaled": "online_softmax_no_rescale", "online_acc_not_rescaled": "online_softmax_no_rescale",
                "tiled_query_remainder_dropped": "tiled_remainder_dropped", "online_no_rescale": "online_softmax_no_rescale", "online_block_average": "online_softmax_block_average",
                "tiled_diagonal_unmasked": "tiled_causal_diagonal", "tiled_diagonal_skipped": "tiled_causal_diagonal",
                "tiled_mask_block_local": "tiled_causal_diagonal"}
EXCLUSIVE = [{"online_no_rescale", "online_sum_not_rescaled", "online_acc_not_rescaled", "online_block_average"},
             {"tiled_diagonal_unmasked", "tiled_diagonal_skipped", "tiled_mask_block_local", "mask_zero_fill", "mask_missing"}]


def tiled_attend(q, k, v, causal=False, block_size=64, bugs=frozenset(), wrong_dim=None):
    """Exercise 10 computed block by block, as a learner would, with optional mistakes (NaN where a row has no key)."""
    B, H, L, d_k = q.shape
    S = k.size(-2)
    causal = causal and "mask_missing" not in bugs  # `causal` accepted and ignored
    if "no_scaling" in bugs:
        scale = 1.0
    elif "scale_not_sqrt" in bugs:
        scale = 1.0 / d_k
    elif "scale_wrong_dim" in bugs:
        scale = 1.0 / math.sqrt(wrong_dim)
    else:
        scale = 1.0 / math.sqrt(d_k)
    end = (S // block_size) * block_size if "tiled_remainder_dropped" in bugs else S
    rows = [q.new_zeros(B, H, 0, v.size(-1))]
    for i0 in range(0, (L // block_size) * block_size if "tiled_query_remainder_dropped" in bugs else L, block_size):
        qb = q[:, :, i0 : i0 + block_size] * scale
        bq = qb.size(-2)
        m = torch.full((B, H, bq, 1), float("-inf"), dtype=q.dtype)
        l = torch.zeros(B, H, bq, 1, dtype=q.dtype)
        acc = torch.zeros(B, H, bq, v.size(-1), dtype=q.dtype)
        parts = []
        for j0 in range(0, end, block_size):
            kb, vb = k[:, :, j0 : j0 + block_size], v[:, :, j0 : j0 + block_size]
            if causal and j0 > i0 + bq - 1 and "mask_zero_fill" not in bugs:
                break  # every key here is in the future of every query of the block
            crosses = causal and j0 + kb.size(-2) - 1 > i0
            if crosses and "tiled_diagonal_skipped" in bugs:
                continue
            s = qb @ kb.transpose(-2, -1)
            if causal and "tiled_mask_block_local" in bugs:  # every visited block masked as if it sat on the diagonal
                s = s.masked_fill(torch.ones(bq, kb.size(-2), dtype=torch.bool).triu(1), float("-inf"))
            elif causal and "mask_zero_fill" in bugs:  # the future kept, with score 0
                qi = torch.arange(i0, i0 + bq)[:, None]
                kj = torch.arange(j0, j0 + kb.size(-2))[None, :]
                s = s.masked_fill(kj > qi, 0.0)
            elif crosses and "tiled_diagonal_unmasked" not in bugs:
                qi = torch.arange(i0, i0 + bq)[:, None]
                kj = torch.arange(j0, j0 + kb.size(-2))[None, :]
                s = s.masked_fill(kj > qi, float("-inf"))
            if "online_block_average" in bugs:
                parts.append(torch.softmax(s, dim=-1) @ vb)
                continue
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
            p = torch.exp(s - m_new)
            corr = torch.exp(m - m_new)
            keep_l = "online_no_rescale" in bugs or "online_sum_not_rescaled" in bugs
            keep_acc = "online_no_rescale" in bugs or "online_acc_not_rescaled" in bugs
            l = (l if keep_l else l * corr) + p.sum(dim=-1, keepdim=True)
            acc = (acc if keep_acc else acc * corr) + p @ vb
            m = m_new
        if "online_block_average" in bugs:
            rows.append(torch.stack(parts).mean(0) if parts else torch.full_like(acc, float("nan")))
        else:
            rows.append(acc / l)
    return torch.cat(rows, dim=2)




# -- diagnosis ----------------------------------------------------------------------------------------------
def diagnose(ex, kit, verdict) -> list:
    """Three probes (the suite's first cases) against the block-by-block variants."""
    c = ex.config
    found = [make("api_mismatch", t.message) for t in failed(verdict, "signature_mismatch")]
    probes = []
    for i, (what, L, S, kwargs) in enumerate(cases(c)[:3]):
        args = qkv(kit, c, L=L, S=S, salt=100 + 10 * i)
        got, err = attempt(lambda: kit.run(None, args, kwargs)[0])
        if err is not None and err.code == "shape_mismatch":  # rows left out: the variants say which
            got, err = attempt(lambda: kit.run(None, args, kwargs, check_shapes=False)[0])
        if err is not None:
            if err.code == "dtype_changed":
                return found + [make("dtype_not_kept", err)]
            single, err32 = attempt(lambda: kit.run(None, [a.float() for a in args], kwargs, dtype=torch.float32)[0])
            if err32 is None and close(single[0].double(), tiled_attend(*args, **kwargs), (1e-4, 1e-5)):
                what += " in float64 (the same call in float32 gives the right output: a step is tied to float32)"
            return found + [crash_or(err, text=f"{what}: {err}")]
        probes.append(((args, kwargs), got))
    if all(close(got[0], tiled_attend(*a, **kw)) for (a, kw), got in probes):
        return found + evidence(verdict, own=True)
    matches = match(ex, probes, lambda a, b, wd: [tiled_attend(*a[0], **a[1], bugs=b, wrong_dim=wd)],
                     [*TILED_BUGS, *SCALE_BUGS], [c["d_v"]], c["d_k"])
    return found + with_device(report(ex, matches, c["d_k"]), on_another_device(verdict))


def trace_call(ex, kit) -> dict:
    """The call `grade` traces to point at a line: causal, with the config's block size (a short last block), so
    that the submission's tiles line up with the reference's and the first tile that differs is where it goes wrong."""
    c = ex.config
    return {"init": None, "params": {}, "args": qkv(kit, c, salt=850), "kwargs": {},
            "scalars": {"causal": True, "block_size": c["block_size"]}}
