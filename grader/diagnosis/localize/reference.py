"""The reference's stages: its `# stage: name` comments, and the tensors its trace records on those lines.

A reference names its stages with a trailing comment on the line that computes them
(`att = q @ k.transpose(-2, -1)  # stage: scores`); a line computing several lists them in order,
and they are its last recorded ops.
"""
from __future__ import annotations

import io
import re
import tokenize

import torch

from grader.diagnosis.localize.model import Stage, Traced
from grader.sandbox.trace import Tracer

STAGE_COMMENT = re.compile(r"\bstage:\s*([a-z_]+(?:\s*,\s*[a-z_]+)*)")


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
            found.append((i, Stage(name, line, e.tensor, data=getattr(e, "data", True))))
    return [s for _, s in sorted(found, key=lambda p: p[0])]


def code_file(obj) -> str | None:
    """The file a reference class or function was compiled from (it is not in sys.modules)."""
    fn = getattr(obj, "forward", obj)
    code = getattr(fn, "__code__", None)
    return code.co_filename if code is not None else None


def trace_reference(ref, call: dict, *, seed: int = 0, consts: list | None = None) -> list[Traced]:
    """Run the trusted reference on the call the worker traced, under the same tracer; its consts (masks, tables)
    are appended to `consts` when given."""
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
    if consts is not None:
        consts.extend(Traced(e.op, e.line, e.tensor, e.data, e.uses) for e in tracer.consts)
    return [Traced(e.op, e.line, e.tensor, e.data, e.uses) for e in tracer.entries]
