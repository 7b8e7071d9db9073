"""grader.numerics (one table of tolerances, the closeness rules, dtype names) and grader.harness.unravel
(torch.unravel_index without its first-call cost, sympy, index for index)."""
import re

import pytest
import torch

from grader import numerics
from grader.harness import unravel


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 5), (2, 1, 4, 4), (1, 1, 1), (3, 0, 2)])
def test_unravel_agrees_with_torch(shape):
    numel = torch.Size(shape).numel()
    for flat in range(numel):
        assert unravel(flat, shape) == tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), shape))


def test_unravel_finds_the_argmax():
    x = torch.zeros(2, 3, 4)
    x[1, 2, 3] = 5
    assert unravel(int(x.argmax()), x.shape) == (1, 2, 3)


def test_every_float_dtype_has_one_tolerance_and_a_name():
    assert set(numerics.TOLERANCES) == {torch.float64, torch.float32, torch.float16, torch.bfloat16}
    for dtype, (rtol, atol) in numerics.TOLERANCES.items():
        assert 0 < atol <= rtol < 0.1, dtype
        assert numerics.DTYPES[numerics.dtype_name(dtype)] is dtype
    assert numerics.dtype_name(torch.bool) == "bool"
    # lower precision never gets a tighter tolerance
    order = [torch.float64, torch.float32, torch.float16, torch.bfloat16]
    assert [numerics.TOLERANCES[d][0] for d in order] == sorted(numerics.TOLERANCES[d][0] for d in order)


def test_the_documented_table_is_the_table():
    """docs/pack-authors.md's "Tolerances and NaN" lists exactly these (rtol, atol) and the float64 note level."""
    from tests.conftest import ROOT

    text = (ROOT / "docs" / "pack-authors.md").read_text(encoding="utf-8")
    section = text.split("## Tolerances and NaN", 1)[1].split("\n## ", 1)[0]
    def short(x: float) -> str:  # 1e-05 as the table writes it: 1e-5
        mantissa, exponent = f"{x:.0e}".split("e")
        return f"{mantissa}e{int(exponent)}"

    for dtype, (rtol, atol) in numerics.TOLERANCES.items():
        assert f"| {numerics.dtype_name(dtype)} | {short(rtol)}, {short(atol)} |" in section, dtype
    assert f"above {short(numerics.FLOAT64_NATIVE[0])}" in section
    assert f"compares at {short(numerics.MATCH[0])}, {short(numerics.MATCH[1])}" in section
    assert "grader.numerics" in section


def test_allclose_is_atol_plus_rtol_times_want_and_nan_equals_nan_in_place():
    want = torch.tensor([1.0, 100.0, float("nan")], dtype=torch.float64)
    rtol, atol = numerics.TOLERANCES[torch.float64]
    inside = want + torch.tensor([atol + rtol * 1.0, atol + rtol * 100.0, 0.0]) * 0.9
    outside = want + torch.tensor([0.0, (atol + rtol * 100.0) * 1.1, 0.0])
    assert numerics.allclose(inside, want, (rtol, atol))
    assert not numerics.allclose(outside, want, (rtol, atol))
    assert not numerics.allclose(torch.tensor([1.0, 100.0, 0.0], dtype=torch.float64), want, (rtol, atol))


def test_float32_rounding_passes_at_float64_and_a_classic_mistake_does_not():
    x = torch.randn(4, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    w = torch.softmax(x, -1)
    tol = numerics.TOLERANCES[torch.float64]
    assert numerics.allclose(torch.softmax(x.float(), -1).double(), w, tol)
    assert not numerics.allclose(torch.softmax(x / 2, -1), w, tol)  # a wrong scale
    assert not numerics.allclose(torch.softmax(x.float(), -1).double(), w, numerics.FLOAT64_NATIVE)


def test_close_ignores_where_the_variant_is_nan_but_needs_something_known():
    want = torch.tensor([[0.5, 0.5], [float("nan"), float("nan")]], dtype=torch.float64)
    filled = torch.tensor([[0.5, 0.5], [0.5, 0.5]], dtype=torch.float64)  # -1e9 instead of -inf: uniform rows
    assert numerics.close(filled, want)
    assert not numerics.close(filled + 1e-3, want)
    assert not numerics.close(filled, want[:1])  # another shape
    assert not numerics.close(filled, torch.full((2, 2), float("nan"), dtype=torch.float64))  # nothing to compare
    assert not numerics.close(torch.full((2, 2), float("nan"), dtype=torch.float64), want)  # NaN where want is known
    assert numerics.close(filled + 1e-3, want, tol=(1e-2, 1e-2))


def test_close_to_scale_wants_infinities_and_nan_in_place_and_measures_by_the_largest_value():
    b = torch.tensor([1000.0, 1.0, float("-inf")], dtype=torch.float64)
    assert numerics.close_to_scale(b + torch.tensor([0.0, 1e-4, 0.0], dtype=torch.float64), b, 1e-6)  # 1e-4 ≤ 1e-6·1000
    assert not numerics.close_to_scale(b + torch.tensor([0.0, 1e-2, 0.0], dtype=torch.float64), b, 1e-6)
    assert not numerics.close_to_scale(torch.tensor([1000.0, 1.0, -1e9], dtype=torch.float64), b, 1e-6)
    assert not numerics.close_to_scale(torch.tensor([1000.0, 1.0, float("inf")], dtype=torch.float64), b, 1e-6)
    nan = torch.tensor([float("nan")], dtype=torch.float64)
    assert numerics.close_to_scale(nan, nan, 1e-6) and not numerics.close_to_scale(nan, -nan.nan_to_num(0.0) - 1, 1e-6)


def test_rtol_for_takes_the_loosest_dtype():
    half, double = torch.zeros(1, dtype=torch.float16), torch.zeros(1, dtype=torch.float64)
    assert numerics.rtol_for(double) == numerics.TOLERANCES[torch.float64][0]
    assert numerics.rtol_for(double, half) == numerics.TOLERANCES[torch.float16][0]
    assert numerics.rtol_for(torch.zeros(1, dtype=torch.int64)) == numerics.TOLERANCES[torch.float64][0]


def test_compare_the_checks_and_the_diagnosis_use_the_one_module():
    """No second table or closeness rule: harness, behaviour and layout take theirs from grader.numerics."""
    from grader import harness
    from grader.diagnosis import behaviour, layout

    assert behaviour.close is numerics.close
    assert layout.close is numerics.close_to_scale and layout.rtol_for is numerics.rtol_for
    assert not hasattr(harness, "TOLERANCES") or harness.TOLERANCES is numerics.TOLERANCES


SECOND_COPY = re.compile(r"^(def close\(|\w*(TOLERANCES?|RTOL|ATOL)\w*(, *\w+)* = |DTYPE_NAMES = )", flags=re.M)


def test_no_second_tolerance_table_or_closeness_rule_in_the_grader():
    """A table of tolerances or a close() written again elsewhere would drift from this one (it did, three times)."""
    from tests.conftest import ROOT

    found = []
    for path in sorted((ROOT / "grader").rglob("*.py")):
        if path.name == "numerics.py" or "_kit" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in SECOND_COPY.finditer(text)]
    assert not found, found


def test_the_second_copy_guard_fires():
    for text in ("def close(a, b, rtol):\n", "RTOL = {torch.float64: 1e-6}\n", "MATCH_RTOL, MATCH_ATOL = 1e-5, 1e-5\n",
                 "TOLERANCES = {}\n", "DTYPE_NAMES = {}\n"):
        assert SECOND_COPY.search(text), text
    assert not SECOND_COPY.search("    def close(self) -> None:\nANGLE_TOL = (2e-3, 2e-3)\n")
