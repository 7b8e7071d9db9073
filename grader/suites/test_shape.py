from grader.suites import check, needs
from grader.probes import input_shapes, output_shape
from grader.harness import expect


@check("shape")
@needs("module")
def test_output_shapes(kit, ex, init):
    """Output shape over batch 1 and >1, 1 and several tokens, fewer tokens than the context."""
    params = kit.weights(init)
    for shape in input_shapes(ex, init):
        outs, _ = kit.run(init, [kit.randn(*shape)], params=params)
        want = output_shape(ex, init, shape)
        expect(tuple(outs[0].shape) == want, f"input {shape} gave output {tuple(outs[0].shape)}, expected {want}", "shape_mismatch")


@check("shape")
@needs("function")
def test_function_output_shapes(kit, ex):
    """output is (..., L, d_v) and weights (..., L, S), with or without batch dimensions."""
    c = ex.config
    for lead in [(), (2,), (2, 3)]:
        q, k, v = kit.randn(*lead, c["L"], c["d_k"]), kit.randn(*lead, c["S"], c["d_k"], salt=1), kit.randn(*lead, c["S"], c["d_v"], salt=2)
        (out, w), _ = kit.run(None, [q, k, v], n_outputs=2)
        expect(tuple(out.shape) == (*lead, c["L"], c["d_v"]), f"output shape {tuple(out.shape)} for query {tuple(q.shape)}, value {tuple(v.shape)}; expected {(*lead, c['L'], c['d_v'])}", "shape_mismatch")
        expect(tuple(w.shape) == (*lead, c["L"], c["S"]), f"weights shape {tuple(w.shape)}, expected {(*lead, c['L'], c['S'])}", "shape_mismatch")
