import torch

from grader.suites import check, needs
from grader.probes import input_shapes
from grader.harness import compare, expect


@check("numerics")
@needs("module")
def test_matches_reference_float64(kit, ex, init):
    """Outputs equal the reference's in float64, with the reference's weights loaded."""
    params = kit.weights(init)
    shapes = input_shapes(ex, init)
    xs = [kit.randn(*shape, salt=i) for i, shape in enumerate(shapes)]
    for shape, x, (got, _) in zip(shapes, xs, kit.runs([kit.call(init, [x], params=params) for x in xs])):
        want, _ = kit.ref_run(init, [x], params=params)
        compare(got[0], want[0], f"output for input {shape}")


@check("numerics")
@needs("module")
def test_matches_reference_float32(kit, ex):
    """Outputs match in float32 too (the input's dtype is kept)."""
    init = ex.config
    params = kit.weights(init)
    x = kit.randn(*input_shapes(ex, init)[0])
    got, _ = kit.run(init, [x.float()], params=params, dtype=torch.float32)
    want, _ = kit.ref_run(init, [x], params=params)
    compare(got[0], want[0], "float32 output", dtype=torch.float32)


@check("numerics")
@needs("module")
def test_gradients_match_reference(kit, ex):
    """Backward through the submission gives the reference's gradients for the input and every parameter."""
    init = ex.config
    params = kit.weights(init)
    x = kit.randn(*input_shapes(ex, init)[0])
    gout = kit.randn(*input_shapes(ex, init)[0][:-1], ex.dim("output", init), salt=7)
    _, got = kit.run(init, [x], params=params, grad_out=[gout])
    _, want = kit.ref_run(init, [x], params=params, grad_out=[gout])
    for name, g in want.items():
        assert_name = "input" if name == "arg0" else name.removeprefix("param.")
        expect(name in got, f"no gradient reached {assert_name}: is the output detached from it?", "no_gradient")
        compare(got[name], g, f"gradient of {assert_name}", token_dim=None)


def _qkv(kit, c, lead=(2,), salt=0):
    return (kit.randn(*lead, c["L"], c["d_k"], salt=salt), kit.randn(*lead, c["S"], c["d_k"], salt=salt + 1),
            kit.randn(*lead, c["S"], c["d_v"], salt=salt + 2))


@check("numerics")
@needs("function")
def test_function_matches_reference(kit, ex):
    """output and weights equal the reference in float64 and float32, d_k different from d_v."""
    c = ex.config
    cases = [(_qkv(kit, c, lead), dtype) for lead, dtype in [((2,), torch.float64), ((2, 3), torch.float64), ((), torch.float64),
                                                             ((2,), torch.float32)]]
    calls = [kit.call(None, [a.to(dtype) for a in args], dtype=dtype, n_outputs=2) for args, dtype in cases]
    for (args, dtype), (got, _) in zip(cases, kit.runs(calls)):
        want, _ = kit.ref_run(None, list(args))
        compare(got[0], want[0], f"output ({str(dtype)[6:]}, query {tuple(args[0].shape)})", dtype=dtype)
        compare(got[1], want[1], f"weights ({str(dtype)[6:]}, query {tuple(args[0].shape)})", dtype=dtype)


@check("numerics")
@needs("function")
def test_function_gradients_match_reference(kit, ex):
    """Gradients with respect to query, key and value equal the reference's."""
    c = ex.config
    args = _qkv(kit, c, salt=3)
    gout = [kit.randn(2, c["L"], c["d_v"], salt=9)]
    _, got = kit.run(None, list(args), grad_out=gout, n_outputs=2)
    _, want = kit.ref_run(None, list(args), grad_out=gout)
    for i, name in enumerate(["query", "key", "value"]):
        expect(f"arg{i}" in got, f"no gradient reached {name}: is the output detached from it?", "no_gradient")
        compare(got[f"arg{i}"], want[f"arg{i}"], f"gradient of {name}")
