"""Records the intermediate tensors of one forward call, each with the source line that made it.

Used twice: in the worker on the submission (its trace goes back to the grader as untrusted data)
and in the grader on the reference solution. Only tensors computed from the inputs or the
parameters are kept (a mask built from torch.ones is not), only floating ones, and only up to a
fixed number of entries and elements, so a trace stays small whatever the code does. Beside them, in `consts`
(their own small budget), the tensors the code builds that are no floating data: bool and integer ones derived from
the inputs (a padding mask reshaped), and any tensor made from factories alone (torch.ones(...).triu(1),
base ** torch.arange(...)); each entry names the consts it read (`uses`, -1: one left unrecorded).
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
MAX_CONSTS = 64
MAX_CONST_ELEMENTS = 1 << 14
MAX_USES = 8
FLOATS = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
FRESH = {"zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "randint_like",
         "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"}  # take only a shape or dtype from their argument


@dataclass
class Entry:
    op: str
    line: int
    tensor: torch.Tensor
    data: bool = True  # computed from a floating source (inputs, weights), not from a bool mask or int positions alone
    uses: tuple = ()  # the indices in Tracer.consts of the consts it read (-1: one not recorded)


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
        self.consts: list[Entry] = []
        self.const_budget = MAX_CONST_ELEMENTS
        self._const: dict[int, weakref.ref] = {}  # made from factories alone
        self._index: dict[int, tuple[weakref.ref, int]] = {}  # tensor -> its index in consts (-1: not recorded)
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

    def _is_const(self, t: torch.Tensor) -> bool:
        ref = self._const.get(id(t))
        return ref is not None and ref() is t

    def _uses(self, tensors) -> tuple:
        out = []
        for t in tensors:
            ref = self._index.get(id(t))
            if ref is not None and ref[0]() is t and len(out) < MAX_USES:
                out.append(ref[1])
        return tuple(out)

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
        given = list(_tensors((args, kwargs)))
        inputs = [t for t in given if self._is_derived(t)]
        fresh = getattr(func, "__name__", None) in FRESH
        if not fresh and inputs:
            data = any(id(t) in self._data for t in inputs)
            uses = self._uses(given)
            for t in _tensors(out):
                self._mark(t, data)
                self._record(func, t, data, uses)
                if t.dtype not in FLOATS:
                    self._record_const(func, t, data, uses)
        elif fresh or not given or any(self._is_const(t) for t in given):
            uses = self._uses(given)
            for t in _tensors(out):
                if not self._is_derived(t):
                    self._const[id(t)] = weakref.ref(t)
                    self._record_const(func, t, False, uses)
        return out

    def _record_const(self, func, t: torch.Tensor, data: bool, uses: tuple) -> None:
        try:
            ref = weakref.ref(t)
        except TypeError:
            return
        if (t.device.type == "meta" or t.is_complex() or t.is_quantized or t.numel() == 0
                or len(self.consts) >= MAX_CONSTS or t.numel() > self.const_budget):
            self._index[id(t)] = (ref, -1)
            return
        line = self.line()
        if line is None:
            self._index[id(t)] = (ref, -1)
            return
        self.const_budget -= t.numel()
        self._index[id(t)] = (ref, len(self.consts))
        self.consts.append(Entry(op_name(func), line, t.detach().to("cpu", copy=True).contiguous(), data, uses))

    def _record(self, func, t: torch.Tensor, data: bool = True, uses: tuple = ()) -> None:
        if t.dtype not in FLOATS or t.device.type == "meta" or t.numel() == 0:
            return
        if len(self.entries) >= self.max_entries or t.numel() > self.budget:
            self.truncated = True
            return
        line = self.line()
        if line is None:
            return
        self.budget -= t.numel()
        self.entries.append(Entry(op_name(func), line, t.detach().to("cpu", copy=True).contiguous(), data, uses))
