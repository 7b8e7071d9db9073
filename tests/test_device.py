"""The second device the device checks run on: cuda:0 emulated with real values (grader/sandbox/emulated.py).

The emulation tests run everywhere, in this process (no worker: what they check is the mode itself). The tests
marked cuda run where PyTorch sees a GPU (tests/conftest.py skips them elsewhere, saying why): they hold the
emulation to real CUDA, error for error, and grade on the GPU.
"""
from __future__ import annotations

import math

import pytest
import torch

from grader.catalog import load_catalog
from grader.failures import code_of
from grader.runner import grade
from grader.sandbox import Limits, SubmissionError
from grader.sandbox.emulated import DEVICE, EmulatedDevice, OnDevice, to_device
from tests.conftest import CORPUS

SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


@pytest.fixture
def emu():
    return EmulatedDevice()


@pytest.fixture
def x(emu):
    with emu:
        return torch.arange(12, dtype=torch.float64).view(3, 4).to("cuda")


def raised(fn) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


class Causal(torch.nn.Module):
    """A mask as a registered buffer (moves with the module) and the same mask as a plain attribute (does not)."""

    def __init__(self, buffer: bool):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4, dtype=torch.float64)
        mask = torch.ones(3, 3, dtype=torch.bool).triu(1)
        if buffer:
            self.register_buffer("mask", mask)
        else:
            self.mask = mask

    def forward(self, x):
        scores = self.proj(x) @ x.transpose(-2, -1)
        return torch.softmax(scores.masked_fill(self.mask, float("-inf")), dim=-1) @ x


def test_tensors_report_the_device_and_keep_real_values(emu, x):
    with emu:
        assert x.device == DEVICE and x.is_cuda and x.get_device() == 0
        assert x.sum().item() == 66.0 and int(x.max()) + 1 == 12 and x[0].tolist() == [0.0, 1.0, 2.0, 3.0]
        assert float(x[1, 1]) == 5.0 and f"{x[2, 3]:.1f}" == "11.0"
        picked = x[x > 6.5]  # a data-dependent shape
        assert picked.shape == (5,) and picked.device == DEVICE and x.nonzero().shape == (11, 2)
        assert torch.arange(int(x.max()) + 1, device=x.device).device == DEVICE
        for made in (torch.zeros(2, device="cuda"), torch.ones(2, device=x.device), torch.full((2,), 1.0, device=DEVICE),
                     torch.tensor([1.0], device=x.device), torch.zeros_like(x), x.new_ones(2), torch.ones(2).to(x.device),
                     torch.ones(2).cuda(), torch.ones(2).type_as(x)):
            assert made.device == DEVICE, made
        assert torch.ones(2).device == torch.device("cpu")  # made without a device: on the CPU, as on a GPU machine
        host = x.cpu()
        assert type(host) is torch.Tensor and host.device == torch.device("cpu") and host.tolist() == x.tolist()
        assert x.to(x.device) is x and x.to(torch.float32).device == DEVICE and x.to("cpu").device == host.device
        assert "device='cuda:0'" in repr(x)


def test_under_the_mode_the_machine_has_a_gpu(emu):
    """torch.cuda.is_available() answers as a one-GPU machine does while the mode is active (however it was looked
    up, before or after), and gives torch's own answer again once it has exited, even by an exception."""
    from torch.cuda import is_available  # bound before the mode, as a submission's import would

    real = torch.cuda.device_count() > 0
    assert torch.cuda.is_available() == is_available() == real
    with emu:
        assert torch.cuda.is_available() and is_available()
        made = torch.ones(2, device="cuda" if torch.cuda.is_available() else "cpu")
        assert made.device == DEVICE and isinstance(made, OnDevice)
    assert torch.cuda.is_available() == real
    with pytest.raises(ZeroDivisionError):
        with emu:
            1 / 0
    assert torch.cuda.is_available() == real


def test_a_module_built_for_the_gpu_is_built_on_the_device(tmp_path):
    """A module that builds its layers and its mask with device="cuda" when a GPU is there is graded as a GPU machine
    would run it: constructed under the emulation, it passes the device check (on the CPU it is built on the CPU)."""
    v = grade(exercise=load_catalog().get("3"), path=CORPUS / "03/pass_when_cuda_available_init.py", device="cpu",
              limits=Limits(time_s=20), warm=True)
    assert v.passed, [(t.name, t.message) for t in v.failures()]


def test_mixing_devices_is_refused_with_cudas_errors(emu, x):
    with emu:
        cpu = torch.ones(3, 4, dtype=torch.float64)
        for fn in (lambda: x + cpu, lambda: cpu * x, lambda: x @ cpu.T, lambda: torch.cat([x, cpu]),
                   lambda: torch.where(cpu > 0, x, 0.0), lambda: x / torch.tensor([2.0], dtype=torch.float64)):
            exc = raised(fn)
            assert type(exc) is RuntimeError and str(exc) == SAME_DEVICE
        exc = raised(lambda: x.masked_fill(torch.ones(3, 4, dtype=torch.bool), 0.0))
        assert str(exc) == "expected self and mask to be on the same device, but got mask on cpu and self on cuda:0"
        assert "indices should be either on cpu" in str(raised(lambda: cpu[x.long()[0, :2]]))
        assert "can't convert cuda:0 device type tensor to numpy" in str(raised(lambda: x.numpy()))
        assert "invalid device ordinal" in str(raised(lambda: torch.zeros(1, device="cuda:1")))
        # what CUDA allows: CPU scalars (0-dim), CPU indices, copies across devices
        assert (x * torch.tensor(2.0, dtype=torch.float64)).device == DEVICE
        assert x[:, torch.tensor([0, 2])].shape == (3, 2) and x[torch.tensor([True, False, True])].shape == (2, 4)
        y = x.clone()
        y[0] = torch.zeros(4, dtype=torch.float64)
        y.copy_(cpu)
        assert y.device == DEVICE and y.sum().item() == 12.0


def test_an_advanced_assignment_is_index_put_and_refuses_values_from_another_device(emu, x):
    """x[index] = value: a copy (any devices) through ints and slices, index_put_ through a tensor or a list, whose
    values must be on x's device unless 0-dim (or one CPU value put through one boolean mask on x's device)."""
    with emu:
        cpu, rows = torch.ones(3, 4, dtype=torch.float64), torch.tensor([0, 2])

        def put(target, key, value):
            y = target.clone()
            y[key] = value
            return y

        for fn in (lambda: put(x, rows, cpu[:2]), lambda: put(x, torch.tensor([True, False, True]), cpu[:2]),
                   lambda: put(x, [0, 2], cpu[:2]), lambda: put(x, (slice(None), rows.to("cuda")), cpu[:, :2]),
                   lambda: put(cpu, rows, x[:2]), lambda: x.clone().index_put_((rows,), cpu[:2])):
            exc = raised(fn)
            assert type(exc) is RuntimeError and str(exc) == SAME_DEVICE
        assert str(raised(lambda: put(x, x > 6.5, torch.zeros(5, 1, dtype=torch.float64)))) == SAME_DEVICE  # 5 values
        scalar = torch.tensor(-1.0, dtype=torch.float64)
        for y in (put(x, rows, scalar), put(x, x > 6.5, torch.tensor([-1.0], dtype=torch.float64)), put(x, 0, cpu[0]),
                  put(x, (slice(None), slice(1, 3)), cpu[:, :2]), put(x, rows, x[:2] * 2),
                  x.clone().index_put_((rows,), x[:2]), torch.index_put(x, (rows,), scalar)):
            assert y.device == DEVICE
        assert put(cpu, 0, x[0]).device == torch.device("cpu")
        assert x.expand_as(cpu[None]).device == DEVICE and cpu.view_as(x).device == torch.device("cpu")


def test_a_refusal_says_whether_the_cpu_tensor_is_a_mask(emu, x):
    with emu:
        masks = [torch.ones(3, 4, dtype=torch.bool), torch.zeros(3, 4, dtype=torch.float64).fill_(float("-inf")).triu(1),
                 torch.zeros(3, 4, dtype=torch.float64).masked_fill(torch.ones(3, 4, dtype=torch.bool).triu(1), -1e9)]
        others = [torch.full((3, 1), math.sqrt(8.0), dtype=torch.float64), torch.arange(4, dtype=torch.float64)]
        for mask in masks:
            assert raised(lambda: x + mask)._device_operand == "mask"
        assert raised(lambda: torch.where(masks[0], x, 0.0))._device_operand == "mask"
        for other in others:
            assert raised(lambda: x / other)._device_operand == "tensor"


def test_module_to_moves_parameters_and_buffers_not_plain_attributes(emu):
    moved = to_device(Causal(buffer=True), emu)
    assert all(isinstance(p, OnDevice) and isinstance(p, torch.nn.Parameter) for p in moved.parameters())
    with emu:
        assert moved.proj.weight.device == DEVICE and moved.mask.device == DEVICE
        x = torch.randn(2, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0)).to("cuda")
        x.requires_grad_(True)
        out = moved(x)
        out.sum().backward()
        assert out.device == DEVICE and moved.proj.weight.grad is not None and x.grad is not None
    stuck = to_device(Causal(buffer=False), emu)
    with emu:
        assert stuck.mask.device == torch.device("cpu")
        exc = raised(lambda: stuck(x.detach()))
        assert "expected self and mask to be on the same device" in str(exc) and exc._device_operand == "mask"
    with torch.no_grad():
        reference = Causal(buffer=True)
        reference.load_state_dict(moved.state_dict())
        assert torch.equal(reference(x.detach().as_subclass(torch.Tensor)), out.detach().as_subclass(torch.Tensor))


def test_the_device_failure_code_says_whether_the_mask_is_on_the_cpu():
    def failure(message, operand=None):
        return code_of(SubmissionError({"type": "RuntimeError", "message": message, "device_operand": operand}))

    assert failure(SAME_DEVICE, "mask") == "mask_device_mismatch"
    assert failure(SAME_DEVICE, "tensor") == failure(SAME_DEVICE) == "device_mismatch"
    assert failure("expected self and mask to be on the same device, but got mask on cpu and self on cuda:0") == \
        "mask_device_mismatch"


def test_an_output_returned_on_the_cpu_fails_the_device_check(tmp_path):
    """Right values, wrong device: on a GPU the caller would get a CPU tensor where the reference gives a cuda one."""
    ex = load_catalog().get("1")
    text = ex.solution_path.read_text(encoding="utf-8")
    path = tmp_path / "cpu_output.py"
    path.write_text(text.replace("return att @ v", "return (att @ v).cpu()"), encoding="utf-8")
    assert path.read_text(encoding="utf-8") != text
    v = grade(exercise=ex, path=path, limits=Limits(time_s=20), warm=True)
    failed = [(t.name, t.message) for t in v.failures()]
    assert not v.passed and [d.id for d in v.diagnoses][:1] == ["tensor_on_cpu"], failed
    assert len(failed) == 1 and "output 0 is on cpu while the inputs are on cuda:0" in failed[0][1], failed


# -- on a real GPU ------------------------------------------------------------------------------------------
CASES = {  # name: (an op mixing a device tensor d with a CPU tensor c, whether CUDA's text is matched word for word)
    "add": (lambda d, c: d + c, True),
    "mul, CPU first": (lambda d, c: c * d, True),
    "where": (lambda d, c: torch.where(c > 0, d, 0.0), True),
    "masked_fill": (lambda d, c: d.masked_fill(c > 0, 0.0), True),
    "one-element scale": (lambda d, c: d / c[:1, :1], True),
    "matmul": (lambda d, c: d @ c.T, False),  # CUDA names the argument (mat2) here: same prefix, same failure code
    "cat": (lambda d, c: torch.cat([d, c]), False),
    "advanced assignment": (lambda d, c: d.clone().__setitem__(torch.tensor([0, 2]), c[:2]), False),
    "index_put_": (lambda d, c: d.clone().index_put_((torch.tensor([0, 2]),), c[:2]), False),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", CASES)
def test_emulated_errors_are_cudas(name):
    fn, exact = CASES[name]
    c = torch.arange(12, dtype=torch.float32).view(3, 4) - 5
    real = raised(lambda: fn(c.cuda(), c))
    emu = EmulatedDevice()
    with emu:
        d = c.to("cuda")
        emulated = raised(lambda: fn(d, c))
    assert type(emulated) is type(real)
    if exact:
        assert str(emulated) == str(real)
    as_error = {"type": "RuntimeError", "device_operand": getattr(emulated, "_device_operand", None)}
    assert code_of(SubmissionError({**as_error, "message": str(emulated)})).endswith("device_mismatch")
    assert code_of(SubmissionError({**as_error, "message": str(real)})).endswith("device_mismatch")


@pytest.mark.cuda
@pytest.mark.parametrize("buffer", [True, False], ids=["buffer", "plain attribute"])
def test_modules_move_as_on_cuda(buffer):
    """module.to(device): the same tensors move, and the module that fails on the GPU fails the same way emulated."""
    x = torch.randn(2, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    real, emu = Causal(buffer).cuda(), EmulatedDevice()
    moved = to_device(Causal(buffer), emu)
    moved.load_state_dict(real.state_dict())
    with emu:
        assert [t.device for t in moved.state_dict().values()] == [t.device for t in real.state_dict().values()]
    if buffer:
        with emu:
            got = moved(x.to("cuda"))
        assert torch.allclose(got.as_subclass(torch.Tensor), real(x.cuda()).cpu())
    else:
        with emu:
            emulated = raised(lambda: moved(x.to("cuda")))
        assert str(emulated) == str(raised(lambda: real(x.cuda())))


@pytest.mark.cuda
@pytest.mark.parametrize("ex", load_catalog().exercises, ids=lambda e: e.slug)
def test_solutions_pass_on_cuda(ex):
    v = grade(exercise=ex, path=ex.solution_path, device="cuda", limits=Limits(time_s=60), warm=True)
    assert v.passed and v.device == "cuda", [(t.name, t.message) for t in v.failures()]


DEVICE_FILES = ["01/scale_tensor_on_cpu.py", "03/mask_device_forward.py", "03/mask_device_attribute.py",
                "04/head_scale_on_cpu.py", "07/causal_mask_on_cpu.py", "11/theta_on_cpu.py", "11/pass_cache_by_max_position.py",
                "03/pass_when_cuda_available.py", "03/pass_when_cuda_available_init.py",
                "03/mask_device_when_cuda_available.py", "07/pass_when_cuda_available.py",
                "11/pass_when_cuda_available.py", "11/theta_on_cpu_when_cuda_available.py"]


@pytest.mark.cuda
@pytest.mark.parametrize("name", DEVICE_FILES)
def test_device_corpus_is_graded_alike_on_cuda(name):
    """Graded on a GPU machine (the device checks emulated, the CUDA checks on the GPU), the device corpus keeps its
    labels: the real GPU agrees with the emulation on what is right and what fails."""
    path = CORPUS / name
    label = path.read_text(encoding="utf-8").splitlines()[0].removeprefix("# expect: ").strip()
    v = grade(exercise=load_catalog().get(path.parent.name), path=path, device="cuda", limits=Limits(time_s=60), warm=True)
    assert (v.passed if label == "pass" else v.diagnoses[0].id == label), [d.id for d in v.diagnoses]

