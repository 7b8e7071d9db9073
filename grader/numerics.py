"""How the kit compares numbers: one tolerance per dtype, closeness with its NaN rules, and dtype names.

Three questions, one table:
- allclose: does a result pass a check (harness.compare)? |got − want| ≤ atol + rtol·|want| elementwise;
  NaN in both at the same place is equal (compare fails a NaN in got alone before asking).
- close: which mistaken variant does a submission equal (diagnosis)? allclose at the float64 tolerance,
  where the variant's NaNs (a row with every key blocked) match anything.
- close_to_scale: which reference stage does a traced tensor reproduce (diagnosis/layout.py)? Infinities and
  NaNs agree exactly; the rest within rtol of the largest finite |b|.
"""
from __future__ import annotations

import torch

# (rtol, atol) by dtype. float64 admits code that rounds through float32 once (a float32 constant, an
# epsilon in a denominator, a softmax upcast): that moves O(1) values by about 1e-7, the classic mistakes
# by 1e-2 or more. Agreement looser than FLOAT64_NATIVE passes with a note (Harness.notes).
TOLERANCES = {
    torch.float64: (1e-5, 1e-5),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 2e-3),
    torch.bfloat16: (3e-2, 1e-2),
}
FLOAT64_NATIVE = (1e-9, 1e-10)
# A variant names the mistake when it agrees with the submission as closely as the float64 checks demand of a
# correct submission: code that rounds through float32 once keeps its diagnosis, while the variants differ from
# the reference, and from each other, by 1e-2 or more on the probes.
MATCH = TOLERANCES[torch.float64]

DTYPES = {str(dtype).removeprefix("torch."): dtype for dtype in TOLERANCES}


def dtype_name(dtype: torch.dtype) -> str:
    """float64, float16, bool...: what the JSON headers, the messages and the explainers call a dtype."""
    return str(dtype).removeprefix("torch.")


def allclose(got: torch.Tensor, want: torch.Tensor, tol: tuple[float, float]) -> bool:
    """Elementwise |got − want| ≤ atol + rtol·|want| for tol = (rtol, atol); NaN equals NaN at the same place."""
    rtol, atol = tol
    return torch.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def close(got: torch.Tensor, want: torch.Tensor, tol: tuple[float, float] | None = None) -> bool:
    """Equal up to float32 rounding (tol, else MATCH), where want's NaNs (rows with every key blocked) match
    anything: a submission that fills with -1e9 or finfo.min instead of -inf differs only there."""
    if got.shape != want.shape:
        return False
    known = ~torch.isnan(want)
    return bool(known.any()) and allclose(got[known], want[known], tol or MATCH)


def rtol_for(*tensors: torch.Tensor) -> float:
    """The loosest rtol of the tensors' dtypes (float64's for a dtype the table does not know)."""
    return max(TOLERANCES.get(t.dtype, MATCH)[0] for t in tensors)


def close_to_scale(a: torch.Tensor, b: torch.Tensor, rtol: float) -> bool:
    """a ≈ b elementwise (same shape): infinities and NaNs must agree exactly, the rest within rtol of b's scale."""
    a, b = a.double(), b.double()
    fin = torch.isfinite(b)
    if not torch.equal(torch.isfinite(a), fin):
        return False
    if not fin.all() and not torch.equal(a[~fin].nan_to_num(0.0, 1.0, -1.0), b[~fin].nan_to_num(0.0, 1.0, -1.0)):
        return False
    if not fin.any():
        return True
    scale = float(b[fin].abs().max())
    return bool(((a[fin] - b[fin]).abs() <= rtol * (scale + 1e-12)).all())
