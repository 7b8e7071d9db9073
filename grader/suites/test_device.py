import pytest
import torch

from grader.suites import ON_DEVICE, check, needs
from grader.probes import input_shapes
from grader.harness import compare


@check("device", evidence=ON_DEVICE)
@needs("module")
def test_runs_on_another_device(kit, ex):
    """After module.to(device) the module runs on a second device (cuda:0, emulated with real values where no GPU
    is): nothing in forward is pinned to the CPU, and the output is the one it gives on the CPU."""
    init = ex.config
    x, params = kit.randn(*input_shapes(ex, init)[0]), kit.weights(init)
    ((got,), _), ((cpu,), _) = kit.runs([kit.call(init, [x], params=params, device="emulated"), kit.call(init, [x], params=params)])
    compare(got, cpu, "on the device, the output (against your own output on the CPU)")


@check("device", evidence=ON_DEVICE)
@needs("function")
def test_function_runs_on_another_device(kit, ex):
    """The function runs on a second device, with the mask there too, and gives what it gives on the CPU."""
    c = ex.config
    q, k, v = kit.randn(2, c["L"], c["d_k"]), kit.randn(2, c["S"], c["d_k"], salt=1), kit.randn(2, c["S"], c["d_v"], salt=2)
    mask = torch.zeros(c["L"], c["S"], dtype=torch.bool)
    mask[:, -1] = True
    (got, _), (cpu, _) = kit.runs([kit.call(None, [q, k, v], {"mask": mask}, device="emulated", n_outputs=2),
                                   kit.call(None, [q, k, v], {"mask": mask}, n_outputs=2)])
    compare(got[0], cpu[0], "on the device, the output (against your own output on the CPU)")


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
