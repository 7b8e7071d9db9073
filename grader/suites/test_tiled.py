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

from grader.sandbox import SubmissionError
from grader.suites import check, needs
from grader.suites.harness import Mismatch, compare, expect

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
@needs("tiled")
def test_tiled_output_shapes(kit, ex):
    """output is (B, H, L, d_v) for L != S, short last blocks, one token, and the default block_size."""
    c = ex.config
    for L, S, kwargs in [(c["L"], c["S"], {}), (c["L"] - 6, c["S"], {"block_size": c["block_size"]}), (1, 1, {"block_size": 3})]:
        args = qkv(kit, c, L=L, S=S)
        (out,), _ = kit.run(None, args, kwargs, check_shapes=False)
        want = (c["B"], c["H"], L, c["d_v"])
        expect(tuple(out.shape) == want, f"output shape {tuple(out.shape)} for query {tuple(args[0].shape)} and value "
                                         f"{tuple(args[2].shape)} ({kwargs or 'default block_size'}); expected {want}")


@check("numerics")
@needs("tiled")
def test_tiled_matches_reference_float64(kit, ex):
    """Equal to softmax(QKᵀ/√d_k)V in float64 for every block size: a short last block, one block, blocks of one token, causal."""
    c = ex.config
    for i, (what, L, S, kwargs) in enumerate(cases(c)):
        args = qkv(kit, c, L=L, S=S, salt=10 * i)
        got, _ = kit.run(None, args, kwargs)
        want, _ = kit.ref_run(None, args, kwargs)
        compare(got[0], want[0], f"output ({what})")


@check("numerics")
@needs("tiled")
def test_tiled_large_scores_do_not_overflow(kit, ex):
    """Scores in the hundreds (float32): exp never overflows, because every exponent is score - running max <= 0."""
    c = ex.config
    for what, L, S, kwargs in cases(c)[:2]:
        args = qkv(kit, c, L=L, S=S, salt=40, scale=12.0)
        got, _ = kit.run(None, [a.float() for a in args], kwargs, dtype=torch.float32)
        expect(bool(torch.isfinite(got[0]).all()), f"{what}: NaN or inf in the float32 output for scores of up to "
                                                   f"{(args[0] @ args[1].transpose(-2, -1)).abs().max().item() / math.sqrt(c['d_k']):.0f}: "
                                                   "is the running maximum subtracted before exp?")
        want, _ = kit.ref_run(None, args, kwargs)
        compare(got[0], want[0], f"float32 output for large scores ({what})", dtype=torch.float32)


@check("numerics")
@needs("tiled")
def test_tiled_gradients_match_reference(kit, ex):
    """Backward through the blocks gives the reference's gradients for query, key and value (causal, short last block)."""
    c = ex.config
    args = qkv(kit, c, salt=50)
    kwargs = {"block_size": c["block_size"], "causal": True}
    gout = [kit.randn(c["B"], c["H"], c["L"], c["d_v"], salt=55)]
    _, got = kit.run(None, args, kwargs, grad_out=gout)
    _, want = kit.ref_run(None, args, kwargs, grad_out=gout)
    for i, name in enumerate(["query", "key", "value"]):
        expect(f"arg{i}" in got, f"no gradient reached {name}: is the output detached from it?")
        compare(got[f"arg{i}"], want[f"arg{i}"], f"gradient of {name}")


def run_measured(kit, args, kwargs):
    """Run the submission once and ask the worker for the largest tensor any op created meanwhile."""
    tensors = {f"arg{i}": a for i, a in enumerate(args)}
    reply, out = kit.request({"op": "run", "init": None, "args": list(tensors), "scalars": kwargs, "dtype": "float32",
                              "largest": True}, tensors)
    got = out.get("out.0")
    expect(isinstance(got, torch.Tensor) and type(got) is torch.Tensor, "output 0 is not a plain tensor")
    largest = reply.get("largest") if isinstance(reply.get("largest"), dict) else {}
    shape = largest.get("shape") if isinstance(largest.get("shape"), list) else []
    return got, tuple(n for n in shape if isinstance(n, int))


@check("numerics")
@needs("tiled")
def test_long_sequence_never_builds_the_score_matrix(kit, ex):
    """16 heads x 2048 tokens in float32: no tensor larger than a tile of scores is ever created (not even a
    (block_size, S) strip), and every row of the output is exact."""
    B, H, T, d, block = LONG["B"], LONG["H"], LONG["T"], LONG["d"], LONG["block_size"]
    q, k, v = (kit.randn(B, H, T, d, salt=60 + i).float() for i in range(3))
    try:
        out, largest = run_measured(kit, [q, k, v], {"block_size": block})
    except SubmissionError as exc:
        if not exc.memory:
            raise
        gib = B * H * T * T * 4 / 2**30
        raise Mismatch(f"out of memory for {B}×{H} heads of {T} tokens (block_size={block}): the full score matrix "
                       f"would be {gib:.0f} GiB, more than the worker may use; only blocks of at most "
                       f"({B}, {H}, {block}, {block}) scores may exist at once ({exc.message[:120]})") from None
    bound = B * H * max(block * block, T * d)  # a tile of scores, or the output itself
    expect(math.prod(largest) <= 2 * bound,
           f"while it ran, your code created a tensor of shape {largest} for {T} tokens and block_size={block}: "
           f"a tiled implementation holds at most ({B}, {H}, {block}, {block}) scores at once, never a "
           f"(block_size, S) strip or the full matrix")
    expect(tuple(out.shape) == (B, H, T, d), f"output shape {tuple(out.shape)}, expected {(B, H, T, d)}")
    kd = k.double().transpose(-2, -1)
    for r0 in range(0, T, 256):  # every row, against a reference computed a strip at a time (here, not in the worker)
        want = torch.softmax(q[:, :, r0 : r0 + 256].double() @ kd / math.sqrt(d), dim=-1) @ v.double()
        compare(out[:, :, r0 : r0 + 256], want, f"output of queries {r0}..{min(r0 + 256, T) - 1} out of {T}",
                dtype=torch.float32)


@check("masking")
@needs("tiled")
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
                          f"(block_size {c['block_size']}): a query sees the future")


@check("device")
@needs("tiled")
def test_tiled_runs_on_meta_device(kit, ex):
    """On the meta device nothing is created on the CPU inside the function (running statistics, masks, positions)."""
    c = ex.config
    shapes, _ = kit.run(None, qkv(kit, c), {"block_size": c["block_size"], "causal": True}, device="meta")
    want = (c["B"], c["H"], c["L"], c["d_v"])
    expect(shapes[0] == want, f"on the meta device the output shape is {shapes[0]}, expected {want}")


@check("device")
@needs("tiled", "cuda")
def test_tiled_matches_reference_on_cuda(kit, ex):
    """On the GPU, float32 results (causal, short last block) match the reference."""
    c = ex.config
    args = qkv(kit, c, salt=95)
    kwargs = {"block_size": c["block_size"], "causal": True}
    want, _ = kit.ref_run(None, args, kwargs)
    got, _ = kit.run(None, [a.float() for a in args], kwargs, dtype=torch.float32, device="cuda")
    compare(got[0], want[0], "CUDA float32 output", dtype=torch.float32)
