"""Checks shared by exercises whose call differs from module(x) -> tensor (kind "custom_module")."""
from grader.suites import check, needs
from grader.suites.harness import expect


@check("api")
@needs("custom_module")
def test_custom_module_parameters_named_as_contract(kit, ex, init):
    """Parameters have the contract's names and shapes (masks and caches are not parameters)."""
    got = {k: tuple(v) for k, v in kit.describe(init)["params"].items()}
    want = {k: tuple(v.shape) for k, v in kit.weights(init).items()}
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    expect(not missing, f"missing parameter(s) {', '.join(missing)}: the grader loads weights by these names")
    expect(not extra, f"unexpected parameter(s) {', '.join(extra)}: buffers (like a mask) belong in register_buffer, "
           "projections only in the contract's layers")
    wrong = [f"{k} is {got[k]}, expected {want[k]}" for k in want if got[k] != want[k]]
    expect(not wrong, "; ".join(wrong))
