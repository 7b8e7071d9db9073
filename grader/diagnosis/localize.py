"""Points at the line: aligns a trace of the submission's forward with the reference's named stages.

The reference solutions name their stages with a trailing comment on the line that computes them
(`att = q @ k.transpose(-2, -1)  # stage: scores`; a line computing several lists them in order,
and they are its last recorded ops). The submission's trace comes from the worker and is untrusted:
every entry is checked and anything malformed is dropped. It is feedback only, never the verdict,
and any failure here means no localization rather than a failed grade.
"""
from __future__ import annotations

import io
import itertools
import math
import re
import tokenize
from dataclasses import asdict, dataclass

import torch

from grader.sandbox.trace import MAX_ELEMENTS, MAX_ENTRIES, Tracer

STAGE_COMMENT = re.compile(r"\bstage:\s*([a-z_]+(?:\s*,\s*[a-z_]+)*)")
PARALLEL = {"queries", "keys", "values", "rotated_queries", "rotated_keys"}  # computed side by side, not in a chain
RTOL = {torch.float64: 1e-6, torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 3e-2}
DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
MAX_VIEWS = 240


@dataclass
class Localization:
    line: int
    stage: str
    matched_through: str | None
    evidence: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Traced:
    op: str
    line: int
    tensor: torch.Tensor


@dataclass
class Stage:
    name: str
    line: int
    tensor: torch.Tensor


# -- the reference's stages ---------------------------------------------------------------------
def stage_lines(source: str) -> dict[int, list[str]]:
    """{line: [stage names]} from the `# stage: a, b` comments of a reference solution."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and (m := STAGE_COMMENT.search(tok.string)):
            out[tok.start[0]] = [n.strip() for n in m.group(1).split(",")]
    return out


def stages_from_trace(entries, lines: dict[int, list[str]]) -> list[Stage]:
    """The last k entries recorded on a line naming k stages, in the order they were computed."""
    found = []
    for line, names in lines.items():
        on_line = [(i, e) for i, e in enumerate(entries) if e.line == line]
        for name, (i, e) in zip(reversed(names), reversed(on_line)):
            found.append((i, Stage(name, line, e.tensor)))
    return [s for _, s in sorted(found, key=lambda p: p[0])]


def code_file(obj) -> str | None:
    """The file a reference class or function was compiled from (it is not in sys.modules)."""
    fn = getattr(obj, "forward", obj)
    code = getattr(fn, "__code__", None)
    return code.co_filename if code is not None else None


def trace_reference(ref, call: dict, *, seed: int = 0) -> list[Traced]:
    """Run the trusted reference on the call the worker traced, under the same tracer."""
    path = code_file(ref)
    fn, params = ref, []
    if call["init"] is not None:
        torch.default_generator.manual_seed(seed)
        fn = ref(**call["init"]).to(torch.float64)
        fn.load_state_dict(call["params"], strict=False)
        fn.train(call.get("train", False))
        params = list(fn.parameters())
    args, kwargs = call["args"], call["kwargs"]
    torch.default_generator.manual_seed(seed + 1)
    tracer = Tracer(path, [*args, *kwargs.values(), *params])
    with torch.no_grad(), tracer:
        fn(*args, **kwargs)
    return [Traced(e.op, e.line, e.tensor) for e in tracer.entries]


# -- the submission's trace (untrusted) ----------------------------------------------------------
def validate(reply, out, n_lines: int) -> tuple[list[Traced], dict | None]:
    """Entries that are well formed in every respect, and the exception the forward raised (if any)."""
    if not isinstance(reply, dict) or not isinstance(out, dict):
        return [], None
    entries, budget = [], MAX_ELEMENTS
    raw = reply.get("entries")
    for i, e in enumerate(raw[:MAX_ENTRIES] if isinstance(raw, list) else []):
        if not isinstance(e, dict):
            continue
        op, line, shape, dtype = e.get("op"), e.get("line"), e.get("shape"), e.get("dtype")
        t = out.get(f"trace.{i}")
        if not (isinstance(op, str) and isinstance(line, int) and not isinstance(line, bool) and 1 <= line <= n_lines
                and isinstance(shape, list) and all(isinstance(n, int) and not isinstance(n, bool) for n in shape)
                and dtype in DTYPES and type(t) is torch.Tensor and t.dtype == DTYPES[dtype]
                and list(t.shape) == shape and 0 < t.numel() <= budget):
            continue
        budget -= t.numel()
        entries.append(Traced(re.sub(r"[^\w.]", "", op)[:40] or "op", line, t))
    raised = reply.get("raised")
    if isinstance(raised, dict):
        kind, line = raised.get("type"), raised.get("line")
        ok_line = isinstance(line, int) and not isinstance(line, bool) and 1 <= line <= n_lines
        raised = {"type": re.sub(r"[^\w.]", "", kind)[:80] if isinstance(kind, str) else "an exception",
                  "line": line if ok_line else None}
    else:
        raised = None
    return entries, raised


# -- equality up to reshape and permute -------------------------------------------------------------
def rtol_for(*tensors) -> float:
    return max(RTOL.get(t.dtype, 1e-6) for t in tensors)


def close(a: torch.Tensor, b: torch.Tensor, rtol: float) -> bool:
    """a ≈ b elementwise (same shape): infinities and NaNs must agree exactly, the rest within rtol of b's scale."""
    a, b = a.double(), b.double()
    fin = torch.isfinite(b)
    if not torch.equal(torch.isfinite(a), fin):
        return False
    if not fin.all() and not torch.equal(a[~fin].nan_to_num(0.0, 1.0, -1.0), b[~fin].nan_to_num(0.0, 1.0, -1.0)):
        return False
    if not fin.any():
        return True
    scale = float(b[fin].abs().max())
    return bool(((a[fin] - b[fin]).abs() <= rtol * (scale + 1e-12)).all())


def same_values(a: torch.Tensor, b: torch.Tensor, rtol: float) -> bool:
    """The cheap check: the same multiset of values."""
    return a.numel() == b.numel() and close(a.reshape(-1).double().sort().values, b.reshape(-1).double().sort().values, rtol)


def splits(shape: tuple[int, ...], target: tuple[int, ...]):
    """Shapes refining `shape` (each dim split into consecutive dims) whose sizes are a rearrangement of target."""
    def rec(i, pool):
        if i == len(shape):
            if not pool:
                yield ()
            return
        n = shape[i]
        for k in range(1, len(pool) + 1):
            for pick in set(itertools.permutations(pool, k)):
                if math.prod(pick) == n:
                    rest = list(pool)
                    for p in pick:
                        rest.remove(p)
                    for tail in rec(i + 1, rest):
                        yield pick + tail
    if len(target) <= 5:
        yield from rec(0, list(target))


def stable_perms(shape: tuple[int, ...], target: tuple[int, ...]):
    """Permutations p with shape[p] == target that keep dims of equal size in their order."""
    if len(shape) != len(target) or sorted(shape) != sorted(target):
        return
    for p in itertools.permutations(range(len(shape))):
        if all(shape[j] == t for j, t in zip(p, target)):
            if all(p.index(i) < p.index(j) for i in range(len(shape)) for j in range(i + 1, len(shape)) if shape[i] == shape[j]):
                yield p


def views(a: torch.Tensor, target: tuple[int, ...]):
    count = 0
    for shape in splits(tuple(a.shape), target):
        r = a.reshape(shape)
        for p in stable_perms(shape, target):
            yield r.permute(p)
            count += 1
            if count >= MAX_VIEWS:
                return


def equivalent(a: torch.Tensor, b: torch.Tensor, rtol: float | None = None) -> bool:
    """a equals b up to a reshape (head split/merge) and a permutation of dims, within tolerance."""
    rtol = rtol or rtol_for(a, b)
    if a.numel() != b.numel() or not same_values(a, b, rtol):
        return False
    a, b = a.squeeze(), b.squeeze()
    if a.shape == b.shape and close(a, b, rtol):
        return True
    for x, y in ((a, b), (b, a)):
        if x.dim() <= y.dim() and any(close(v, y, rtol) for v in views(x, tuple(y.shape))):
            return True
    return False


# -- what a differing tensor is instead -----------------------------------------------------------
def explain(c: torch.Tensor, failing: Stage, earlier: list[Stage]) -> str | None:
    """A few cheap transforms of the expected stage and of the stages just before it."""
    rtol = rtol_for(c, failing.tensor) * 10
    for prev in earlier[::-1][:3]:
        if prev.tensor.numel() != c.numel() or prev.name in PARALLEL:
            continue
        x = prev.tensor.double()
        for d in range(x.dim() - 1, -1, -1):
            if x.shape[d] > 1 and equivalent(c, torch.softmax(x, dim=d), rtol):
                dim = d - x.dim()
                if dim == -1:
                    return f"it equals the softmax of the {prev.name}: the {failing.name} step is missing or wrong"
                return f"it equals the {failing.name} with softmax over dim {dim} (of the {prev.name}) instead of dim -1"
    candidates = [(failing.name, failing.tensor)] + [(p.name, p.tensor) for p in earlier[::-1][:3] if p.name not in PARALLEL]
    for name, x in candidates:
        if x.numel() != c.numel():
            continue
        if same_values(c, x, rtol):
            return f"it holds the values of the {name} in a different arrangement (a wrong transpose, view or reshape)"
        if x.dim() >= 2 and x.shape[-1] == x.shape[-2] and equivalent(c, x.transpose(-2, -1), rtol):
            return f"it equals the {name} transposed"
        for y in itertools.islice(views(c, tuple(x.shape)), 24):
            k = affine(y.double(), x.double(), rtol)
            if k is not None:
                kind, value = k
                return (f"it equals the {name} times {value:.4g}" if kind == "ratio"
                        else f"it equals the {name} plus {value:.4g}")
    if torch.isnan(c).any() and not torch.isnan(failing.tensor).any():
        return f"it contains NaN where the {failing.name} has none"
    return None


def affine(y: torch.Tensor, x: torch.Tensor, rtol: float):
    """("ratio", k) when y ≈ k·x, ("offset", k) when y ≈ x + k, for a constant k; else None."""
    fin = torch.isfinite(x) & torch.isfinite(y)
    if not fin.any() or not torch.equal(torch.isfinite(x), torch.isfinite(y)):
        return None
    xs, ys = x[fin], y[fin]
    scale = float(ys.abs().max()) + 1e-12
    denom = float((xs * xs).sum())
    if denom > 0:
        k = float((xs * ys).sum()) / denom
        if abs(k - 1) > 1e-3 and float((ys - k * xs).abs().max()) <= rtol * scale:
            return "ratio", k
    k = float((ys - xs).mean())
    if abs(k) > rtol * scale and float((ys - xs - k).abs().max()) <= rtol * scale:
        return "offset", k
    return None


# -- alignment ------------------------------------------------------------------------------------
def align(entries: list[Traced], stages: list[Stage], raised: dict | None = None) -> Localization | None:
    """The last stage the submission reproduces, the first it doesn't, and the line where they part."""
    if not stages:
        return None
    match = {}
    for s in stages:
        match[s.name] = next((i for i, e in enumerate(entries)
                              if e.tensor.numel() == s.tensor.numel() and equivalent(e.tensor, s.tensor)), None)
    failing = None
    for k, s in enumerate(stages):
        if match[s.name] is not None:
            continue
        fused = s.name not in PARALLEL and any(
            match[g.name] is not None and g.name not in PARALLEL and g.tensor.numel() == s.tensor.numel()
            for g in stages[k + 1:])
        if not fused:
            failing = s
            break
    if failing is None:
        return None
    k = stages.index(failing)
    earlier = [s for s in stages[:k] if match[s.name] is not None]
    through = earlier[-1] if earlier else None
    start = match[through.name] if through is not None else -1
    matched = {i for i in match.values() if i is not None}
    rest = [(i, e) for i, e in enumerate(entries) if i > start and i not in matched
            and not any(equivalent(e.tensor, s.tensor) for s in stages if s.tensor.numel() == e.tensor.numel())]
    same_size = [(i, e) for i, e in rest if e.tensor.numel() == failing.tensor.numel()]
    prefix = (f"your code matches the reference through the {through.name} (line {entries[start].line}); "
              if through is not None else "")
    if raised is not None and raised.get("line") and not same_size:
        return Localization(raised["line"], failing.name, through and through.name,
                            f"{prefix}it raised {raised['type']} at line {raised['line']} before computing the {failing.name}")
    pick = same_size[0] if same_size else (rest[0] if rest else None)
    if pick is None:
        return None
    i, e = pick
    how = explain(e.tensor, failing, earlier) if same_size else (
        f"it has shape {tuple(e.tensor.shape)} where the {failing.name} has shape {tuple(failing.tensor.shape)}")
    how = how or f"it differs from the {failing.name} of the reference"
    return Localization(e.line, failing.name, through and through.name,
                        f"{prefix}the tensor at line {e.line} ({e.op}) is the first that differs: {how}")


# -- entry points ---------------------------------------------------------------------------------
def trace_call(ex, harness) -> dict | None:
    """Constructor arguments, weights and inputs for one traced forward, or None for a custom call."""
    if ex.kind == "function":
        c = ex.config
        B = next(b for b in (2, 3, 4) if b not in c.values())
        q = harness.randn(B, c["L"], c["d_k"], salt=800)
        k = harness.randn(B, c["S"], c["d_k"], salt=801)
        v = harness.randn(B, c["S"], c["d_v"], salt=802)
        blocked = torch.ones(c["L"], c["S"], dtype=torch.bool).triu(diagonal=1 + c["S"] - c["L"])
        return {"init": None, "params": {}, "args": [q, k, v], "kwargs": {"mask": blocked}}
    if ex.kind != "module":
        return None
    init = dict(ex.config)
    if ex.dims.get("dropout"):
        init[ex.dims["dropout"]] = 0.0
    sizes = {v for v in init.values() if isinstance(v, int)}
    heads = ex.dim("heads", init)
    if heads:
        sizes.add(ex.dim("output", init) // heads)
    context = ex.dim("context", init) or 8
    T = next((t for t in (5, 6, 7, 4, 3) if t <= context and t not in sizes), min(context, 5))
    B = next((b for b in (3, 2, 4, 1) if b not in sizes | {T}))
    x = harness.randn(B, T, ex.dim("input", init), salt=803)
    return {"init": init, "params": harness.weights(init, salt=804), "args": [x], "kwargs": {}}


def request(harness, call: dict) -> tuple[dict, dict]:
    tensors = {f"param.{k}": v for k, v in call["params"].items()}
    tensors.update({f"arg{i}": a for i, a in enumerate(call["args"])})
    tensors.update({f"kw_{k}": v for k, v in call["kwargs"].items()})
    header = {"op": "trace", "init": call["init"], "args": [f"arg{i}" for i in range(len(call["args"]))],
              "kwargs": {k: f"kw_{k}" for k in call["kwargs"]}, "dtype": "float64", "train": False, "seed": 0}
    return harness.request(header, tensors)


def localize(ex, harness, source: str) -> Localization | None:
    """Trace the submission in its worker, the reference here, and align them. Never raises."""
    try:
        sandbox = harness.sandbox
        if sandbox is None or sandbox.gone is not None or harness.load_error is not None:
            return None
        lines = stage_lines(ex.solution_path.read_text(encoding="utf-8"))
        call = trace_call(ex, harness)
        if not lines or call is None:
            return None
        stages = stages_from_trace(trace_reference(harness.reference, call), lines)
        reply, out = request(harness, call)
        entries, raised = validate(reply, out, len(source.splitlines()))
        return align(entries, stages, raised)
    except Exception:  # feedback only: a failure here must never fail the grade
        return None


def localize_verdict(verdict, ex, harness, source: str) -> None:
    """Set verdict.localization (a JSON-ready dict, or None) for a failing verdict."""
    found = None if verdict.passed else localize(ex, harness, source)
    verdict.localization = found.to_json() if found is not None else None
