"""A second device with real values: tensors that report cuda:0, compute on the CPU and refuse to mix as CUDA does.

Why a __torch_function__ mode and not a __torch_dispatch__ wrapper: a wrapper's TensorImpl must carry a device
PyTorch can guard, and a CPU-only build has no CUDA guard (autograd's InputMetadata aborts the process on the
first backward; float(t) and boolean indexing raise "not linked with support for cuda devices"). At the
torch-function level C++ sees ordinary CPU tensors, so autograd, .item(), data-dependent shapes and every kernel
behave as on the CPU, while the submission sees exactly the calls it makes: each is checked for mixed devices
with its own arguments (the op as written, as CUDA's kernels check it), and factory calls given the device are
caught before torch's bindings would try to initialise CUDA. The dispatcher below (and its kernel blocks) runs
unchanged, so a forbidden kernel is refused on emulated tensors as on any other.

It replaces the meta device the device checks used: meta tensors have no values, so code that reads one back
(.item(), int(positions.max()) + 1, a data-dependent shape) failed there although a GPU runs it, and every mix of
devices meta was made to refuse, this refuses too. Nothing is left where meta would be the more exact proxy.

While a mode is active the machine answers as a one-GPU machine does: torch.cuda.is_available() is True (the
function itself is replaced once, when this module is imported, by one that asks whether an emulation is active and
otherwise gives torch's answer), so `device = "cuda" if torch.cuda.is_available() else "cpu"` in a graded call picks
the emulated device as it would pick the GPU.

Only the worker uses this, around a run whose device is "emulated"; nothing here is reachable from a submission
(private names, no module handle: grader/policy.py).
"""
from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

DEVICE = torch.device("cuda", 0)
Tensor = torch.Tensor
_active: list["EmulatedDevice"] = []  # the modes entered and not yet exited


def _cuda_available(real=torch.cuda.is_available) -> bool:
    return bool(_active) or real()


if getattr(torch.cuda.is_available, "__name__", "") != "_cuda_available":  # once, before any submission binds it
    torch.cuda.is_available = _cuda_available


class OnDevice(Tensor):
    """A CPU tensor that the mode treats as living on DEVICE (outside the mode, a plain CPU tensor)."""

    __torch_function__ = torch._C._disabled_torch_function_impl


def _flat(obj, out: list) -> list:
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _flat(item, out)
    elif isinstance(obj, dict):
        for item in obj.values():
            _flat(item, out)
    return out


def _wrap(obj):
    """Every plain tensor in a result, as an OnDevice view of itself (autograd follows the alias)."""
    if isinstance(obj, Tensor):
        return obj if isinstance(obj, OnDevice) else obj.as_subclass(OnDevice)
    if isinstance(obj, (list, tuple)) and any(isinstance(o, Tensor) for o in obj):
        items = [_wrap(o) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    return obj


def _host(t: Tensor) -> Tensor:
    """A copy on the CPU, as .cpu() gives from a GPU."""
    with torch._C.DisableTorchFunction():
        return t.clone().as_subclass(Tensor)


def _device(value) -> torch.device | None:
    """DEVICE, the CPU, or None for "not given"; another CUDA index is refused as on a one-GPU machine."""
    if value is None:
        return None
    if isinstance(value, OnDevice):
        return DEVICE
    if isinstance(value, Tensor):
        return torch.device("cpu")
    d = torch.device(value) if not isinstance(value, int) else torch.device("cuda", value)
    if d.type == "cuda":
        if d.index not in (None, 0):
            raise RuntimeError("CUDA error: invalid device ordinal")
        return DEVICE
    return d


def where(t: Tensor) -> str:
    return "cuda:0" if isinstance(t, OnDevice) else "cpu"


def is_mask(t: Tensor) -> bool:
    """A boolean tensor, or an additive mask (zeros and large negative numbers, -inf included)."""
    if t.dtype == torch.bool:
        return True
    if not t.is_floating_point() or t.numel() == 0:
        return False
    with torch._C.DisableTorchFunction():
        blocked = t <= -1e4
        return bool(blocked.any()) and bool(((t == 0) | blocked).all())


def refuse(message: str, cpu: Tensor, op: str) -> RuntimeError:
    """CUDA's error, carrying what the grader's diagnosis reads: whether the CPU tensor is a mask (private names:
    a submission cannot read them)."""
    exc = RuntimeError(message)
    exc._device_operand = "mask" if is_mask(cpu) else "tensor"
    exc._device_op = op
    return exc


SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
GETTERS = {Tensor.device.__get__: lambda t: DEVICE, Tensor.is_cuda.__get__: lambda t: True,
           Tensor.is_cpu.__get__: lambda t: False, Tensor.get_device: lambda t: 0}
INDEXING = {Tensor.__getitem__}  # advanced indexing: CUDA moves CPU indices to the device
COPIES = {Tensor.copy_, torch._has_compatible_shallow_copy_type}  # across devices, as on CUDA
MASKED_FILL = {Tensor.masked_fill, Tensor.masked_fill_, torch.masked_fill}
INDEX_PUT = {Tensor.index_put_, Tensor.index_put, torch.index_put, torch.index_put_}  # (self, indices, values)
SHAPE_OF = {Tensor.expand_as, Tensor.view_as, Tensor.reshape_as}  # other's shape only: CUDA takes it from any device


def _advanced(key) -> bool:
    """Whether x[key] is advanced indexing (index_put_ when assigned): a tensor index of one or more dimensions
    or a list; ints, slices, None, Ellipsis and 0-dim tensors select, and an assignment through them is a copy."""
    items = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, list) or (isinstance(k, Tensor) and k.dim() > 0) for k in items)


def _fills(self: Tensor, key, value: Tensor) -> bool:
    """index_put_'s shortcut to masked_fill_: one boolean mask on self's device and one CPU value."""
    items = [k for k in (key if isinstance(key, tuple) else (key,)) if k is not None and k is not Ellipsis
             and not isinstance(k, slice)]
    return (value.numel() == 1 and not isinstance(value, OnDevice) and len(items) == 1 and isinstance(items[0], Tensor)
            and items[0].dtype in (torch.bool, torch.uint8) and where(items[0]) == where(self))


def _index_put_values(self: Tensor, key, value, op: str) -> None:
    """index_put_'s values come from self's device, as CUDA requires (but for its masked_fill_ shortcut, _fills)."""
    if (isinstance(value, Tensor) and value.dim() > 0 and where(value) != where(self)
            and not _fills(self, key, value)):
        raise refuse(SAME_DEVICE, value if where(value) == "cpu" else self, op)


class EmulatedDevice(TorchFunctionMode):
    """While active: OnDevice tensors report DEVICE, an op mixing them with a CPU tensor (other than a 0-dim CPU
    scalar) raises CUDA's RuntimeError, and anything created or moved with device=DEVICE is OnDevice."""

    def __enter__(self):
        _active.append(self)
        try:
            return super().__enter__()
        except BaseException:
            _active.pop()
            raise

    def __exit__(self, *exc):
        try:
            return super().__exit__(*exc)
        finally:
            _active.remove(self)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in GETTERS and args and isinstance(args[0], OnDevice):
            return GETTERS[func](args[0])
        if func is Tensor.to:
            return self.to(args[0], args[1:], kwargs)
        if func is Tensor.cuda:
            return self.move(args[0], DEVICE, {})
        if func is Tensor.cpu:
            return _host(args[0]) if isinstance(args[0], OnDevice) else func(*args, **kwargs)
        if func is Tensor.type_as and len(args) > 1:
            return self.move(args[0].to(args[1].dtype), _device(args[1]), {})
        if func in (Tensor.__repr__, Tensor.__str__) and isinstance(args[0], OnDevice):
            return self.show(args[0])
        if func is Tensor.__format__ and isinstance(args[0], OnDevice):
            return args[0].item().__format__(*args[1:]) if args[0].dim() == 0 else self.show(args[0])
        if func is Tensor.numpy and args and isinstance(args[0], OnDevice):
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                            "host memory first.")
        if func in SHAPE_OF and len(args) > 1:
            out = func(*args, **kwargs)
            return _wrap(out) if isinstance(args[0], OnDevice) else out
        tensors = _flat((args, kwargs), [])
        on = any(isinstance(t, OnDevice) for t in tensors)
        target = _device(kwargs.get("device"))
        if on and getattr(func, "__name__", "") != "__set__":
            self.check(func, args, kwargs, tensors)
        if target == DEVICE:
            kwargs = {**kwargs, "device": "cpu"}
        out = func(*args, **kwargs)
        if target == DEVICE or (on and target is None):
            return _wrap(out)
        return out

    def show(self, t: OnDevice) -> str:
        """As torch prints a CUDA tensor: the values, then device='cuda:0' before the other details."""
        with torch._C.DisableTorchFunction():
            text = repr(t.as_subclass(Tensor))
        cut = min([i for i in (text.find(", dtype="), text.find(", grad_fn="), text.find(", requires_grad=")) if i > 0]
                  or [len(text) - 1])
        return f"{text[:cut]}, device='cuda:0'{text[cut:]}"

    def check(self, func, args, kwargs: dict, tensors: list[Tensor]) -> None:
        name = getattr(func, "__name__", str(func))
        if func in MASKED_FILL and len(args) > 1 and isinstance(args[1], Tensor) and where(args[0]) != where(args[1]):
            cpu = args[0] if isinstance(args[1], OnDevice) else args[1]
            raise refuse(f"expected self and mask to be on the same device, but got mask on {where(args[1])} and self "
                         f"on {where(args[0])}", cpu, name)
        if func in INDEXING:
            if not isinstance(args[0], OnDevice):
                raise RuntimeError("indices should be either on cpu or on the same device as the indexed tensor (cpu)")
            return
        if func in COPIES:
            return
        if func is Tensor.__setitem__ and len(args) > 2:  # a copy, unless the index is advanced: index_put_
            if _advanced(args[1]):
                _index_put_values(*args[:3], name)
            return
        if func in INDEX_PUT and len(args) > 1:  # the indices may be on either device (moved to self's), not values
            _index_put_values(args[0], tuple(args[1]), args[2] if len(args) > 2 else kwargs.get("values"), name)
            return
        cpu = [t for t in tensors if not isinstance(t, OnDevice) and t.dim() > 0]
        if cpu:
            raise refuse(SAME_DEVICE, cpu[0], name)

    def to(self, t: Tensor, rest: tuple, kwargs: dict):
        """Tensor.to(device?, dtype?, non_blocking?, copy?, memory_format?) or .to(other)."""
        other = rest[0] if rest and isinstance(rest[0], Tensor) else kwargs.get("other")
        if other is not None:
            return self.move(t.to(other.dtype), _device(other), {})
        device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*rest, **kwargs)
        options = {k: v for k, v in (("dtype", dtype), ("memory_format", memory_format)) if v is not None}
        if kwargs.get("copy"):
            options["copy"] = True
        return self.move(t, _device(device), options)

    def move(self, t: Tensor, device: torch.device | None, options: dict) -> Tensor:
        here = DEVICE if isinstance(t, OnDevice) else torch.device("cpu")
        device = device or here
        with torch._C.DisableTorchFunction():
            out = t.to(**options) if options else t
            if device == here:
                return _wrap(out) if here == DEVICE else out
            if device == DEVICE:
                return (out.clone() if out is t else out).as_subclass(OnDevice)
            if device.type != "cpu":
                return out.to(device)  # meta and the like: as torch would
        return _host(out) if out is t else out.as_subclass(Tensor)


def to_device(module: torch.nn.Module, mode: EmulatedDevice) -> torch.nn.Module:
    """module.to("cuda") under the mode: parameters and registered buffers move, plain attributes stay on the CPU.
    Parameters are replaced rather than updated in place (torch's own option for conversions that change a
    tensor's type), so each becomes an OnDevice parameter."""
    before = torch.__future__.get_overwrite_module_params_on_conversion()
    torch.__future__.set_overwrite_module_params_on_conversion(True)
    try:
        with mode:
            return module.to("cuda")
    finally:
        torch.__future__.set_overwrite_module_params_on_conversion(before)
