from grader.suites import check, needs
from grader.harness import expect


@check("api")
def test_entry_point_has_contract_signature(kit, ex):
    """The class or function exists with the contract's parameter names."""
    info = kit.describe()
    if ex.kind in ("module", "custom_module"):
        expect(info["is_class"] and info.get("is_module"), f"{ex.entry} must be a class derived from torch.nn.Module",
               "signature_mismatch")
    else:
        expect(info["callable"] and not info["is_class"], f"{ex.entry} must be a function", "signature_mismatch")
    names = info.get("parameters") or []
    if ex.kind in ("module", "custom_module") and names[:1] == ["self"]:
        names = names[1:]
    expect(names[: len(ex.signature)] == list(ex.signature),
           f"{ex.entry} takes ({', '.join(names)}); the contract is ({', '.join(ex.signature)})", "signature_mismatch")


@check("api")
@needs("module")
def test_parameters_named_as_contract(kit, ex, init):
    """Parameters have the contract's names and shapes (the mask is a buffer, not a parameter)."""
    expect_contract_parameters(kit, init)


def expect_contract_parameters(kit, init) -> None:
    got = {k: tuple(v) for k, v in kit.describe(init)["params"].items()}
    want = {k: tuple(v.shape) for k, v in kit.weights(init).items()}
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    expect(not missing, f"missing parameter(s) {', '.join(missing)}: the grader loads weights by these names",
           "parameter_names")
    expect(not extra, f"unexpected parameter(s) {', '.join(extra)}: buffers (like a mask) belong in register_buffer, "
           "projections only in the contract's layers", "parameter_names")
    wrong = [f"{k} is {got[k]}, expected {want[k]}" for k in want if got[k] != want[k]]
    expect(not wrong, "; ".join(wrong), "parameter_shapes")


@check("api")
@needs("divisible_check")
def test_rejects_heads_that_do_not_divide(kit, ex):
    """Construction fails when the output size is not divisible by the number of heads."""
    init = {**ex.config, ex.dims["output"]: 9, ex.dims["heads"]: 2}
    expect(kit.construct_raises(init) is not None,
           f"{ex.entry}({', '.join(f'{k}={v}' for k, v in init.items())}) should raise: 9 is not divisible by 2 heads",
           "construct_should_raise")


@check("api")
def test_file_imports_without_error(kit):
    """The file runs top to bottom without an exception (importing it defines the entry point)."""
    expect(kit.load_error is None, f"importing your file failed: {kit.load_error}", "import_failed")
