"""Records the intermediate tensors of one forward call, each with the source line that made it.

Used twice: in the worker on the submission (its trace goes back to the grader as untrusted data)
and in the grader on the reference solution. Only tensors computed from the inputs or the
parameters are kept (a mask built from torch.ones is not), only floating ones, and only up to a
fixed number of entries and elements, so a trace stays small whatever the code does.
Imports only torch and the standard library: the worker loads it.
"""
from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass

import torch
from torch.overrides import TorchFunctionMode

MAX_ENTRIES = 256
MAX_ELEMENTS = 1 << 18
FLOATS = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
FRESH = {"zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "randint_like",
         "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"}  # take only a shape or dtype from their argument


@dataclass
class Entry:
    op: str
    line: int
    tensor: torch.Tensor
    data: bool = True  # computed from a floating source (inputs, weights), not from a bool mask or int positions alone


def op_name(func) -> str:
    name = getattr(func, "__name__", None) or "op"
    if name == "__get__":  # a tensor attribute such as .T or .mT
        name = getattr(getattr(func, "__self__", None), "__name__", "attribute")
    return str(name)[:40]


def _tensors(value):
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            yield item
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())


class Tracer(TorchFunctionMode):
    """with Tracer(path, sources) as t: fn(x) -> t.entries (op, line in path, detached copy).

    sources: the tensors the trace starts from (inputs, parameters); an op's output is kept
    only when one of its arguments is a source or a kept output. An op called from another
    file (torch.nn.functional, a helper module) is attributed to the line of path that led to it.
    Each entry says whether it derives from a floating source (data) or only from the others
    (a bool mask, int positions): `(~mask).float()` is an operand, never the data flow itself.
    """

    def __init__(self, path: str, sources=(), *, max_entries: int = MAX_ENTRIES, max_elements: int = MAX_ELEMENTS):
        super().__init__()
        self.path = path
        self.max_entries = max_entries
        self.budget = max_elements
        self.entries: list[Entry] = []
        self.truncated = False
        self._derived: dict[int, weakref.ref] = {}
        self._data: set[int] = set()
        for t in sources:
            self._mark(t, isinstance(t, torch.Tensor) and t.is_floating_point())

    def _mark(self, t: torch.Tensor, data: bool) -> None:
        try:
            self._derived[id(t)] = weakref.ref(t)
        except TypeError:
            return
        if data:
            self._data.add(id(t))
        else:
            self._data.discard(id(t))

    def _is_derived(self, t: torch.Tensor) -> bool:
        ref = self._derived.get(id(t))
        return ref is not None and ref() is t

    def line(self) -> int | None:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.path:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        inputs = [t for t in _tensors((args, kwargs)) if self._is_derived(t)]
        if getattr(func, "__name__", None) not in FRESH and inputs:
            data = any(id(t) in self._data for t in inputs)
            for t in _tensors(out):
                self._mark(t, data)
                self._record(func, t, data)
        return out

    def _record(self, func, t: torch.Tensor, data: bool = True) -> None:
        if t.dtype not in FLOATS or t.device.type == "meta" or t.numel() == 0:
            return
        if len(self.entries) >= self.max_entries or t.numel() > self.budget:
            self.truncated = True
            return
        line = self.line()
        if line is None:
            return
        self.budget -= t.numel()
        self.entries.append(Entry(op_name(func), line, t.detach().to("cpu", copy=True).contiguous(), data))
