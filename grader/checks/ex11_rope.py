"""Exercise 11 (rope): apply_rope(x, positions, base=10000.0) -> x rotated pair by pair (half-split pairs).

Positions are given explicitly: from 0, offset by thousands (as when decoding after a long
prompt, where float32 angles lose digits), or in any order. The relative-position property is
checked on the submission's own outputs: q . k must not change when both positions shift.
"""
import torch

from grader.diagnosis.diagnoses import make
from grader.diagnosis.behaviour import (PAIRS, RAISED, attempt, close, crash_or, delta, evidence, failed, match,
                                        raised_at, report)
from grader.harness import compare, expect
from grader.numerics import TOLERANCES, dtype_name
from grader.sandbox import SubmissionError
from grader.suites import ON_DEVICE, check, needs


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


@check("shape", evidence={"dtype_changed": "dtype_not_kept", "*": "wrong_output"})
def test_rope_output_shapes(kit, ex):
    """The output has x's shape: (T, d), (B, H, T, d), one token."""
    c = ex.config
    for shape in [(c["T"], c["d"]), (c["B"], c["H"], c["T"], c["d"]), (1, 1, 1, c["d"]), (2, c["T"], 4)]:
        (out,), _ = kit.run(None, [kit.randn(*shape), positions("arange", shape[-2])], check_shapes=False)
        expect(tuple(out.shape) == shape, f"input {shape} gave output {tuple(out.shape)}, expected {shape} (x's shape)",
               "shape_mismatch")


# Angles computed in float32, as Hugging Face, Meta and rasbt do, are right: at position 3000 they move the output
# by about 1e-3 at most. float16 or bfloat16 angles are off by whole radians there.
ANGLE_TOL = (2e-3, 2e-3)
HALF_TOL = TOLERANCES[torch.bfloat16]  # cos and sin rounded to bfloat16


@check("numerics", evidence="wrong_output")
def test_rope_matches_reference_float64(kit, ex):
    """Equal to the reference in float64: default base, positions offset by 3000, shuffled positions, other bases, d = 6."""
    for i, (what, shape, pos, kwargs) in enumerate(cases(ex.config)):
        x = kit.randn(*shape, salt=i)
        (got,), _ = kit.run(None, [x, pos], kwargs, check_shapes=False)
        want, _ = kit.ref_run(None, [x, pos], kwargs)
        compare(got, want[0], f"rotated x ({what})", tol=ANGLE_TOL)


@check("numerics", evidence={"dtype_changed": "dtype_not_kept", "*": "wrong_output"})
def test_rope_float32(kit, ex):
    """float32 in, float32 out, matching the reference (positions 0..T-1)."""
    c = ex.config
    x = kit.randn(c["B"], c["H"], c["T"], c["d"], salt=7)
    pos = positions("arange", c["T"])
    (got,), _ = kit.run(None, [x.float(), pos], dtype=torch.float32, check_shapes=False)
    want, _ = kit.ref_run(None, [x, pos])
    compare(got, want[0], "float32 rotated x", dtype=torch.float32)


@check("numerics", evidence={"dtype_changed": "dtype_not_kept", "*": "rope_angle_precision"})
def test_rope_half_precision_at_large_positions(kit, ex):
    """float16 and bfloat16 in, at positions 3000..: the output within half-precision rounding of the reference.
    Angles computed in the input's dtype are off by whole radians there (position x frequency needs float32).
    A dtype the code cannot run on this CPU (torch.complex has no float16 kernel here, a GPU has) is not judged."""
    c = ex.config
    x = kit.randn(c["B"], c["H"], c["T"], c["d"], salt=8)
    pos = positions("offset", c["T"])
    want, _ = kit.ref_run(None, [x, pos])
    for dtype in (torch.float16, torch.bfloat16):
        try:
            (got,), _ = kit.run(None, [x.to(dtype), pos], dtype=dtype, check_shapes=False)
        except SubmissionError:
            continue
        rounded = want[0].to(dtype).double()  # the reference, rounded as a half-precision output must be
        compare(got, rounded, f"{dtype_name(dtype)} rotated x at positions 3000..",
                tol=(4e-2, 4e-2) if dtype is torch.bfloat16 else (8e-3, 8e-3))


@check("numerics", evidence="wrong_output")
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
                expect(abs(other - value) <= 1e-4 * (1 + abs(value)),  # float32 angles stay within 1e-5 here
                       f"q at {m} · k at {n} = {value:.6g}, but q at {m + s} · k at {n + s} = {other:.6g}: "
                       "after RoPE the dot product must depend only on the offset m - n")


@check("numerics", evidence="wrong_output")
def test_rope_gradients_match_reference(kit, ex):
    """Backward through the rotation gives the reference's gradient (a rotation's gradient is the inverse rotation)."""
    c = ex.config
    x = kit.randn(c["B"], c["H"], c["T"], c["d"], salt=10)
    pos = positions("offset", c["T"])
    gout = [kit.randn(c["B"], c["H"], c["T"], c["d"], salt=11)]
    _, got = kit.run(None, [x, pos], grad_out=gout, check_shapes=False)
    _, want = kit.ref_run(None, [x, pos], grad_out=gout)
    expect("arg0" in got, "no gradient reached x: is the output detached from it?", "no_gradient")
    compare(got["arg0"], want["arg0"], "gradient of x", tol=ANGLE_TOL)


@check("device", evidence=ON_DEVICE)
def test_rope_runs_on_another_device(kit, ex):
    """On a second device (cuda:0, emulated where no GPU is; positions too), the frequencies and angles are created
    on x's device; reading a position back to the host (.item(), int(), a cache sized by the largest position) works
    as on a GPU."""
    c = ex.config
    shape = (c["B"], c["H"], c["T"], c["d"])
    (got,), _ = kit.run(None, [kit.randn(*shape), positions("arange", c["T"])], device="emulated")
    expect(tuple(got.shape) == shape, f"on the device the output shape is {tuple(got.shape)}, expected {shape}", "shape_mismatch")


@check("device")
@needs("cuda")
def test_rope_matches_reference_on_cuda(kit, ex):
    """On the GPU, float32 rotations match the reference."""
    c = ex.config
    x = kit.randn(c["B"], c["H"], c["T"], c["d"], salt=12)
    pos = positions("arange", c["T"])
    (got,), _ = kit.run(None, [x.float(), pos], dtype=torch.float32, device="cuda", check_shapes=False)
    want, _ = kit.ref_run(None, [x, pos])
    compare(got, want[0], "CUDA float32 rotated x", dtype=torch.float32)


# -- mistakes ------------------------------------------------------------------------------------------------
ROPE_BUGS = ("rope_interleaved", "rope_pairs_to_halves", "rope_freq_no_2", "rope_freq_not_inverted", "rope_direction", "rope_positions_ignored",
             "rope_base_ignored")
MISTAKES = {
    "rope_interleaved": "with pairs (x[2i], x[2i+1]) (interleaved) instead of (x[i], x[i + d/2]) (half-split)",
    "rope_freq_no_2": "with theta_i = base ** (-i / d) instead of base ** (-2i / d)",
    "rope_freq_not_inverted": "with theta_i = base ** (2i / d) instead of base ** (-2i / d)",
    "rope_pairs_to_halves": "with pairs (x[2i], x[2i+1]) rotated and written back as halves [x'[2i] | x'[2i+1]]",
    "rope_direction": "with every pair rotated by -angle instead of +angle",
    "rope_positions_ignored": "with positions 0..T-1 instead of the positions given",
    "rope_base_ignored": "with base 10000 whatever base is given",
}
ALIASES = {"rope_interleaved": "rope_pairing", "rope_pairs_to_halves": "rope_pairing", "rope_freq_no_2": "rope_frequencies", "rope_freq_not_inverted": "rope_frequencies"}


def rope_variant(x, positions, base=10000.0, bugs=frozenset()):
    """Exercise 11's rotation with optional mistakes."""
    d = x.size(-1)
    half = d // 2
    work = torch.float64
    base = 10000.0 if "rope_base_ignored" in bugs else base
    i = torch.arange(0, half, dtype=work)
    if "rope_freq_no_2" in bugs:
        theta = base ** (-i / d)
    elif "rope_freq_not_inverted" in bugs:
        theta = base ** (i * 2 / d)
    else:
        theta = base ** (-i * 2 / d)
    pos = torch.arange(x.size(-2)) if "rope_positions_ignored" in bugs else positions
    angles = pos.to(work)[:, None] * theta[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    if "rope_direction" in bugs:
        sin = -sin
    if "rope_pairs_to_halves" in bugs:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    if "rope_interleaved" in bugs:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).flatten(-2)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)




# -- diagnosis ----------------------------------------------------------------------------------------------
def diagnose(ex, kit, verdict) -> list:
    """Three probes (the suite's first cases) against the rotation variants."""
    found = [make("api_mismatch", t.message) for t in failed(verdict, "signature_mismatch")]
    probes = []
    for i, (what, shape, pos, kwargs) in enumerate(cases(ex.config)[:3]):
        x = kit.randn(*shape, salt=110 + i)
        got, err = attempt(lambda: kit.run(None, [x, pos], kwargs, check_shapes=False)[0])
        if err is not None:
            if err.code == "dtype_changed":
                return found + [make("dtype_not_kept", err)]
            return found + [crash_or(err, text=f"{what}: {err}")]
        probes.append(((x, pos, kwargs), got))
    if all(close(got[0], rope_variant(x, pos, **kw), ANGLE_TOL) for (x, pos, kw), got in probes):
        return found + evidence(verdict, own=True)
    matches = match(ex, probes, lambda a, b, wd: [rope_variant(a[0], a[1], **a[2], bugs=b)], list(ROPE_BUGS), [], 0, tol=ANGLE_TOL)
    if not matches and not all(close(got[0], rope_variant(x, pos, **kw), HALF_TOL) for (x, pos, kw), got in probes):
        # cos and sin rounded to a half precision (kept in bfloat16, as some models do) still show a mistake: the
        # variants differ from each other by O(1), the rounding by 1e-2 at most
        matches = match(ex, probes, lambda a, b, wd: [rope_variant(a[0], a[1], **a[2], bugs=b)], list(ROPE_BUGS), [], 0,
                        tol=HALF_TOL)
    if matches:
        lost = angles_lose_digits(ex, kit, matches[0][0])  # computed before the rotation: named first
        shown = ([make("rope_angle_precision", lost)] if lost else []) + report(ex, matches, 0)
        return found + raised_at(PAIRS, raised_in_bfloat16(ex, kit), shown, wider=True)
    named = rope_rules(ex, kit, probes)
    if named:
        return found + named
    # Right up to rounding at small positions, far off at position 3000: the angles lost their digits
    # (float16 or bfloat16 angles; float32 ones pass).
    near, far = (delta(got[0], rope_variant(x, pos, **kw)) for (x, pos, kw), got in probes[:2])
    if near < 0.05 and far > 10 * near:
        return found + [make("rope_angle_precision", f"positions 0..T-1 are right up to {near:.2g}, but at positions "
                                                     f"3000.. the output is off by {far:.2g}: the angles are computed in "
                                                     "a precision that cannot hold position × frequency")]
    return found


def raised_in_bfloat16(ex, kit) -> list:
    """bfloat16 input, which the contract allows, raising while float64 runs: the ops RoPE may use that have no
    bfloat16 kernel are the complex ones (torch.complex, view_as_complex), which turn the pairs into complex numbers,
    so the exception sits at the pairing step: after the angles, before the rotation; a pairing mistake, which every
    dtype shows, comes before it."""
    c = ex.config
    x = kit.randn(c["B"], c["H"], c["T"], c["d"], salt=119).to(torch.bfloat16)
    _, err = attempt(lambda: kit.run(None, [x, positions("arange", c["T"])], dtype=torch.bfloat16, check_shapes=False)[0])
    if err is None or err.code not in RAISED:
        return []
    return [crash_or(err, text="float64 and float32 inputs run; bfloat16 input, which the contract allows, raises")]


def angles_lose_digits(ex, kit, bugs) -> str | None:
    """Whether a half-precision input at positions 3000.. parts from the matched variant (rounded to that dtype)
    while float64 inputs equal it: the angles are computed in the input's precision too."""
    c = ex.config
    x = kit.randn(c["B"], c["H"], c["T"], c["d"], salt=118)
    pos = positions("offset", c["T"])
    want = rope_variant(x, pos, bugs=bugs)
    for dtype, tol in ((torch.float16, (8e-3, 8e-3)), (torch.bfloat16, (4e-2, 4e-2))):
        got, err = attempt(lambda: kit.run(None, [x.to(dtype), pos], dtype=dtype, check_shapes=False)[0])
        if err is None and not close(got[0].double(), want.to(dtype).double(), tol):
            return (f"{dtype_name(dtype)} input at positions 3000.. is off by {delta(got[0].double(), want):.2g} from "
                    "the same rotation in float64: the angles are computed in the input's precision")
    return None


def pair_angles(x, out):
    """The angle each half-split pair (x[i], x[i + d/2]) was turned by; None when a pair's length changed."""
    half = x.size(-1) // 2
    x1, x2, o1, o2 = x[..., :half], x[..., half:], out[..., :half], out[..., half:]
    if out.shape != x.shape or not torch.allclose(x1**2 + x2**2, o1**2 + o2**2, rtol=1e-4, atol=1e-8):
        return None
    return torch.atan2(x1 * o2 - x2 * o1, x1 * o1 + x2 * o2)


def wrapped(a):
    return torch.atan2(a.sin(), a.cos())


def rope_rules(ex, kit, probes) -> list:
    """Mistakes no variant models, from the angles the pairs were turned by: positions used from 0 whatever is
    given (right for 0..T-1, shifted for 1..T), or angles position × a frequency other than base ** (-2i/d)."""
    (x, pos, kw), got = probes[0]
    shifted = pos + 1
    out, err = attempt(lambda: kit.run(None, [x, shifted], kw, check_shapes=False)[0])
    if err is None and close(got[0], rope_variant(x, pos, **kw), ANGLE_TOL) and \
            close(out[0], rope_variant(x, pos, **kw), ANGLE_TOL) and not close(out[0], rope_variant(x, shifted, **kw), ANGLE_TOL):
        return [make("rope_positions_ignored", f"positions 1..{len(pos)} give the output of positions 0..{len(pos) - 1}: "
                                                "the positions are counted from 0 instead of taken as given")]
    shown = [b for b in ROPE_BUGS if b not in ("rope_positions_ignored", "rope_base_ignored")]  # the same at 0..T-1
    matches = [] if close(got[0], rope_variant(x, pos, **kw), ANGLE_TOL) else \
        match(ex, probes[:1], lambda a, b, wd: [rope_variant(a[0], a[1], **a[2], bugs=b)], shown, [], 0, tol=ANGLE_TOL)
    if matches:
        return report(ex, matches, 0, f"at positions 0..{len(pos) - 1} with the default base, ")
    angles = pair_angles(x, got[0])
    if angles is None or not (pos[1] == 1):
        return []
    freq = angles[..., 1, :]
    steps = pos.to(angles.dtype)[:, None] * freq[..., None, :]
    if not bool((wrapped(angles - steps).abs() < 1e-4).all()):
        return []
    half = x.size(-1) // 2
    theta = kw.get("base", 10000.0) ** (-torch.arange(half, dtype=torch.float64) * 2 / x.size(-1))
    if bool((wrapped(freq.flatten(0, -2)[0].double() - theta).abs() < 1e-4).all()):
        return []
    return [make("rope_frequencies", f"each pair turns by position × a frequency, but the frequencies are "
                                     f"{[round(f, 4) for f in freq.flatten(0, -2)[0].tolist()]} instead of "
                                     f"{[round(f, 4) for f in theta.tolist()]} (base ** (-2i/d))")]


def trace_call(ex, kit) -> list[dict]:
    """The calls `grade` traces to point at a line: positions offset by 3000, default base; then, if that one shows
    no difference, another base (a base written into the code)."""
    c = ex.config
    call = {"init": None, "params": {}, "args": [kit.randn(c["B"], c["H"], c["T"], c["d"], salt=850),
                                                 positions("offset", c["T"])], "kwargs": {}}
    return [call, {**call, "scalars": {"base": 500.0}}]
