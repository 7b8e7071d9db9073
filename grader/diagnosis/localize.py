"""Points at the line: aligns a trace of the submission's forward with the reference's named stages.

The reference solutions name their stages with a trailing comment on the line that computes them
(`att = q @ k.transpose(-2, -1)  # stage: scores`; a line computing several lists them in order,
and they are its last recorded ops). The submission's trace comes from the worker and is untrusted:
every entry is checked and anything malformed is dropped. It is feedback only, never the verdict,
and any failure here means no localization rather than a failed grade.
"""
from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from dataclasses import asdict, dataclass

import torch

from grader.diagnosis.layout import affine, close, equivalent, rtol_for, same_values, views
from grader.sandbox.trace import MAX_ELEMENTS, MAX_ENTRIES, Tracer

STAGE_COMMENT = re.compile(r"\bstage:\s*([a-z_]+(?:\s*,\s*[a-z_]+)*)")
PARALLEL = {"queries", "keys", "values", "repeated_keys", "repeated_values", "cached_keys", "cached_values"}  # computed side by side, not in a chain
DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


@dataclass
class Localization:
    line: int
    stage: str
    matched_through: str | None
    evidence: str
    cause: str | None = None  # the diagnosis id the evidence amounts to, when it names one (not part of the JSON)

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "cause"}


# What a difference found at a stage amounts to, as a diagnosis id (when it is that plain).
REARRANGED = {"queries": "heads_split_wrong", "keys": "heads_split_wrong", "values": "heads_split_wrong",
              "merged": "heads_merge_wrong"}
MISSING_STEP = {"scaled_scores": "no_scaling", "masked_scores": "mask_missing"}


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
    strict: bool = False  # a layout-only step after an earlier stage (merged heads): matched in its own shape


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
    kwargs = {**kwargs, **call.get("scalars", {})}
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


# -- what a differing tensor is instead -----------------------------------------------------------
LABELS = {"dropped_weights": "weights after dropout", "context": "per-head context", "merged": "merged heads",
          "weights": "attention weights", "masked_unscaled_scores": "masked scores before scaling"}


def label(name: str) -> str:
    return LABELS.get(name, name.replace("_", " "))


def blocked(t: torch.Tensor) -> torch.Tensor:
    """Positions a score tensor blocks: -inf, or a fill like -1e9."""
    return torch.isneginf(t) | (t <= -1e4)


def shaped_as(c: torch.Tensor, x: torch.Tensor, limit: int = 24):
    """c itself when it has x's shape, else a few of its rearrangements with that shape."""
    if c.shape == x.shape:
        return [c]
    return list(itertools.islice(views(c, tuple(x.shape)), limit))


def mask_difference(c: torch.Tensor, x: torch.Tensor, name: str, rtol: float) -> tuple[str, str | None] | None:
    """How c differs from the masked tensor x, when x has blocked positions and the rest agrees."""
    want = blocked(x)
    if not want.any() or want.all():
        return None
    for y in shaped_as(c, x):
        got = blocked(y.double())
        if torch.equal(got, want):
            continue
        if torch.equal(got, ~want):
            return (f"it blocks exactly the positions the {label(name)} keep and keeps the blocked ones: the mask is inverted",
                    "mask_inverted")
        keep = ~(got | want)
        if keep.any() and not close(y[keep], x[keep], rtol):
            continue
        if not got.any():
            fill = y[want].double()
            what = f"{float(fill[0]) + 0.0:.4g}" if bool((fill == fill[0]).all()) else "finite values"
            return (f"where the {label(name)} are blocked (-inf) it holds {what}: blocked scores must be -inf "
                    f"so that the softmax gives them weight 0", "mask_zero_fill" if what == "0" else None)
        extra, missing = int((got & ~want).sum()), int((want & ~got).sum())
        if extra and not missing:
            n = x.shape[-1]
            diag = torch.eye(n, dtype=torch.bool).expand_as(got) if x.shape[-2] == n else None
            if diag is not None and torch.equal(got & ~want, diag):
                return f"it also blocks the diagonal, which the {label(name)} keep (each token may attend to itself)", "mask_diagonal"
            return f"it blocks {extra} position(s) the {label(name)} keep", None
        if missing and not extra:
            return f"it leaves {missing} position(s) open that the {label(name)} block", None
        return f"it blocks different positions than the {label(name)}", None
    return None


def softmax_of(c: torch.Tensor, bases: list[Stage], rtol: float):
    """(stage, dim) when c is the softmax of one of the bases over some dim."""
    for base in bases:
        x = base.tensor.double()
        if x.numel() != c.numel():
            continue
        for d in range(x.dim() - 1, -1, -1):
            if x.shape[d] > 1 and equivalent(c, torch.softmax(x, dim=d), rtol):
                return base, d - x.dim()
    return None


def explain(c: torch.Tensor, failing: Stage, later: list[Stage], earlier: list[Stage], alts: list[Stage]) -> tuple[str, Stage | None, str | None]:
    """How c differs, by a few cheap transforms of the expected stage and its neighbours; the stage c derives from;
    and the diagnosis id that names the difference, when one does."""
    rtol = rtol_for(c, failing.tensor) * 10
    chain = [s for s in earlier[::-1] if s.name not in PARALLEL][:3]
    around = [failing] + later[:1] + alts
    for x in around:
        if x.tensor.numel() == c.numel() and (why := mask_difference(c, x.tensor.double(), x.name, rtol)):
            return why[0], None, why[1]
    found = softmax_of(c, chain + alts, rtol)
    if found is not None:
        base, dim = found
        if dim == -1:
            return (f"it equals the softmax of the {label(base.name)}: the {label(failing.name)} step is missing or wrong", base,
                    MISSING_STEP.get(failing.name))
        return f"it equals the {label(failing.name)} with softmax over dim {dim} instead of dim -1", base, "softmax_wrong_dim"
    for x in around + chain:
        if x.tensor.numel() != c.numel():
            continue
        t = x.tensor.double()
        if same_values(c, t, rtol):
            return (f"it holds the values of the {label(x.name)} in a different arrangement (a wrong transpose, view or reshape)",
                    None, REARRANGED.get(x.name))
        if t.dim() >= 2 and t.shape[-1] == t.shape[-2] and equivalent(c, t.transpose(-2, -1), rtol):
            return f"it equals the {label(x.name)} transposed", None, None
        for y in shaped_as(c, t):
            k = affine(y.double(), t, rtol)
            if k is not None:
                word = "times" if k[0] == "ratio" else "plus"
                return f"it equals the {label(x.name)} {word} {k[1]:.4g}", None, None
    if torch.isnan(c).any() and not torch.isnan(failing.tensor).any():
        return f"it contains NaN (the reference's {label(failing.name)}: none)", None, None
    return f"it differs from the {label(failing.name)} of the reference", None, None


def explain_part(c: torch.Tensor, failing: Stage, later, earlier, alts) -> tuple[str, Stage | None, str | None]:
    """explain() for a whole stage, or for one head of it (each stage sliced the same way)."""
    if c.numel() == failing.tensor.numel():
        return explain(c, failing, later, earlier, alts)
    shape = failing.tensor.shape
    fallback = None
    for d in part_dims(c, failing):
        for j in range(shape[d]):
            def cut(group):
                return [Stage(s.name, s.line, s.tensor.select(d, j)) for s in group
                        if s.tensor.dim() == len(shape) and s.tensor.shape[d] == shape[d]]
            how, base, cause = explain(c, cut([failing])[0], cut(later), cut(earlier), cut(alts))
            if not how.startswith("it differs"):
                return how.replace(" the ", " one head of the ", 1), base, cause
            fallback = fallback or (how, base, cause)
    return fallback or (f"it differs from the {label(failing.name)} of the reference", None, None)


# -- alignment ------------------------------------------------------------------------------------
def prepare(stages: list[Stage]) -> list[Stage]:
    """Mark layout-only stages (merged after context, dropped weights in eval) and add the
    orders that are as right as the reference's (masking before scaling): returns those alternatives."""
    for k, s in enumerate(stages):
        s.strict = any(p.tensor.numel() == s.tensor.numel() and equivalent(s.tensor, p.tensor) for p in stages[:k])
    by = {s.name: s for s in stages}
    alts = []
    if {"scores", "scaled_scores", "masked_scores"} <= by.keys():
        m, raw = by["masked_scores"], by["scores"]
        if m.tensor.shape == raw.tensor.shape:
            alts.append(Stage("masked_unscaled_scores", m.line, torch.where(blocked(m.tensor), m.tensor, raw.tensor)))
    return alts


def part_dims(t: torch.Tensor, s: Stage) -> list[int]:
    """Dims of the stage whose one slice has t's size (one head, or one batch row, of a loop). Never one of the
    last two dims (tokens, features): a column of the angles is the positions themselves, not a loop's part."""
    n = s.tensor.numel()
    return [d for d, size in enumerate(s.tensor.shape[:-2]) if size > 1 and n // size == t.numel() and t.numel() < n]


def is_part(t: torch.Tensor, s: Stage) -> bool:
    """t is one slice of the stage (a per-head loop computes the stage head by head)."""
    return any(equivalent(t, s.tensor.select(d, j)) for d in part_dims(t, s) for j in range(s.tensor.shape[d]))


def matches(t: torch.Tensor, s: Stage, parts: bool = True) -> bool:
    if t.numel() != s.tensor.numel():
        return parts and not s.strict and is_part(t, s)
    if s.strict:
        a, b = t.squeeze(), s.tensor.squeeze()
        return a.shape == b.shape and close(a, b, rtol_for(a, b))
    return equivalent(t, s.tensor)


def first_failing(stages: list[Stage], match: dict) -> Stage | None:
    """The first stage nothing reproduces, unless a later stage of its size is reproduced (the step was fused)."""
    for k, s in enumerate(stages):
        if match[s.name] is not None:
            continue
        fused = s.name not in PARALLEL and any(
            match[g.name] is not None and g.name not in PARALLEL and g.tensor.numel() == s.tensor.numel()
            for g in stages[k + 1:])
        if not fused:
            return s
    return None


@dataclass
class Alignment:
    entries: list[Traced]
    stages: list[Stage]
    alts: list[Stage]
    match: dict
    failing: Stage
    train: bool

    @property
    def earlier(self) -> list[Stage]:
        k = self.stages.index(self.failing)
        return [s for s in self.stages[:k] if self.match[s.name] is not None]

    @property
    def through(self) -> Stage | None:
        return self.earlier[-1] if self.earlier else None

    def at(self, line: int, stage: Stage, evidence: str, through: Stage | None = ..., cause: str | None = None) -> Localization:
        through = self.through if through is ... else through
        return Localization(line, stage.name, through.name if through else None, evidence, cause)

    def prefix(self) -> str:
        t = self.through
        return "" if t is None else (f"your code matches the reference through the {label(t.name)} "
                                     f"(line {self.entries[self.match[t.name]].line}); ")


def dropout_misplaced(al: Alignment, odd) -> Localization | None:
    """A dropout that is not the reference's: active in evaluation, or applied to another tensor."""
    for i, e in odd:
        if "dropout" not in e.op:
            continue
        if not al.train:
            earlier = [x for x in al.entries[:i] if x.tensor.numel() == e.tensor.numel()][-4:]
            if not any(dropped_from(e.tensor, x.tensor) for x in earlier):
                continue  # an inactive dropout passing on a tensor that differs for another reason
            stage = next((s for s in al.stages if s.name == "dropped_weights"), al.failing)
            before = [s for s in al.stages[:al.stages.index(stage)] if al.match[s.name] is not None and s.name != stage.name]
            return al.at(e.line, stage, f"the tensor at line {e.line} ({e.op}) is the first that differs: dropout is active "
                                        f"in evaluation mode (it must act only in training mode)", before[-1] if before else None)
        weights = next((s for s in al.stages if s.name == "weights"), None)
        if weights is not None and (part_dims(e.tensor, weights) or dropped_from(e.tensor, weights.tensor)):
            continue  # on (a head of) the weights, with other random draws than the reference: not a mistake
        src = next((s for s in al.stages if s.tensor.numel() == e.tensor.numel() and dropped_from(e.tensor, s.tensor)), None)
        what = f"the {label(src.name)}" if src is not None else f"a tensor of shape {tuple(e.tensor.shape)}"
        return al.at(e.line, al.failing, f"dropout is applied at line {e.line} to {what}; "
                                         f"the reference applies it to the attention weights")
    return None


def dropped_from(c: torch.Tensor, x: torch.Tensor) -> bool:
    """c looks like dropout (p = 0.5) of x: zeros, and twice x elsewhere, up to layout."""
    for y in shaped_as(c, x):
        kept = y != 0
        if 0 < int(kept.sum()) < y.numel() and close(y[kept], 2 * x[kept], rtol_for(y, x) * 10):
            return True
    return False


def rearranged_input(al: Alignment, before: int) -> tuple[int, Traced, Stage] | None:
    """The last queries/keys/values the submission computed before an entry, when laid out unlike the reference's."""
    found = []
    for s in al.earlier:
        if s.name not in PARALLEL:
            continue
        last = [i for i, e in enumerate(al.entries[:before]) if matches(e.tensor, s)]
        got = al.entries[last[-1]].tensor.shape if last else None
        if got is not None and got != s.tensor.shape and got[-1] == s.tensor.shape[-1]:  # not a transpose for a matmul
            found.append((last[-1], al.entries[last[-1]], s))
    return min(found, key=lambda f: f[0]) if found else None


def return_after(source: str, line: int) -> int | None:
    """The first return statement after line in the function holding it (the source is parsed, never run)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not funcs:
        return None
    inner = max(funcs, key=lambda n: n.lineno)
    returns = sorted(n.lineno for n in ast.walk(inner) if isinstance(n, ast.Return) and n.lineno > line)
    return returns[0] if returns else None


def also_computed(e: Traced, reference: list[Traced]) -> bool:
    """The reference computes this tensor too, on a line that names no stage (x[..., :half], cos, a slice of x):
    an intermediate both compute is not where the submission parts from the reference."""
    return any(r.tensor.numel() == e.tensor.numel() and equivalent(e.tensor, r.tensor) for r in reference)


def half_precision(entries: list[Traced], before: int) -> Traced | None:
    """The first entry before index `before` computed in float16/bfloat16 in a float64 trace: where precision is lost."""
    return next((e for e in entries[:before] if e.tensor.dtype in (torch.float16, torch.bfloat16)), None)


def frequencies_only(c: torch.Tensor, angles: Stage) -> bool:
    """Angles whose positions column is right (frequency 0 is base**0 = 1) while others differ: the frequencies are
    wrong, and they are computed from constants (torch.arange), which the trace does not follow."""
    x = angles.tensor.double()
    if c.shape != x.shape or x.dim() != 2 or x.shape[-1] < 2:
        return False
    return close(c[:, 0].double(), x[:, 0], rtol_for(c, x) * 10)


MASKING = {"masked_fill", "masked_fill_", "where"}
PATTERN = ("it blocks", "it leaves", "it also blocks")  # how a mask's blocked positions differ (not its fill value)


def mask_built_at(source: str, line: int) -> tuple[bool, int | None]:
    """Where the mask used by the masking call on `line` was built, when it is a local variable: (True, its one
    assignment's line), (True, None) when several assignments could be the one that is wrong, (False, None) when
    the call builds its mask in place (`mask == 0`, `~pad.view(...)`, `self.tril[:T, :T]`) or there is no such call.
    The source is parsed, never run."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False, None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= line <= (n.end_lineno or n.lineno)
             and isinstance(n.func, ast.Attribute) and n.func.attr in MASKING and n.args]
    names = [c.args[0].id for c in calls if isinstance(c.args[0], ast.Name)]
    if not calls or len(names) != len(calls) or len(set(names)) != 1:
        return False, None
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.lineno <= line <= (n.end_lineno or n.lineno)]
    scope = max(funcs, key=lambda n: n.lineno) if funcs else tree
    found = set()
    for node in ast.walk(scope):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            if any(isinstance(x, ast.Name) and x.id == names[0] for x in ast.walk(t)):
                found.add(node.lineno)
    found.discard(line)
    if not found:  # an argument, or built on this line: the call itself is where the mask is used wrongly
        return False, None
    return True, (found.pop() if len(found) == 1 else None)


def moved_mask(al: "Alignment", line: int, how: str, source: str) -> tuple[bool, Localization | None]:
    """A mask that blocks other positions than the reference's, applied at `line` through a variable built on another
    line: that line when one assignment builds it, else nothing (which of several is wrong is not known)."""
    if not how.startswith(PATTERN):
        return False, None
    elsewhere, built = mask_built_at(source, line)
    if not elsewhere:
        return False, None
    if built is None:
        return True, None
    return True, al.at(built, al.failing, f"{al.prefix()}the mask applied at line {line} is built at line {built}, and "
                                          f"{how.removeprefix('it ')}")


def swapped_roles(al: "Alignment", line: int) -> Localization | None:
    """Queries, keys and values each computed right, by one call that returns them together (a fused split), but
    the scores combine the wrong ones: the roles are assigned in another order on that line."""
    if al.failing.name != "scores" or any(al.match.get(n) is None for n in ("queries", "keys", "values")):
        return None
    where = {al.entries[al.match[n]].line for n in ("queries", "keys", "values")}
    if len(where) != 1 or line in where:
        return None
    split = where.pop()
    return al.at(split, al.failing, f"line {split} computes the queries, keys and values, but the scores at line {line} "
                                    f"combine other ones than the reference's queries and keys: the results of line "
                                    f"{split} are taken in another order than they are laid out", through=None)


def align(entries: list[Traced], stages: list[Stage], raised: dict | None = None, *, train: bool = False,
          source: str = "", reference: list[Traced] = ()) -> Localization | None:
    """The last stage the submission reproduces, the first it doesn't, and the line where they part."""
    if not stages:
        return None
    alts = prepare(stages)
    match = {s.name: next((i for i, e in enumerate(entries) if matches(e.tensor, s)), None) for s in stages}
    failing = first_failing(stages, match)
    if failing is None:
        return None
    al = Alignment(entries, stages, alts, match, failing, train)
    earlier, through = al.earlier, al.through
    start = match[through.name] if through is not None else -1
    odd = [(i, e) for i, e in enumerate(entries) if not any(matches(e.tensor, s) for s in stages + alts)
           and not also_computed(e, reference)]
    if found := dropout_misplaced(al, odd):  # (a training pass runs only when evaluation showed nothing)
        return found
    if train:  # anything else differing in training mode may be other random draws: only dropout itself is located
        pick = next((e for e in entries[match["weights"] + 1:] if e.tensor.numel() != failing.tensor.numel()), None) \
            if failing.name == "dropped_weights" and match.get("weights") is not None else None
        if pick is None or any("dropout" in x.op for x in entries):
            return None
        return al.at(pick.line, failing, f"{al.prefix()}no dropout is applied in training mode: the tensor at line "
                                         f"{pick.line} ({pick.op}) uses the attention weights without it")
    scrambled = next(((i, e, s) for i, e in odd for s in [failing] + earlier
                      if e.tensor.numel() == s.tensor.numel() and same_values(e.tensor, s.tensor, rtol_for(e.tensor, s.tensor))), None)
    rest = [(i, e) for i, e in odd if i > start]
    same_size = [(i, e) for i, e in rest if e.tensor.numel() == failing.tensor.numel() or part_dims(e.tensor, failing)]
    pick = same_size[0] if same_size else (rest[0] if rest else None)
    if scrambled is not None and (pick is None or scrambled[0] <= pick[0]):
        i, e, s = scrambled
        if s is failing and (swapped := swapped_roles(al, e.line)) is not None:
            return swapped
        before = [p for p in stages[:stages.index(s)] if match[p.name] is not None]
        return al.at(e.line, s, f"the tensor at line {e.line} ({e.op}) holds the values of the {label(s.name)} in a different "
                                f"arrangement (a wrong transpose, view or reshape)", before[-1] if before else None,
                    REARRANGED.get(s.name))
    if pick is not None and not same_size and (moved := rearranged_input(al, pick[0])) is not None:
        i, e, s = moved
        return al.at(e.line, s, f"the {label(s.name)} at line {e.line} have shape {tuple(e.tensor.shape)} where the reference's "
                                f"have {tuple(s.tensor.shape)}: the same numbers, but the tensor at line {pick[1].line} "
                                f"({pick[1].op}) then combines the wrong dimensions", None)
    if raised is not None and raised.get("line") and (pick is None or (not same_size and pick[1].line >= raised["line"])):
        if failing.name == "masked_scores" and mask_built_at(source, raised["line"]) == (True, None):
            return None  # raised applying a mask built over several lines: which one is wrong is not known
        return al.at(raised["line"], failing, f"{al.prefix()}it raised {raised['type']} at line {raised['line']} "
                                              f"before computing the {label(failing.name)}")
    if pick is None:
        if through is None or any(s.name not in PARALLEL for s in stages[stages.index(failing) + 1:] if match[s.name] is not None):
            return None
        line = entries[start].line
        ret = return_after(source, line)
        if ret is not None:
            return al.at(ret, failing, f"your code matches the reference through the {label(through.name)} (line {line}) "
                                       f"and returns at line {ret} without the {label(failing.name)} step")
        return al.at(line, failing, f"your code matches the reference through the {label(through.name)} (line {line}) "
                                    f"and computes nothing from there: the {label(failing.name)} step is missing")
    i, e = pick
    if failing.name == "angles" and (not same_size or frequencies_only(e.tensor, failing)):
        return None  # the angles come from untraced constants (arange, base ** ...): no line can be trusted
    if (low := half_precision(entries, i + 1)) is not None:
        return al.at(low.line, failing, f"{al.prefix()}the tensor at line {low.line} ({low.op}) is computed in "
                                        f"{str(low.tensor.dtype).removeprefix('torch.')}, and from there the "
                                        f"{label(failing.name)} differ: keep this step in float32 or float64")
    if not same_size:
        return al.at(e.line, failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the first that differs: it has shape "
                                      f"{tuple(e.tensor.shape)} (the reference's {label(failing.name)}: {tuple(failing.tensor.shape)})")
    how, base, cause = explain_part(e.tensor, failing, stages[stages.index(failing) + 1:], earlier, alts)
    if (swapped := swapped_roles(al, e.line)) is not None:
        return swapped
    moved, found = moved_mask(al, e.line, how, source)
    if moved:
        return found
    if base is not None and through is not None and base in earlier and earlier.index(base) < earlier.index(through) \
            and through.name not in PARALLEL:
        line = entries[start].line
        return al.at(line, failing, f"the result of line {line} ({label(through.name)}) is never used: the tensor at line "
                                    f"{e.line} ({e.op}) is the softmax of the {label(base.name)}")
    return al.at(e.line, failing, f"{al.prefix()}the tensor at line {e.line} ({e.op}) is the first that differs: {how}",
                 cause=cause)


# -- parameters the grader could not load ---------------------------------------------------------
def assignments(source: str) -> dict[str, int]:
    """Attribute name -> the line of its first `self.<name> = ...` in the file (where a layer is created)."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                found.setdefault(t.attr, node.lineno)
    return found


def parameter_line(ex, harness, source: str, init: dict | None = None) -> Localization | None:
    """For parameters that do not match the contract (names, shapes, a bias ignored), the line creating the layer.

    The mismatch itself is behaviour (the parameters the worker reports); the line is where that layer's
    attribute is assigned. Never raises."""
    try:
        return _parameter_line(ex, harness, source, init or ex.config) if ex.kind == "module" else None
    except Exception:  # feedback only
        return None


def _parameter_line(ex, harness, source: str, init: dict) -> Localization | None:
    got = {str(k): tuple(v) for k, v in harness.describe(init).get("params", {}).items()}
    want = {k: tuple(v.shape) for k, v in harness.weights(init).items()}
    odd = sorted(set(got) ^ set(want)) + sorted(k for k in set(got) & set(want) if got[k] != want[k])
    lines = assignments(source)
    for name in odd:
        layer = name.split(".")[0]
        if layer in lines:
            what = ("is not a parameter the contract has" if name not in want else
                    "is missing: the layer is created without it" if name not in got else
                    f"has shape {got[name]}, the contract's is {want[name]}")
            return Localization(lines[layer], "parameters", None,
                                f"the grader loads its weights by name: {name} {what} (the layer is created at line "
                                f"{lines[layer]})")
    return None


# -- entry points ---------------------------------------------------------------------------------
def trace_call(ex, harness) -> dict | None:
    """Constructor arguments, weights and inputs for one traced forward (init, params, args, kwargs and
    non-tensor scalars), or None. An exercise called another way (custom_*) says how in its module's
    trace_call(ex, kit)."""
    if ex.kind.startswith("custom_"):
        from grader.pack import exercise_module

        em = exercise_module(ex)
        return em.trace_call(ex, harness) if em is not None and em.trace_call is not None else None
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
        init[ex.dims["dropout"]] = 0.5  # inactive in evaluation mode; in training mode the same draws as the reference
    sizes = {v for v in init.values() if isinstance(v, int)}
    heads = ex.dim("heads", init)
    if heads:
        sizes.add(ex.dim("output", init) // heads)
    context = ex.dim("context", init) or 8
    T = next((t for t in (5, 6, 7, 4, 3) if t <= context and t not in sizes), min(context, 5))
    B = next((b for b in (3, 2, 4, 1) if b not in sizes | {T}))
    x = harness.randn(B, T, ex.dim("input", init), salt=803)
    return {"init": init, "params": harness.weights(init, salt=804), "args": [x], "kwargs": {}}


def request(harness, call: dict, train: bool) -> tuple[dict, dict]:
    tensors = {f"param.{k}": v for k, v in call["params"].items()}
    tensors.update({f"arg{i}": a for i, a in enumerate(call["args"])})
    tensors.update({f"kw_{k}": v for k, v in call["kwargs"].items()})
    header = {"op": "trace", "init": call["init"], "args": [f"arg{i}" for i in range(len(call["args"]))],
              "kwargs": {k: f"kw_{k}" for k in call["kwargs"]}, "scalars": call.get("scalars", {}),
              "dtype": "float64", "train": train, "seed": 0}
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
        n_lines = len(source.splitlines())
        for train in (False, True) if ex.dims.get("dropout") else (False,):
            reference = trace_reference(harness.reference, {**call, "train": train})
            stages = stages_from_trace(reference, lines)
            entries, raised = validate(*request(harness, call, train), n_lines)
            found = align(entries, stages, raised, train=train, source=source,
                          reference=[r for r in reference if not any(r.tensor is s.tensor for s in stages)])
            if found is not None or raised is not None:
                return found
        return None
    except Exception:  # feedback only: a failure here must never fail the grade
        return None


def localize_verdict(verdict, ex, harness, source: str) -> None:
    """Set verdict.localization (a JSON-ready dict, or None) for a failing verdict whose worker is still alive.

    Call it after the diagnosis (and after any heat-map capture: a trace that runs out of time ends the worker).
    """
    verdict.localization = None
    if verdict.passed or verdict.state == "not_started" or any(d.id == "not_started" for d in verdict.diagnoses):
        return
    found = localize(ex, harness, source)
    params = [t for t in verdict.failures() if t.code in ("parameter_names", "parameter_shapes")]
    if found is None and params:
        found = parameter_line(ex, harness, source, params[0].init)
    verdict.localization = found.to_json() if found is not None else None
    if found is not None and found.cause is not None:
        from grader.diagnosis import named_by_localization

        verdict.diagnoses = named_by_localization(verdict.diagnoses, found.cause, found.evidence)
