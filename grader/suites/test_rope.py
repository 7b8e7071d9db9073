"""Exercise 11 (rope): apply_rope(x, positions, base=10000.0) -> x rotated pair by pair (half-split pairs).

Positions are given explicitly: from 0, offset by thousands (as when decoding after a long
prompt, where float32 angles lose digits), or in any order. The relative-position property is
checked on the submission's own outputs: q . k must not change when both positions shift.
"""
import torch

from grader.suites import check, needs
from grader.suites.harness import compare, expect


def positions(kind: str, T: int) -> torch.Tensor:
    if kind == "offset":
        return torch.arange(T) + 3000
    if kind == "shuffled":
        return torch.tensor([5, 0, 3, 3, 9, 2, 7, 1, 4, 8][:T])
    return torch.arange(T)


def cases(c):
    """(description, x shape, positions, kwargs)."""
    B, H, T, d = c["B"], c["H"], c["T"], c["d"]
    return [
        ("positions 0..T-1, default base", (B, H, T, d), positions("arange", T), {}),
        ("positions 3000..3000+T-1, base 10000", (B, H, T, d), positions("offset", T), {"base": 10000.0}),
        ("shuffled positions, base 500", (B, H, T, d), positions("shuffled", T), {"base": 500.0}),
        ("d = 6, positions 0..T-1, base 100", (T, 6), positions("arange", T), {"base": 100.0}),
    ]


@check("shape")
@needs("rope")
def test_rope_output_shapes(kit, ex):
    """The output has x's shape: (T, d), (B, H, T, d), one token."""
    c = ex.config
    for shape in [(c["T"], c["d"]), (c["B"], c["H"], c["T"], c["d"]), (1, 1, 1, c["d"]), (2, c["T"], 4)]:
        (out,), _ = kit.run(None, [kit.randn(*shape), positions("arange", shape[-2])], check_shapes=False)
        expect(tuple(out.shape) == shape, f"input {shape} gave output {tuple(out.shape)}")


@check("numerics")
@needs("rope")
def test_rope_matches_reference_float64(kit, ex):
    """Equal to the reference in float64: default base, positions offset by 3000, shuffled positions, other bases, d = 6."""
    for i, (what, shape, pos, kwargs) in enumerate(cases(ex.config)):
        x = kit.randn(*shape, salt=i)
        (got,), _ = kit.run(None, [x, pos], kwargs, check_shapes=False)
        want, _ = kit.ref_run(None, [x, pos], kwargs)
        compare(got, want[0], f"rotated x ({what})")


@check("numerics")
@needs("rope")
def test_rope_float32(kit, ex):
    """float32 in, float32 out, matching the reference (positions 0..T-1)."""
    c = ex.config
    x = kit.randn(c["B"], c["H"], c["T"], c["d"], salt=7)
    pos = positions("arange", c["T"])
    (got,), _ = kit.run(None, [x.float(), pos], dtype=torch.float32, check_shapes=False)
    want, _ = kit.ref_run(None, [x, pos])
    compare(got, want[0], "float32 rotated x", dtype=torch.float32)


@check("numerics")
@needs("rope")
def test_dot_product_depends_only_on_relative_position(kit, ex):
    """Rotating q at m and k at n gives the same q·k as at m+s and n+s; position 0 leaves x unchanged; norms are kept."""
    c = ex.config
    d = c["d"]
    q, k = kit.randn(d, salt=8), kit.randn(d, salt=9)
    pos = torch.tensor([0, 1, 2, 5, 11, 12, 13, 16])
    (rq,), _ = kit.run(None, [q.expand(len(pos), d).clone(), pos], check_shapes=False)  # q at every position
    (rk,), _ = kit.run(None, [k.expand(len(pos), d).clone(), pos], check_shapes=False)
    compare(rq[0], q, "q rotated at position 0 (must be unchanged)", token_dim=None)
    compare(rq.norm(dim=-1), q.norm().expand(len(pos)), "norm of q after rotation (a rotation keeps lengths)", token_dim=None)
    dots = {(int(m), int(n)): (rq[i] @ rk[j]).item() for i, m in enumerate(pos) for j, n in enumerate(pos)}
    for (m, n), value in dots.items():
        for s in (11, 1):
            if (m + s, n + s) in dots:
                other = dots[(m + s, n + s)]
                expect(abs(other - value) <= 1e-9 * (1 + abs(value)),
                       f"q at {m} · k at {n} = {value:.6g}, but q at {m + s} · k at {n + s} = {other:.6g}: "
                       "after RoPE the dot product must depend only on the offset m - n")


@check("numerics")
@needs("rope")
def test_rope_gradients_match_reference(kit, ex):
    """Backward through the rotation gives the reference's gradient (a rotation's gradient is the inverse rotation)."""
    c = ex.config
    x = kit.randn(c["B"], c["H"], c["T"], c["d"], salt=10)
    pos = positions("offset", c["T"])
    gout = [kit.randn(c["B"], c["H"], c["T"], c["d"], salt=11)]
    _, got = kit.run(None, [x, pos], grad_out=gout, check_shapes=False)
    _, want = kit.ref_run(None, [x, pos], grad_out=gout)
    expect("arg0" in got, "no gradient reached x: is the output detached from it?")
    compare(got["arg0"], want["arg0"], "gradient of x")


@check("device")
@needs("rope")
def test_rope_runs_on_meta_device(kit, ex):
    """On the meta device (positions too), the frequencies and angles are created on x's device."""
    c = ex.config
    shape = (c["B"], c["H"], c["T"], c["d"])
    shapes, _ = kit.run(None, [kit.randn(*shape), positions("arange", c["T"])], device="meta")
    expect(shapes[0] == shape, f"on the meta device the output shape is {shapes[0]}, expected {shape}")


@check("device")
@needs("rope", "cuda")
def test_rope_matches_reference_on_cuda(kit, ex):
    """On the GPU, float32 rotations match the reference."""
    c = ex.config
    x = kit.randn(c["B"], c["H"], c["T"], c["d"], salt=12)
    pos = positions("arange", c["T"])
    (got,), _ = kit.run(None, [x.float(), pos], dtype=torch.float32, device="cuda", check_shapes=False)
    want, _ = kit.ref_run(None, [x, pos])
    compare(got, want[0], "CUDA float32 rotated x", dtype=torch.float32)
