from grader.suites import check, needs
from grader.probes import input_shapes, output_shape
from grader.harness import expect


@check("shape")
@needs("module")
def test_output_shapes(kit, ex, init):
    """Output shape over batch 1 and >1, 1 and several tokens, fewer tokens than the context."""
    params = kit.weights(init)
    shapes = input_shapes(ex, init)
    xs = [kit.randn(*shape, salt=i) for i, shape in enumerate(shapes)]  # test_matches_reference_float64's calls:
    for shape, (outs, _) in zip(shapes, kit.runs([kit.call(init, [x], params=params) for x in xs])):  # run once
        want = output_shape(ex, init, shape)
        expect(tuple(outs[0].shape) == want, f"input {shape} gave output {tuple(outs[0].shape)}, expected {want}", "shape_mismatch")


@check("shape")
@needs("function")
def test_function_output_shapes(kit, ex):
    """output is (..., L, d_v) and weights (..., L, S), with or without batch dimensions."""
    c = ex.config
    leads = [(), (2,), (2, 3)]
    qkvs = [(kit.randn(*lead, c["L"], c["d_k"]), kit.randn(*lead, c["S"], c["d_k"], salt=1), kit.randn(*lead, c["S"], c["d_v"], salt=2))
            for lead in leads]
    for lead, (q, k, v), ((out, w), _) in zip(leads, qkvs, kit.runs([kit.call(None, list(qkv), n_outputs=2) for qkv in qkvs])):
        expect(tuple(out.shape) == (*lead, c["L"], c["d_v"]), f"output shape {tuple(out.shape)} for query {tuple(q.shape)}, value {tuple(v.shape)}; expected {(*lead, c['L'], c['d_v'])}", "shape_mismatch")
        expect(tuple(w.shape) == (*lead, c["L"], c["S"]), f"weights shape {tuple(w.shape)}, expected {(*lead, c['L'], c['S'])}", "shape_mismatch")
