"""The sandbox worker: the only process that runs submission code.

It holds no reference solution and no hidden test. It answers requests from the grader
(import the submission, describe an entry point, run it on tensors the grader sends) and
returns plain tensors. Anything it sends back is treated by the grader as untrusted data.

Usage (by the grader only): python -I -m grader.sandbox.worker SUBMISSION.py REQUEST_FD RESPONSE_FD
"""
from __future__ import annotations

import contextlib
import encodings
import faulthandler
import functools
import importlib.util
import inspect
import io
import json
import operator
import os
import pkgutil
import sys
import traceback
import types

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from grader.sandbox import isolation, view
from grader.sandbox.emulated import DEVICE, EmulatedDevice, OnDevice, to_device, where
from grader.sandbox.limits import Limits
from grader.sandbox.protocol import BATCHED, READY, STACK_SIGNAL, decode, encode, read_frame, safetensors_bytes
from grader.sandbox.scoreflow import ScoreFlow
from grader.sandbox.trace import Tracer

DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
MAX_MESSAGE = 600


def seed_all(seed: int, device: torch.device) -> None:
    """Seed the generators this run uses (torch.manual_seed would also queue CUDA seeding, slowly)."""
    if device.type == "cuda":
        torch.manual_seed(seed)
    else:
        torch.default_generator.manual_seed(seed)


class _LazyDynamo(types.ModuleType):
    """Stands in for torch._dynamo, whose import costs about a second.

    torch wraps some of its Python functions (decompositions, among others) in a call to
    torch._dynamo.disable(fn), which only matters while torch.compile is tracing; the
    worker never compiles, so that call may return fn. Anything else imports the real module.
    """

    def disable(self, fn=None, recursive=True, **kwargs):
        return fn if fn is not None else (lambda f: f)

    def __getattr__(self, name):
        del sys.modules["torch._dynamo"]
        real = importlib.import_module("torch._dynamo")
        return getattr(real, name)


# what a forbidden API's name looks like among torch functions (__name__) and dispatcher ops (name())
KERNELS = {"scaled_dot_product_attention": "scaled_dot_product", "MultiheadAttention": "multi_head_attention",
           "multi_head_attention_forward": "multi_head_attention"}


def pattern(api: str) -> str:
    name = api.rsplit(".", 1)[-1]
    return KERNELS.get(name, name)


# The dispatcher's kernels behind a forbidden API, replaced in this worker by one that refuses: unlike the torch
# function mode below, a submission that switched the Python-level watch off still meets these (SECURITY.md,
# layer 4). These are refused under these keys whether or not this build has a kernel there (CUDA ones on a CPU
# build); besides them, every op whose name holds a KERNELS pattern is refused wherever it has a kernel (op_kernels).
KERNEL_BLOCKS = {
    "scaled_dot_product_attention": [
        ("scaled_dot_product_attention", "CompositeImplicitAutograd"),
        ("_scaled_dot_product_attention_math", "CompositeImplicitAutograd"),
        ("_scaled_dot_product_flash_attention_for_cpu", "CPU"),
        ("_scaled_dot_product_flash_attention_for_cpu_backward", "CPU"),
        ("_scaled_dot_product_flash_attention", "CUDA"), ("_scaled_dot_product_efficient_attention", "CUDA"),
        ("_scaled_dot_product_cudnn_attention", "CUDA"),
    ],
}
KERNEL_BLOCKS["MultiheadAttention"] = KERNEL_BLOCKS["multi_head_attention_forward"] = [
    ("_native_multi_head_attention", "CPU"), ("_native_multi_head_attention", "CUDA")]
BACKENDS = ("CPU", "CUDA", "HIP", "XLA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "MTIA", "MAIA", "PrivateUse1",
            "PrivateUse2", "PrivateUse3", "Meta")
# every key a call can end at (a backend kernel of any layout, or a composite one), and autograd's: wherever an op is
# called from, whatever mode or transform runs above, it reaches one of these
BLOCK_KEYS = ("Autograd", "CompositeImplicitAutograd", "CompositeImplicitAutogradNestedTensor", "CompositeExplicitAutograd",
              "CompositeExplicitAutogradNonFunctional",
              *(layout + backend for layout in ("", "Quantized", "Sparse", "SparseCsr", "NestedTensor") for backend in BACKENDS))


@functools.cache
def op_kernels(pattern: str) -> tuple[tuple[str, str, str], ...]:
    """(namespace, op.overload, dispatch key) of every kernel, under BLOCK_KEYS, of every registered op whose name
    holds pattern. What a dispatch mode matching op names would have seen, found once per process (warm_up does it
    for KERNELS in the fork server: the search costs ~20 ms, a worker's registration of its results ~1 ms)."""
    keys = [(key, getattr(torch._C.DispatchKey, key)) for key in BLOCK_KEYS if hasattr(torch._C.DispatchKey, key)]
    found = []
    for name in sorted(torch._C._dispatch_get_all_op_names()):
        if pattern not in name:
            continue
        namespace, op = name.split("::", 1)
        found += [(namespace, op, key) for key, k in keys if torch._C._dispatch_has_kernel_for_dispatch_key(name, k)]
    return tuple(found)


def block_kernels(forbidden: list[str], used: set[str]) -> None:
    """Replace the kernels behind the forbidden APIs with one that records the call and refuses: those of
    KERNEL_BLOCKS and, for the fused attention APIs (KERNELS), every kernel of an op whose name holds the API's
    pattern (op_kernels). The registrations are leaked on purpose and never reachable from Python (no Library
    wrapper, whose finalizer or _destroy() would undo them, and no reference that gc.get_objects() could find)."""
    import ctypes
    import warnings

    blocks = {("aten", op, key): api for api in forbidden for op, key in KERNEL_BLOCKS.get(api.rsplit(".", 1)[-1], [])}
    for api in forbidden:
        for kernel in op_kernels(pattern(api)) if pattern(api) in KERNELS.values() else ():
            blocks.setdefault(kernel, api)
    registrations = {}
    for (namespace, op, key), api in blocks.items():
        if namespace not in registrations:
            registrations[namespace] = torch._C._dispatch_library("IMPL", namespace, "", __file__, 0)

        def refuse(*args, _api=api, _op=f"{namespace}::{op}", **kwargs):
            used.add(_api)
            raise ForbiddenAPI(f"forbidden_api: {_api} is not allowed in this exercise (called at run time as {_op})")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "overriding a previously registered kernel": that is the point
            try:
                registrations[namespace].impl(op, key, refuse, False)
            except (RuntimeError, ValueError):  # an op or key this build of torch does not have
                continue
    for registration in registrations.values():
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(registration))  # lives as long as the worker, unreachable


class ForbiddenAPI(Exception):
    """The submission called an API its exercise forbids (found at run time, however it was reached)."""


# Torch calls that run a Python callable from C++ (apply_, map_, map2_) or the autograd engine (which runs tensor
# hooks and autograd.Function.backward): a torch function mode's handler runs its call with the mode popped, so what
# the callable does would escape every mode of the worker (this watch, the emulated device). Refused inside a
# graded call; the worker runs its own backward through the engine directly (run_backward), under the modes.
CALLBACK_RUNNERS = {torch._C.TensorBase.apply_: "apply_()", torch._C.TensorBase.map_: "map_()",
                    torch._C.TensorBase.map2_: "map2_()", torch.Tensor.backward: "backward()",
                    torch.autograd.backward: "torch.autograd.backward()", torch.autograd.grad: "torch.autograd.grad()"}
_RUN_BACKWARD = torch.autograd.Variable._execution_engine.run_backward
_GRAD = torch._C.TensorBase.grad.__get__  # a tensor's .grad, whatever its class defines


def run_backward(loss: torch.Tensor) -> None:
    """loss.backward(), without the torch-function dispatch that would pop the modes the hooks must run under."""
    _RUN_BACKWARD((loss,), (torch.ones_like(loss),), False, False, (), True, True)


# What a graded call may hand to torch: tensors of torch's own classes, numbers, strings, dtypes, devices, sizes and
# slices, through plain lists, tuples and dicts. Anything else (an object of the submission's own class, a deque, a
# namedtuple, a function) is refused: torch would run its methods (__len__, __getitem__, __index__, __eq__ ...)
# from C++ with this watch and every other mode popped (x in h, torch.tensor(deque([h]))). Exact types: a subclass
# can claim any __module__.
PLAIN_VALUES = frozenset({int, float, bool, complex, str, bytes, type(None), type(Ellipsis), torch.dtype, torch.device,
                          torch.layout, torch.memory_format, torch.Generator, torch.Tensor,
                          torch.nn.Parameter, OnDevice, torch.finfo, torch.iinfo})
CONTAINERS = frozenset({list, tuple, torch.Size})


def _foreign(values, depth: int = 0) -> type | None:
    """The type of the first value in values (a call's arguments) a graded call may not hand to torch, or None."""
    for v in values:
        kind = type(v)
        if kind in CONTAINERS:  # a torch.Size too: it keeps the objects it was built from (an int subclass's)
            if depth >= 4:
                return kind
            if (inner := _foreign(v, depth + 1)) is not None:
                return inner
        elif kind is dict:
            if depth >= 4 or not all(type(k) is str for k in v):
                return kind
            if (inner := _foreign(tuple(v.values()), depth + 1)) is not None:
                return inner
        elif kind is slice:
            if (inner := _foreign((v.start, v.stop, v.step), depth + 1)) is not None:
                return inner
        elif kind not in PLAIN_VALUES:
            return kind
    return None


class Watch(TorchFunctionMode):
    """Records (and refuses) calls of the exercise's forbidden APIs while the submission runs, at the torch-function
    level (F.scaled_dot_product_attention, F.multi_head_attention_forward, however they were looked up) and, for a
    forbidden name other than the fused attention APIs, at the dispatcher (aten ops named like it).

    The fused attention APIs' ops are refused beneath it by their kernels (block_kernels: every op named like them,
    in C++, whether or not the submission runs): a dispatch mode watching op names did the same in Python, at ~10 us
    per op of every call, more than a third of a worker's CPU in a grade."""

    def __init__(self, forbidden: list[str], used: set[str]):
        super().__init__()
        self.patterns = {pattern(name): name for name in forbidden}
        self.used = used
        self.dispatch = _DispatchWatch(self) if set(self.patterns) - set(KERNELS.values()) else None

    def match(self, name: str) -> None:
        for pattern, api in self.patterns.items():
            if pattern in name:
                self.used.add(api)
                raise ForbiddenAPI(f"forbidden_api: {api} is not allowed in this exercise (called at run time as {name})")

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in CALLBACK_RUNNERS:
            raise RuntimeError(f"{CALLBACK_RUNNERS[func]} is not allowed in a graded call: the callable it runs "
                               "would escape the grader's checks")
        if (kind := _foreign(args) or (_foreign(tuple(kwargs.values())) if kwargs else None)) is not None:
            raise RuntimeError(f"{getattr(func, '__name__', 'a torch call')}() was given a {kind.__name__}: a graded "
                               "call may hand torch only tensors, numbers, strings, dtypes, devices and plain lists, "
                               "tuples and dicts of them (torch would run its methods beyond the grader's checks)")
        self.match(getattr(func, "__name__", ""))
        return func(*args, **(kwargs or {}))

    def __enter__(self):
        super().__enter__()
        if self.dispatch is not None:
            self.dispatch.__enter__()
        return self

    def __exit__(self, *exc):
        if self.dispatch is not None:
            self.dispatch.__exit__(*exc)
        return super().__exit__(*exc)


class _DispatchWatch(TorchDispatchMode):
    def __init__(self, watch: Watch):
        super().__init__()
        self.watch = watch

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.watch.match(func.name())
        return func(*args, **(kwargs or {}))


# The C methods the rule checks call, taken before any submission is imported: changing torch.Tensor's
# attributes afterwards (the policy refuses it; arbitrary code could) does not change what they measure.
_NUMEL = torch._C.TensorBase.numel
_SIZE = torch._C.TensorBase.size
_STORAGE = torch._C.TensorBase.untyped_storage
_ELEMENT_SIZE = torch._C.TensorBase.element_size


def _storage_numel(t: torch.Tensor) -> int:
    """How many elements t's storage holds: a view's whole buffer, not the view (0 for a tensor without one)."""
    try:
        return _STORAGE(t).nbytes() // max(1, _ELEMENT_SIZE(t))
    except (RuntimeError, NotImplementedError, TypeError):
        return 0


class Largest(TorchDispatchMode):
    """Records the largest tensor any op creates while the submission runs (a suite asks for it with
    "largest": true, to check that a tiled implementation never holds more than a tile of scores)."""

    def __init__(self, tile: tuple[int, int] | None = None, flow: ScoreFlow | None = None):
        super().__init__()
        self.numel, self.shape = 0, []
        self.tile = tile  # (rows, inner): a tensor wider than rows in one of its last two dims and wider than
        self.strip: list[int] = []  # inner in the other is a strip of scores, whatever its element count
        self.flow = flow  # the query's and the key's positions, followed through every op (scores by data flow)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.flow is not None:
            self.flow.after(func, args, kwargs or {}, out)
            if self.flow.wide is not None:  # found: the call ends here (and at every op after, if it is caught)
                raise WideScores("scores over more positions than a tile were computed at once")
        outs = [t for t in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(t, torch.Tensor)]
        for t in [*outs, *(a for a in args if isinstance(a, torch.Tensor))]:
            # a view of a larger buffer counts as the buffer (scores written into slices of a matrix allocated at
            # import, or read back through as_strided, still make the matrix exist)
            if (whole := _storage_numel(t)) > max(self.numel, _NUMEL(t)):
                self.numel, self.shape = whole, [whole]
        for t in outs:
            numel, shape = _NUMEL(t), list(_SIZE(t))
            if numel > self.numel:
                self.numel, self.shape = numel, shape
            if self.tile and len(shape) >= 2 and not self.strip:
                (r, c), (rows, inner) = shape[-2:], self.tile
                if (c > rows and r > inner) or (r > rows and c > inner):
                    self.strip = shape
        return out


class WideScores(RuntimeError):
    """Raised by the largest-tensor probe once its data flow has found scores wider than a tile."""


# what Module.to() runs of a module's own classes: a module whose class (below nn.Module) defines one is moved as before
MOVED_THROUGH = frozenset({"to", "_apply", "children", "named_children", "__getattr__", "__getattribute__",
                           "__setattr__", "__delattr__", "__dict__"})
_DEVICE = torch._C.TensorBase.device.__get__  # a tensor's device, whatever its class defines
MAX_MODULES = 256


def stays(module, device: torch.device) -> bool:
    """Whether module.to(device) would change nothing and run none of the submission's code, so run() leaves it out:
    device is the CPU, every module of the tree appears once, is of a class that defines none of MOVED_THROUGH, and
    holds only plain CPU tensors (Module.to then returns each as it is, and sets each parameter's data to itself).
    Anything else (a tensor subclass, another device, a submodule twice or in a cycle, a tree it cannot read) is
    moved by to() as before. Called under the watch, as to() was (a class's __mro__ or vars() could be its own)."""
    if device.type != "cpu" or torch.__future__.get_overwrite_module_params_on_conversion() \
            or torch.__future__.get_swap_module_params_on_conversion():
        return False
    seen, todo = set(), [module]
    while todo:
        m = todo.pop()
        if id(m) in seen or len(seen) >= MAX_MODULES:
            return False
        seen.add(id(m))
        for cls in type(m).__mro__:
            if cls is torch.nn.Module:
                break
            if not MOVED_THROUGH.isdisjoint(vars(cls)):
                return False
        else:
            return False
        state = object.__getattribute__(m, "__dict__")
        parts = [state.get(name) for name in ("_parameters", "_buffers", "_modules")]
        if not all(type(part) is dict for part in parts):
            return False
        for name, kind in (("_parameters", torch.nn.Parameter), ("_buffers", torch.Tensor)):
            for t in state[name].values():
                if t is not None and (type(t) is not kind or _DEVICE(t).type != "cpu"):
                    return False
        todo += [child for child in state["_modules"].values() if child is not None]
    return True


PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter, OnDevice)  # OnDevice: the emulated device's own, not a submission's


def plain_outputs(result) -> list[torch.Tensor]:
    """A call's outputs: one tensor, or a plain tuple or list of tensors, checked by exact type inside the call's
    guards. A subclass of list, tuple or Tensor could run the submission's own code later (an __iter__, a
    property, an overridden detach), after the forbidden-API watch and the device and memory probes had ended."""
    outs = list(result) if type(result) in (tuple, list) else [result]
    if not all(type(o) in PLAIN_TENSORS for o in outs):
        kinds = ", ".join(type(o).__name__ for o in outs) if type(result) in (tuple, list) else type(result).__name__
        raise TypeError(f"expected tensor output(s): a tensor, or a plain tuple or list of tensors; got {kinds}")
    return outs


# The classes whose attributes the worker itself looks up after a graded call has returned (detaching and copying the
# outputs, the gradient pass): a submission that changed one (a method rebound through an alias of its own class,
# Alias.put(torch.Tensor, f)) would have its code run there, beneath no guard. Their tables are kept before the
# submission is imported and compared, by identity, after everything it runs.
GUARDED_CLASSES = (torch.Tensor, torch.nn.Parameter, torch.nn.Module, OnDevice)
_ABSENT = object()


class Unchanged:
    """The attribute tables of GUARDED_CLASSES as they were before the submission ran."""

    def __init__(self, classes=GUARDED_CLASSES):
        self.tables = [(cls, vars(cls), dict(vars(cls))) for cls in classes]
        self.order = [(live, tuple(kept), tuple(kept.values())) for _, live, kept in self.tables]

    def same(self) -> bool:
        """Every table holds the same names, in the same order, bound to the same objects: compared by identity in C
        (it runs after every call). False is not a verdict: changed() then looks name by name."""
        try:
            return all(len(live) == len(names) and all(map(operator.is_, live, names))
                       and all(map(operator.is_, live.values(), values)) for live, names, values in self.order)
        except RuntimeError:  # a table changed size while it was read
            return False

    def changed(self) -> str | None:
        """The first attribute of theirs that was changed, added or removed since (None: none was)."""
        if self.same():
            return None
        for cls, live, kept in self.tables:
            if len(live) != len(kept) or any(live.get(name, _ABSENT) is not value for name, value in kept.items()):
                names = [n for n in set(live) | set(kept) if type(n) is str and live.get(n, _ABSENT) is not kept.get(n, _ABSENT)]
                return f"{cls.__name__}.{min(names) if names else '?'}"
        return None


class Worker:
    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        self.module = None
        self.forbidden: list[str] = []  # the exercise's forbidden APIs, sent with the load request
        self.used: set[str] = set()  # those the submission called
        self.watch: Watch | None = None  # built from forbidden before the submission is imported
        self.unchanged: Unchanged | None = None  # the library classes' tables, kept before it is imported

    # -- error reporting ------------------------------------------------------------------
    def error(self, exc: BaseException) -> dict:
        line = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if os.path.abspath(frame.filename) == self.path:
                line = frame.lineno
        if isinstance(exc, SyntaxError) and exc.filename and os.path.abspath(exc.filename) == self.path:
            line = exc.lineno
        try:  # an exception of the submission's own class runs its __str__ here: watched, as its forward was
            with self.guarded():
                text = str(exc).strip()
        except BaseException:
            text = f"{type(exc).__name__} (its message could not be shown)"
        message = text.splitlines()[0] if text else ""
        return {
            "ok": False,
            "error": {
                "type": type(exc).__name__,
                "message": message[:MAX_MESSAGE],
                "line": line,
                "not_implemented": isinstance(exc, NotImplementedError),
                "memory": "can't allocate memory" in text or isinstance(exc, MemoryError),
                # "mask" or "tensor": what was on the CPU, set by the emulated device on torch's own RuntimeError
                # only (read from its __dict__: a submission's class would run a property here, unwatched)
                "device_operand": exc.__dict__.get("_device_operand") if type(exc) is RuntimeError else None,
            },
        }

    # -- requests -------------------------------------------------------------------------
    def load(self, req, tensors):
        """Compile exactly the text the grader's policy checked (sent with the request), as a str."""
        self.forbidden = [f for f in req.get("forbidden") or [] if isinstance(f, str)]
        self.watch = Watch(self.forbidden, self.used)  # with no forbidden API too: it refuses CALLBACK_RUNNERS
        self.unchanged = Unchanged()
        block_kernels(self.forbidden, self.used)
        text = bytes(tensors["source"].numpy()).decode("utf-8")
        module = types.ModuleType("submission")
        module.__file__ = self.path
        sys.modules["submission"] = module
        code = compile(text, self.path, "exec", dont_inherit=True)
        exec(code, module.__dict__)
        self.module = module
        return {"ok": True}, {}

    def guarded(self):
        """The forbidden-API watch, for the submission's code a graded call runs before its forward (__init__, the
        Module methods it may override): what it computes there could be kept for the forward to return."""
        return self.watch or contextlib.nullcontext()

    def intact(self) -> None:
        """After the submission ran: the library classes the worker reads are as they were, or it is refused for good
        (as a forbidden API is: every later answer says so)."""
        changed = self.unchanged.changed() if self.unchanged is not None else None
        if changed:
            self.used.add(f"a change to {changed}")
            raise ForbiddenAPI(f"forbidden_api: changing {changed} at run time is not allowed (a library class)")

    def entry(self, name):
        if self.module is None:
            raise RuntimeError("the submission was not loaded")
        if not hasattr(self.module, name):
            raise AttributeError(f"the submission defines no {name!r}")
        return getattr(self.module, name)

    def describe(self, req, tensors):
        obj = self.entry(req["entry"])
        info = {"ok": True, "is_class": isinstance(obj, type), "callable": callable(obj)}
        try:
            params = inspect.signature(obj).parameters.values()
            info["parameters"] = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        except (TypeError, ValueError):
            info["parameters"] = None
        if info["is_class"]:
            info["is_module"] = issubclass(obj, torch.nn.Module)
        if req.get("init") is not None:
            with self.guarded():
                module = self.construct(obj, req["init"], req.get("seed", 0))
                info["params"] = {n: list(p.shape) for n, p in module.named_parameters()}
                info["buffers"] = {n: [list(b.shape), str(b.dtype)] for n, b in module.named_buffers()}
                info["forward_parameters"] = [p for p in inspect.signature(module.forward).parameters]
        return info, {}

    def construct(self, cls, init, seed):
        seed_all(seed, torch.device("cpu"))
        module = cls(**init)
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"{cls.__name__}(...) did not build a torch.nn.Module")
        return module

    def construct_raises(self, req, tensors):
        try:
            with self.guarded():
                self.construct(self.entry(req["entry"]), req["init"], 0)
        except Exception as exc:  # the contract asks for an exception, any kind
            return {"ok": True, "raised": type(exc).__name__}, {}
        return {"ok": True, "raised": None}, {}

    def load_params(self, module, tensors):
        own = dict(module.named_parameters())
        given = {k[len("param.") :]: v for k, v in tensors.items() if k.startswith("param.")}
        missing = sorted(set(given) - set(own))
        extra = sorted(set(own) - set(given))
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing parameter(s) " + ", ".join(missing))
            if extra:
                parts.append("unexpected parameter(s) " + ", ".join(extra))
            raise LookupError("; ".join(parts))
        with torch.no_grad():
            for name, param in own.items():  # in the module's order, not the frame's (its decoder's hash order,
                value = given[name]  # which changes from one worker process to the next)
                if tuple(param.shape) != tuple(value.shape):
                    raise ValueError(f"parameter {name} has shape {tuple(param.shape)}, expected {tuple(value.shape)}")
                param.copy_(value)

    def run(self, req, tensors):
        dtype = DTYPES[req.get("dtype", "float64")]
        emulated = EmulatedDevice() if req.get("device") == "emulated" else None  # cuda:0, computed on the CPU
        device = torch.device("cpu" if emulated else req.get("device", "cpu"))
        seed = req.get("seed", 0)
        obj = self.entry(req["entry"])
        params = {}
        if req.get("init") is not None:
            # its __init__, and any Module method it overrides (train, to, named_parameters), watched; emulated, it is
            # built as on a GPU machine (torch.cuda.is_available() is True, device="cuda" makes device tensors)
            with emulated or contextlib.nullcontext(), self.guarded():
                fn = self.construct(obj, req["init"], seed)
            with self.guarded():
                fn = fn.to(dtype=dtype)  # before loading: no float32 rounding
                self.load_params(fn, tensors)
                fn = to_device(fn, emulated) if emulated else fn if stays(fn, device) else fn.to(device)
                fn.train(bool(req.get("train", False)))
                params = dict(fn.named_parameters())
        else:
            fn = obj

        def put(t):
            return emulated.move(t, DEVICE, {}) if emulated else t.to(device)

        def arg(name):
            t = tensors[name]
            if t.is_floating_point():
                t = t.to(dtype)
            t = put(t)
            if req.get("grad") and t.is_floating_point():
                t.requires_grad_(True)
            return t

        args = [arg(n) for n in req.get("args", [])]
        kwargs = {k: arg(n) for k, n in req.get("kwargs", {}).items()}
        for k, v in (req.get("scalars") or {}).items():  # non-tensor keyword arguments: JSON scalars only
            if v is None or isinstance(v, (bool, int, float)):
                kwargs[k] = v
        seed_all(seed + 1, device)
        check = emulated or contextlib.nullcontext()
        watch = self.watch or contextlib.nullcontext()
        tile = req.get("largest") if isinstance(req.get("largest"), list) else None
        tile = tuple(tile) if tile and len(tile) == 2 and all(isinstance(n, int) for n in tile) else None
        flow = req.get("flow") if tile and isinstance(req.get("flow"), dict) else {}  # {"q": arg name, "k": arg name}
        named = dict(zip(req.get("args", []), args))
        sources = {kind: named[n] for kind, n in flow.items() if kind in ("q", "k") and isinstance(n, str) and n in named}
        flow = ScoreFlow(sources, tile[0]) if len(sources) == 2 else None
        largest = Largest(tile, flow) if req.get("largest") else contextlib.nullcontext()
        try:
            with torch.set_grad_enabled(bool(req.get("grad"))), check, watch, largest:
                outs = plain_outputs(fn(*args, **kwargs))
        except WideScores:
            if flow is None or flow.wide is None:
                raise
            outs = None
        self.intact()
        if outs is None or (flow is not None and flow.wide is not None):  # what was found, no outputs
            return {"ok": True, "outputs": [], "largest": {"numel": largest.numel, "shape": largest.shape,
                                                           "strip": largest.strip, "scores": flow.wide}}, {}
        header = {"ok": True, "outputs": [{"shape": list(o.shape), "dtype": str(o.dtype).removeprefix("torch."),
                                           "device": where(o) if emulated else str(o.device)} for o in outs]}
        if isinstance(largest, Largest):
            header["largest"] = {"numel": largest.numel, "shape": largest.shape, "strip": largest.strip}
            if flow is not None:
                header["largest"]["scores"] = flow.wide or {}
        out_tensors = {f"out.{i}": o.detach().to("cpu", copy=True) for i, o in enumerate(outs)}
        if req.get("grad"):
            grad_outs = [put(tensors[g].to(dtype=dtype)) for g in req["grad"]]
            # a scalar loss whose gradient is the vector-Jacobian product with grad_outs
            # (cheaper to start than backward(grad_tensors), which imports torch.fx on first use)
            with check, watch:  # a fused kernel's backward, too; hooks and autograd.Function.backward run under both
                run_backward(sum((o * g).sum() for o, g in zip(outs, grad_outs)))
            self.intact()
            names = list(req.get("args", [])) + [f"kw.{k}" for k in req.get("kwargs", {})]
            for name, t in zip(names, args + list(kwargs.values())):
                if (g := _GRAD(t)) is not None:
                    out_tensors[f"grad.{name}"] = g.detach().to("cpu", copy=True)
            for name, p in params.items():  # read beneath any grad property a Parameter subclass of its own defines
                if (g := _GRAD(p)) is not None:
                    out_tensors[f"grad.param.{name}"] = g.detach().to("cpu", copy=True)
        return header, out_tensors

    def trace(self, req, tensors):
        """Like run (CPU, no gradients), but records the intermediate tensors and their lines (grader/sandbox/trace.py),
        under the same forbidden-API watch (a forbidden call here refuses the submission as in any other call).

        The entries recorded before an exception are sent too, with the exception's type and line.
        """
        dtype = DTYPES[req.get("dtype", "float64")]
        seed = req.get("seed", 0)
        obj = self.entry(req["entry"])
        fn, params = obj, []
        if req.get("init") is not None:
            with self.guarded():  # as in run: its __init__ and the Module methods it may override, watched
                fn = self.construct(obj, req["init"], seed).to(dtype=dtype)
                self.load_params(fn, tensors)
                fn.train(bool(req.get("train", False)))
                params = list(fn.parameters())
        cast = {k: (t.to(dtype) if t.is_floating_point() else t) for k, t in tensors.items()}
        args = [cast[n] for n in req.get("args", [])]
        kwargs = {k: cast[n] for k, n in req.get("kwargs", {}).items()}
        kwargs.update({k: v for k, v in (req.get("scalars") or {}).items() if v is None or isinstance(v, (bool, int, float))})
        seed_all(seed + 1, torch.device("cpu"))
        tracer, raised = Tracer(self.path, [*args, *kwargs.values(), *params]), None
        try:  # the watch outside the tracer: what the tracer calls on a tensor it records (detach) is watched too
            with torch.no_grad(), self.guarded(), tracer:
                fn(*args, **kwargs)
        except Exception as exc:  # the partial trace still locates what ran; the suite reports the exception
            raised = {"type": type(exc).__name__[:80], "line": self.error(exc)["error"]["line"]}
        def described(es):
            return [{"op": e.op, "line": e.line, "shape": list(e.tensor.shape), "dtype": str(e.tensor.dtype).removeprefix("torch."),
                     "data": e.data, "uses": list(e.uses)} for e in es]
        reply = {"ok": True, "entries": described(tracer.entries), "consts": described(tracer.consts), "raised": raised,
                 "truncated": tracer.truncated}
        out = {f"trace.{i}": e.tensor for i, e in enumerate(tracer.entries)}
        out.update({f"const.{i}": e.tensor for i, e in enumerate(tracer.consts)})
        return reply, out

    def batch(self, req, tensors):
        """Several calls from one request, run in order and answered in one reply, each as if it came alone (its own
        copy of the tensors it names: {"tensors": {its name: the frame's name}}); the first that fails ends it."""
        replies, out = [], {}
        for i, call in enumerate(req["calls"]):
            if not isinstance(call, dict) or call.get("op") not in BATCHED:
                reply = {"ok": False, "error": {"type": "ProtocolError", "message": "a batch holds run, describe or construct_raises"}}, {}
            else:
                reply = self.handle(call, {name: tensors[key].clone() for name, key in call.get("tensors", {}).items()})
            replies.append(reply[0])
            out.update({f"{i}.{name}": t for name, t in reply[1].items()})
            if reply[0].get("ok") is not True:
                break
        return {"ok": True, "replies": replies}, out

    def handle(self, header, tensors):
        if header.get("op") == "batch":  # each call is handled (and its forbidden-API rule applied) on its own
            try:
                return self.batch(header, tensors)
            except Exception as exc:  # a malformed batch: the grader's error, reported like any other
                return self.error(exc), {}
        op = getattr(self, header.get("op", ""), None)
        if op is None or header["op"] not in {"load", *BATCHED, "trace"}:
            return {"ok": False, "error": {"type": "ProtocolError", "message": f"unknown op {header.get('op')!r}"}}, {}
        try:
            reply = op(header, tensors)
            self.intact()
        except BaseException as exc:  # SystemExit and KeyboardInterrupt from the submission included
            reply = self.error(exc), {}
        if self.used:  # once called, every later answer says so, whatever the submission caught
            api = ", ".join(sorted(self.used))
            reply = self.error(ForbiddenAPI(f"forbidden_api: {api} is not allowed in this exercise (called at run time)")), {}
        return reply


def boot() -> None:
    """Process-wide setup done once, before any submission: one thread, no torch._dynamo import."""
    torch.set_num_threads(1)
    if "torch._dynamo" not in sys.modules:
        sys.modules["torch._dynamo"] = _LazyDynamo("torch._dynamo")
    torch.ones(1).half().float()  # initialises cpuinfo while /proc is still visible (after_boot hides it)


def unbuffered_output() -> None:
    """print() goes straight to the grader's pipe, so nothing is lost when the worker is killed or os._exit()s."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        raw = io.FileIO(fd, "w", closefd=False)
        setattr(sys, name, io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", write_through=True))


def serve(path: str, req_fd: int, resp_fd: int, limits: Limits = Limits()) -> None:
    """Answer the grader's requests about the submission at path until the request pipe closes."""
    state = isolation.after_boot(limits)
    unbuffered_output()
    # the grader's SIGUSR1, sent once the budget has run out and just before the kill, writes where the code is
    # (every thread's stack, innermost call first) to the reply pipe: from C, so a loop inside a torch call too
    faulthandler.register(STACK_SIGNAL, file=resp_fd, all_threads=True, chain=False)
    worker = Worker(path)
    # booted, before any submission code runs: the grader's budget starts here, once it has read what held
    ready = memoryview(READY + encode({"state": state}))
    while ready:
        ready = ready[os.write(resp_fd, ready) :]
    while True:
        frame = read_frame(req_fd)
        if frame is None:
            break
        header, tensors = decode(frame)
        reply, out = worker.handle(header, tensors)
        try:
            data = encode(reply, out)
        except BaseException as exc:
            data = encode(worker.error(exc))
        view = memoryview(data)
        while view:
            view = view[os.write(resp_fd, view) :]


def warm_up() -> None:
    """Run the torch paths a grading session uses, so each forked worker starts with them loaded."""
    from safetensors.torch import load

    lin = torch.nn.Linear(4, 4).double()
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    att = torch.softmax((lin(x) @ x.transpose(-2, -1)).masked_fill(torch.ones(3, 3, dtype=torch.bool).triu(1), float("-inf")), -1)
    torch.nn.functional.dropout(att, 0.5, training=True).sum().backward()
    emulated = EmulatedDevice()
    lin = to_device(lin, emulated)
    with emulated:
        lin(x.detach().to("cuda")).masked_fill(torch.ones(3, 4, dtype=torch.bool, device="cuda"), 0.0).sum().item()
    load(safetensors_bytes({"x": x.detach().float()}))
    for name in set(KERNELS.values()):
        op_kernels(name)
    if view.closed_to_others() and not isolation.namespaces_allowed():
        # a worker that reads the host's files as its own uid could not import them after boot: torch's shape code
        # (broadcast_shapes', unravel_index's), sympy, mpmath and the standard library modules they need
        torch.broadcast_shapes((1,), (1,))
        for codec in pkgutil.iter_modules(encodings.__path__):  # str.encode("cp1252") imports its codec on first use
            with contextlib.suppress(Exception):
                importlib.import_module(f"encodings.{codec.name}")


def main() -> None:
    boot()
    warm_up()  # torch's lazy first-use costs (the emulated device, autograd) are start-up, not the submission's time
    limits = Limits(**json.loads(sys.argv[4])) if len(sys.argv) > 4 else Limits()
    serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), limits)


if __name__ == "__main__":
    main()
