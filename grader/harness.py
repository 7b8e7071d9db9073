"""What the checks and the diagnosis use to reach the submission (through the sandbox) and the reference."""
from __future__ import annotations

import contextvars
import copy
import hashlib
import importlib.util
import json
import math
import threading
from dataclasses import dataclass, field
from functools import cached_property

import torch

from grader.catalog import Exercise
from grader.failures import Mismatch, expect
from grader.numerics import FLOAT64_NATIVE, TOLERANCES, allclose, dtype_name
from grader.sandbox import Sandbox, SubmissionError, WorkerGone

REFERENCE_RESULTS: dict[tuple, tuple] = {}  # Harness.ref_run's answers, by their inputs' values
MAX_REFERENCE_RESULTS = 4096
REFERENCE_MODULES: dict[tuple, "Built"] = {}  # (reference file, constructor arguments, dtype, seed) -> as built
PARAMETER_SHAPES: dict[tuple[str, str], list] = {}  # (reference file, constructor arguments) -> its parameters' shapes
WEIGHTS: dict[tuple, dict] = {}  # (reference file, constructor arguments, seed, salt) -> Harness.weights' draw
PRECISION_NOTES: contextvars.ContextVar[list | None] = contextvars.ContextVar("precision_notes", default=None)


def load_reference(ex: Exercise):
    spec = importlib.util.spec_from_file_location(f"attention_kit_reference_{ex.number}", ex.solution_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, ex.entry)


def unravel(flat: int, shape) -> tuple[int, ...]:
    """The index of element number flat (row-major) in a tensor of this shape. torch.unravel_index does the same,
    but its first call imports sympy, which costs a cold grade 0.3 s and more on a loaded machine."""
    index = []
    for size in reversed(tuple(shape)):
        flat, i = divmod(flat, size) if size else (flat, 0)
        index.append(i)
    return tuple(reversed(index))


def broadcast(*shapes) -> tuple[int, ...]:
    """torch.broadcast_shapes, whose first call imports sympy (a second of a cold grade's CPU, and of every batch
    pool process's)."""
    out = []
    for i in range(1, max(map(len, shapes), default=0) + 1):
        sizes = {s[-i] for s in shapes if len(s) >= i} - {1}
        if len(sizes) > 1:
            raise RuntimeError(f"shapes {[tuple(s) for s in shapes]} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(reversed(out))


def compare(got: torch.Tensor, want: torch.Tensor, what: str, *, dtype=torch.float64, token_dim: int | None = -2,
            tol: tuple[float, float] | None = None) -> None:
    """Raise Mismatch with the largest difference and where it is, unless got ≈ want.

    tol overrides the dtype's (rtol, atol) where a check documents why (e.g. float32 RoPE angles).
    A float64 result that passes only at the loose tolerance leaves a note in PRECISION_NOTES."""
    expect(tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)}, expected {tuple(want.shape)}",
           "shape_mismatch")
    got, want = got.double(), want.double()
    expect(not torch.isnan(got).any() or torch.isnan(want).any(), f"{what}: contains NaN", "non_finite")
    diff = (got - want).abs().nan_to_num(float("inf"))
    if allclose(got, want, tol or TOLERANCES[dtype]):
        notes = PRECISION_NOTES.get()
        if dtype == torch.float64 and notes is not None and not allclose(got, want, FLOAT64_NATIVE):
            notes.append((diff.max().item(), what))
        return
    index = unravel(int(diff.argmax()), diff.shape)
    where = f"at index {list(index)}"
    if token_dim is not None and got.dim() >= 2:
        where += f" (token {index[token_dim]})"
    raise Mismatch(f"{what}: max |Δ| = {diff.max().item():.3g} {where}; got {got[index].item():.6g}, "
                   f"expected {want[index].item():.6g}", "value_mismatch")


@dataclass
class Harness:
    exercise: Exercise
    sandbox: Sandbox | None
    device: str = "cpu"
    blocked: str | None = None  # why the submission was not run (policy, syntax)
    load_error: Exception | None = None  # what importing the submission raised, if anything
    seed: int = 1234
    max_starts: int = 3  # a crashed worker is restarted for the next test, this many times in all
    last_call: dict | None = None  # the latest call sent to the submission, for `grade exercise N --repro`
    _origins: dict = field(default_factory=dict)  # id(tensor or weights dict) -> how to draw it again
    dtype_changes: list | None = None  # while diagnosing: outputs of another dtype, cast back and noted here
    _answered: dict | None = field(default_factory=dict)  # call_key -> the worker's answer in this grade (Results)

    @cached_property
    def reference(self):
        return load_reference(self.exercise)

    # -- weights and inputs the grader controls ------------------------------------------
    def generator(self, salt: int = 0) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed + salt)

    def reference_key(self, init: dict) -> tuple[str, str]:
        """The reference file and its constructor arguments: what a reference module built in this process depends
        on (REFERENCE_MODULES and PARAMETER_SHAPES add to it)."""
        return str(self.exercise.solution_path), json.dumps(init, sort_keys=True, default=repr)

    def weights(self, init: dict, salt: int = 0) -> dict[str, torch.Tensor]:
        """Parameters in float64, scaled so that scores are neither tiny nor saturated."""
        torch.default_generator.manual_seed(self.seed)  # CPU only: torch.manual_seed also queues CUDA seeding
        key = self.reference_key(init)
        drawn = WEIGHTS.get((*key, self.seed, salt))
        if drawn is None:  # drawn once per process (copied for each use): the same every grade
            if key not in PARAMETER_SHAPES:  # building the reference costs more than drawing its weights
                PARAMETER_SHAPES[key] = [(name, p.shape) for name, p in self.reference(**init).named_parameters()]
            g = self.generator(salt)
            drawn = {}
            for name, shape in PARAMETER_SHAPES[key]:
                scale = 1.3 / math.sqrt(shape[-1]) if len(shape) > 1 else 0.2
                drawn[name] = torch.randn(shape, generator=g, dtype=torch.float64) * scale
            WEIGHTS[(*key, self.seed, salt)] = drawn
        out = {name: t.clone() for name, t in drawn.items()}
        self._origins[id(out)] = (out, {"seed": self.seed + salt, "draws": [[n, list(t.shape), 1.3 / math.sqrt(
            t.shape[-1]) if t.dim() > 1 else 0.2] for n, t in out.items()]})
        return out

    def randn(self, *shape: int, salt: int = 0) -> torch.Tensor:
        t = torch.randn(shape, generator=self.generator(1000 + salt), dtype=torch.float64)
        self._origins[id(t)] = (t, {"shape": list(shape), "seed": self.seed + 1000 + salt})
        return t

    def recipe(self, obj) -> dict:
        """How a tensor (or weights dict) sent to the submission can be made again: a seed, or its values if small."""
        known = self._origins.get(id(obj))
        if known is not None and known[0] is obj:
            return known[1]
        if isinstance(obj, torch.Tensor):
            small = obj.numel() <= 64
            return {"shape": list(obj.shape), "dtype": dtype_name(obj.dtype),
                    "values": obj.tolist() if small else None}
        return {"names": sorted(obj)} if obj else {}

    # -- the reference, in this (trusted) process -----------------------------------------
    def _built(self, init: dict, dtype) -> "Built":
        key = (*self.reference_key(init), str(dtype), self.seed)
        if key not in REFERENCE_MODULES:  # built once per process
            torch.default_generator.manual_seed(self.seed)  # CPU only: torch.manual_seed also queues CUDA seeding
            REFERENCE_MODULES[key] = Built(self.reference(**init).to(dtype))
        return REFERENCE_MODULES[key]

    def ref_module(self, init: dict, params: dict, *, dtype=torch.float64, train=False):
        """A reference module of its own, as built, with params loaded."""
        module = copy.deepcopy(self._built(init, dtype).pristine)
        module.load_state_dict(params, strict=False)
        return module.train(train)

    def ref_run(self, init: dict | None, args: list, kwargs: dict | None = None, *, params=None,
                dtype=torch.float64, grad_out=None):
        """Reference outputs (and gradients, when grad_out is given), mirroring what the worker does.

        The reference is trusted and runs in eval mode, so its answer depends only on the inputs: answers are kept
        per process (REFERENCE_RESULTS, by the inputs' values; a copy each time), and every grade of an exercise asks
        the same questions first. A module's run uses the process's kept module, its state (and gradients) reset
        first, instead of a copy of it (a deep copy cost more than the run); a thread that finds it in use takes a copy."""
        key = self._ref_key(init, args, kwargs, params, dtype, grad_out)
        known = REFERENCE_RESULTS.get(key)
        if known is None:
            known = self._ref_run(init, args, kwargs, params=params, dtype=dtype, grad_out=grad_out)
            while len(REFERENCE_RESULTS) >= MAX_REFERENCE_RESULTS:
                REFERENCE_RESULTS.pop(next(iter(REFERENCE_RESULTS)))
            REFERENCE_RESULTS[key] = _cloned(known)
        return _cloned(known)

    def _ref_key(self, init, args, kwargs, params, dtype, grad_out) -> tuple:
        scalars = {k: v for k, v in (kwargs or {}).items() if not isinstance(v, torch.Tensor)}
        tensors = {f"arg{i}": a for i, a in enumerate(args)}
        tensors.update({f"kw.{k}": v for k, v in (kwargs or {}).items() if isinstance(v, torch.Tensor)})
        tensors.update({f"param.{k}": v for k, v in (params or {}).items()})
        tensors.update({f"gout{i}": g for i, g in enumerate(grad_out or [])})
        return (str(self.exercise.solution_path), None if init is None else self.reference_key(init)[1], self.seed,
                str(dtype), grad_out is not None, repr(sorted(scalars.items())), tensor_values(tensors))

    def _ref_run(self, init, args, kwargs, *, params, dtype, grad_out):
        if init is None:
            return self._ref_call(self.reference, args, kwargs, dtype, grad_out, False)
        built = self._built(init, dtype)
        if not built.lock.acquire(blocking=False):
            return self._ref_call(self.ref_module(init, params, dtype=dtype), args, kwargs, dtype, grad_out, True)
        try:
            return self._ref_call(built.reset(params), args, kwargs, dtype, grad_out, True)
        finally:
            built.lock.release()

    @staticmethod
    def _ref_call(fn, args, kwargs, dtype, grad_out, module: bool):
        args = [a.to(dtype).requires_grad_(grad_out is not None) if a.is_floating_point() else a for a in args]
        kwargs = kwargs or {}
        with torch.set_grad_enabled(grad_out is not None):
            result = fn(*args, **kwargs)
        outs = list(result) if isinstance(result, (tuple, list)) else [result]
        grads = {}
        if grad_out is not None:
            sum((o * g.to(dtype)).sum() for o, g in zip(outs, grad_out)).backward()  # VJP, as the worker does
            grads = {f"arg{i}": a.grad for i, a in enumerate(args) if a.is_floating_point()}
            if module:
                grads.update({f"param.{n}": p.grad for n, p in fn.named_parameters()})
        return [o.detach() for o in outs], grads

    def expected_shapes(self, init: dict | None, args: list) -> list[tuple[int, ...]]:
        """The contract's output shapes for these inputs: (..., T, d_out), or (output, weights)."""
        if self.exercise.kind.startswith("custom_"):
            return []  # a custom call contract: the exercise's own suite checks its shapes
        if init is not None:
            return [(*args[0].shape[:-1], self.exercise.dim("output", init))]
        q, k, v = args[:3]
        lead = broadcast(q.shape[:-2], k.shape[:-2], v.shape[:-2])
        return [(*lead, q.shape[-2], v.shape[-1]), (*lead, q.shape[-2], k.shape[-2])]

    # -- the submission, in the sandbox -----------------------------------------------------
    def load(self) -> None:
        """Import the submission in the worker; remember what it raised."""
        try:
            self.sandbox.request({"op": "load"})
            self.load_error = None
        except (SubmissionError, WorkerGone) as exc:
            self.load_error = exc

    def request(self, header: dict, tensors: dict | None = None):
        self._restart_crashed()
        try:
            return self.sandbox.request({"entry": self.exercise.entry, **header}, tensors)
        except SubmissionError as exc:
            self._forget_after(exc)
            raise

    def _forget_after(self, answer) -> None:
        """Once the submission has called a forbidden API, its worker refuses every later call: nothing answered
        before may stand in for one of them (Results)."""
        if isinstance(answer, SubmissionError) and answer.type == "ForbiddenAPI":
            self._answered = None

    def _restart_crashed(self) -> None:
        """A worker that crashed is started again (and the submission loaded) for the next request, max_starts
        times in all."""
        assert self.sandbox is not None, "the submission was not started"
        gone = self.sandbox.gone
        if gone is not None and gone.reason == "crash" and self.sandbox.starts < self.max_starts:
            self.sandbox.close()
            self.sandbox.start()
            self.load()

    def describe(self, init: dict | None = None) -> dict:
        return self.request({"op": "describe", "init": init})[0]

    def construct_raises(self, init: dict) -> str | None:
        return self.request({"op": "construct_raises", "init": init})[0]["raised"]

    def batch(self, calls: list[tuple[dict, dict]]) -> list:
        """Several requests in one round trip to the worker (Sandbox.batch): per call, its (header, tensors) or
        the SubmissionError it raised; the list ends at the first error."""
        self._restart_crashed()
        answers = self.sandbox.batch([({"entry": self.exercise.entry, **header}, tensors) for header, tensors in calls])
        for answer in answers:
            self._forget_after(answer)
        return answers

    def run(self, init: dict | None, args: list, kwargs: dict | None = None, *, params=None, dtype=torch.float64,
            train=False, grad_out=None, device=None, seed=0, n_outputs: int = 1, check_shapes: bool = True):
        """Submission outputs (and gradients) as plain CPU tensors, checked for type and count.

        device: "cpu", "cuda" (a real GPU), or "emulated" (cuda:0 as the submission sees it, computed on the CPU
        with real values, refusing to mix devices as CUDA does: grader/sandbox/emulated.py). "meta", what packs
        used before the emulation, runs emulated and returns only the output shapes (tuples) and no gradients."""
        return next(self.runs([self.call(init, args, kwargs, params=params, dtype=dtype, train=train, grad_out=grad_out,
                                         device=device, seed=seed, n_outputs=n_outputs, check_shapes=check_shapes)]))

    def runs(self, calls: list["Call"]) -> "Results":
        """The results of several calls (made by call(), which takes run()'s arguments), sent to the worker in one
        request when first asked for: iterate it for each call's (outputs, gradients) in order, as run() returns
        them; a call's error is raised when its turn comes, as run() would raise it. For calls whose inputs do
        not depend on each other's outputs: the worker runs them all (up to the first that raises) before the
        check looks at the first."""
        return Results(self, calls)

    def call(self, init: dict | None, args: list, kwargs: dict | None = None, *, params=None, dtype=torch.float64,
             train=False, grad_out=None, device=None, seed=0, n_outputs: int = 1, check_shapes: bool = True) -> "Call":
        """One call of the submission, as run() makes it, prepared to be sent with others (runs())."""
        device = device or self.device
        shapes_only = device == "meta"  # the meta device's contract, kept for packs that use it: shapes, no values
        device = "emulated" if shapes_only else device
        tensors = {f"param.{k}": v for k, v in (params or {}).items()}
        names = []
        for i, a in enumerate(args):
            tensors[f"arg{i}"] = a
            names.append(f"arg{i}")
        kw, scalars = {}, {}
        for k, v in (kwargs or {}).items():
            if not isinstance(v, torch.Tensor):  # bool, int, float or None: sent in the header, not as a tensor
                scalars[k] = v
                continue
            tensors[f"kw_{k}"] = v
            kw[k] = f"kw_{k}"
        header = {"op": "run", "init": init, "args": names, "kwargs": kw, "dtype": dtype_name(dtype),
                  "train": train, "device": device, "seed": seed}
        if scalars:
            header["scalars"] = scalars
        if grad_out is not None:
            header["grad"] = [f"gout{i}" for i in range(len(grad_out))]
            tensors.update({f"gout{i}": g for i, g in enumerate(grad_out)})
        recipe = {"entry": self.exercise.entry, "init": init, "dtype": dtype_name(dtype), "train": train,
                  "device": device, "seed": seed, "grad": grad_out is not None, "scalars": scalars,
                  "args": [self.recipe(a) for a in args], "params": self.recipe(params) if params else None,
                  "kwargs": {k: self.recipe(v) for k, v in (kwargs or {}).items() if isinstance(v, torch.Tensor)}}
        return Call(header, tensors, recipe, init, args, dtype, n_outputs, check_shapes, shapes_only)

    def outputs(self, call: "Call", reply: dict, out: dict):
        """run()'s result from the worker's reply to call: the outputs checked for type, count, dtype and shape."""
        n_outputs, dtype, args = call.n_outputs, call.dtype, call.args
        ran_on = call.header.get("device") or "cpu"  # "emulated" or "cuda": the inputs were on cuda:0
        shapes = reply.get("outputs")
        expect(isinstance(shapes, list) and len(shapes) == n_outputs,
               f"expected {n_outputs} output tensor(s), got {len(shapes) if isinstance(shapes, list) else 'something else'}",
               "output_count")
        want_shapes = self.expected_shapes(call.init, args)
        want_shapes += [None] * (n_outputs - len(want_shapes))  # outputs the generic contract does not describe
        outs = []
        for i in range(n_outputs):
            t = out.get(f"out.{i}")
            expect(isinstance(t, torch.Tensor) and type(t) is torch.Tensor, f"output {i} is not a plain tensor", "output_type")
            if ran_on != "cpu":  # a GPU caller gets what is returned where it is: a CPU output is not the module's
                got = shapes[i].get("device") if isinstance(shapes[i], dict) else None
                expect(isinstance(got, str) and got.split(":")[0] == "cuda",
                       f"output {i} is on {got if isinstance(got, str) else 'no device'} while the inputs are on cuda:0 "
                       f"(a caller on a GPU would get a CPU tensor): compute where the inputs are, with no .cpu() "
                       f"in forward", "device_mismatch")
            changed = f"output {i} has dtype {t.dtype}, expected {dtype} (the input's dtype)"
            if t.dtype != dtype and self.dtype_changes is not None and t.is_floating_point():
                self.dtype_changes.append(changed)  # the values are still diagnosed: a mistake in them comes first
                t = t.to(dtype)
            expect(t.dtype == dtype, changed, "dtype_changed")
            what = "output" if n_outputs == 1 else ("output", "weights")[i] if i < 2 else f"output {i}"
            expect(not call.check_shapes or want_shapes[i] is None or tuple(t.shape) == want_shapes[i],
                   f"{what} for input {tuple(args[0].shape)} has shape {tuple(t.shape)}, expected {want_shapes[i]}",
                   "shape_mismatch")
            outs.append(t)
        if call.shapes_only:
            return [tuple(t.shape) for t in outs], {}
        grads = {k.removeprefix("grad."): v for k, v in out.items() if k.startswith("grad.")}
        return outs, grads


class Built:
    """A reference module built once per process (REFERENCE_MODULES): pristine, never run, is copied for
    ref_module(); module is the one ref_run() runs, reset to the pristine state before each run."""

    def __init__(self, module: torch.nn.Module):
        self.pristine = module
        self.module = copy.deepcopy(module)
        self.lock = threading.Lock()

    def reset(self, params: dict) -> torch.nn.Module:
        module = self.module  # load_state_dict copies the values in: the pristine module stays untouched
        module.load_state_dict({**self.pristine.state_dict(), **(params or {})}, strict=False)
        for p in module.parameters():
            p.grad = None  # the last run's gradients stay with whoever got them
        return module.train(False)


@dataclass
class Call:
    """One call of the submission prepared by Harness.call: the request, and what checking its reply needs."""
    header: dict
    tensors: dict
    recipe: dict  # how `grade exercise N --repro` makes it again
    init: dict | None
    args: list
    dtype: torch.dtype
    n_outputs: int
    check_shapes: bool
    shapes_only: bool


class Results:
    """Harness.runs(calls): each call's result in order, from one request sent on the first next(). A call after
    one that raised was not run by the worker (it stops there): should the check go on to it, it is sent alone.
    A run call the submission already answered in this grade (the same request, the same tensor values) is not
    sent again: the worker builds a new module for each call, so the answer would be the same."""

    def __init__(self, harness: Harness, calls: list[Call]):
        self.harness, self.calls, self.answers, self.next = harness, list(calls), None, 0

    def __iter__(self) -> "Results":
        return self

    def __next__(self):
        if self.next >= len(self.calls):
            raise StopIteration
        call, index = self.calls[self.next], self.next
        self.next += 1
        self.harness.last_call = call.recipe
        if self.answers is None:
            self.answers = self._send()
        if index < len(self.answers):
            answer = self.answers[index]
            if isinstance(answer, SubmissionError):
                raise answer
        else:
            answer = self.harness.request(call.header, call.tensors)
        return self.harness.outputs(call, *answer)

    def _send(self) -> list:
        """The answers from the first call up to the first error: remembered ones, the others in one request."""
        memo = self.harness._answered
        digests: dict = {}  # the calls of one check often send the same tensors (its weights): hashed once
        keys = [call_key(c, digests) if memo is not None else None for c in self.calls]
        todo = [i for i, k in enumerate(keys) if k is None or k not in memo]
        if len(todo) > 1:
            sent = self.harness.batch([(self.calls[i].header, self.calls[i].tensors) for i in todo])
        elif todo and todo[0] == 0:
            sent = [self.harness.request(self.calls[0].header, self.calls[0].tensors)]
        else:  # one call after remembered ones: sent when its turn comes (a remembered error would end it first)
            sent = []
        fresh = dict(zip(todo, sent))
        answers = []
        for i, key in enumerate(keys):
            if i in fresh:
                answer = fresh[i]
                if key is not None and not isinstance(answer, SubmissionError) and self.harness._answered is not None:
                    memo[key] = _copied(answer)
            elif key is not None and key in memo:
                answer = _copied(memo[key])
            else:
                break
            answers.append(answer)
            if isinstance(answer, SubmissionError):
                break
        return answers


def _copied(answer: tuple[dict, dict]) -> tuple[dict, dict]:
    reply, out = answer
    return _plain_copy(reply), {k: v.clone() for k, v in out.items()}


def _plain_copy(value):
    """A copy of a decoded reply (JSON: dicts, lists and scalars), as copy.deepcopy makes it, at a fraction of its
    cost (a remembered answer is copied each time it is given)."""
    if type(value) is dict:
        return {k: _plain_copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_plain_copy(v) for v in value]
    return copy.deepcopy(value) if type(value) not in (str, int, float, bool, type(None)) else value


def _cloned(answer: tuple[list, dict]) -> tuple[list, dict]:
    outs, grads = answer
    return [o.clone() for o in outs], {k: None if g is None else g.clone() for k, g in grads.items()}


def tensor_values(tensors: dict, digests: dict | None = None) -> tuple:
    """Each tensor's name, dtype, shape and a digest of its values, in name order. digests: id(tensor) -> (tensor,
    digest) of tensors already hashed, for tensors that do not change meanwhile (one request's)."""
    values = []
    for name, t in sorted(tensors.items()):
        known = digests.get(id(t)) if digests is not None else None
        if known is None or known[0] is not t:
            flat = t.detach().cpu().contiguous().reshape(-1)
            known = t, (str(flat.dtype), tuple(t.shape),
                        hashlib.blake2b(flat.view(torch.uint8).numpy(), digest_size=16).digest())
            if digests is not None:
                digests[id(t)] = known
        values.append((name, *known[1]))
    return tuple(values)


def call_key(call: Call, digests: dict | None = None) -> tuple | None:
    """What a run call's answer depends on: its request and the values of its tensors (None: not remembered)."""
    if call.header.get("op") != "run":
        return None
    return json.dumps(call.header, sort_keys=True, default=repr), tensor_values(call.tensors, digests)


__all__ = ["Call", "Harness", "Results", "Mismatch", "SubmissionError", "WorkerGone", "compare", "expect", "load_reference", "unravel"]
