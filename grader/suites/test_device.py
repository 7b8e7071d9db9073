import pytest
import torch

from grader.suites import check, needs
from grader.probes import input_shapes, output_shape
from grader.harness import compare, expect


@check("device", evidence="mask_device")
@needs("module")
def test_runs_on_meta_device(kit, ex):
    """After .to('meta') the module runs on meta tensors: nothing in forward is pinned to the CPU."""
    init = ex.config
    shape = input_shapes(ex, init)[0]
    shapes, _ = kit.run(init, [kit.randn(*shape)], params=kit.weights(init), device="meta")
    want = output_shape(ex, init, shape)
    expect(shapes[0] == want, f"on the meta device, input {shape} gave output {shapes[0]}, expected {want}", "shape_mismatch")


@check("device", evidence="mask_device")
@needs("function")
def test_function_runs_on_meta_device(kit, ex):
    """The function runs on meta tensors, with a mask on the same device."""
    c = ex.config
    q, k, v = kit.randn(2, c["L"], c["d_k"]), kit.randn(2, c["S"], c["d_k"], salt=1), kit.randn(2, c["S"], c["d_v"], salt=2)
    mask = torch.zeros(c["L"], c["S"], dtype=torch.bool)
    shapes, _ = kit.run(None, [q, k, v], {"mask": mask}, device="meta", n_outputs=2)
    expect(shapes[0] == (2, c["L"], c["d_v"]), f"on the meta device the output shape is {shapes[0]}", "shape_mismatch")


@check("device")
@needs("cuda")
def test_matches_reference_on_cuda(kit, ex):
    """On the GPU, float32 and float16 results match the reference within dtype tolerances."""
    if ex.kind not in ("module", "function"):
        pytest.skip("custom call contract: the exercise's own suite has its CUDA test")
    for dtype in (torch.float32, torch.float16):
        if ex.kind == "module":
            init = ex.config
            params = kit.weights(init)
            x = kit.randn(*input_shapes(ex, init)[0])
            got, _ = kit.run(init, [x.to(dtype)], params=params, dtype=dtype, device="cuda")
            want, _ = kit.ref_run(init, [x], params=params)
        else:
            c = ex.config
            args = [kit.randn(2, c["L"], c["d_k"]), kit.randn(2, c["S"], c["d_k"], salt=1), kit.randn(2, c["S"], c["d_v"], salt=2)]
            got, _ = kit.run(None, [a.to(dtype) for a in args], dtype=dtype, device="cuda", n_outputs=2)
            want, _ = kit.ref_run(None, args)
        compare(got[0], want[0], f"CUDA {str(dtype)[6:]} output", dtype=dtype)
