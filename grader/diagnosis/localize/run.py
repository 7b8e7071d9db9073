"""The entry points: trace the submission in its worker and the reference here, align them, set the verdict's line."""
from __future__ import annotations

import logging

import torch

from grader.diagnosis.localize.align import decide
from grader.diagnosis.localize.alignment import Alignment
from grader.diagnosis.localize.gate import acts_on
from grader.diagnosis.localize.rules import Abstain
from grader.diagnosis.localize.model import Localization
from grader.diagnosis.localize.parameters import parameter_line
from grader.diagnosis.localize.raising import raising_line
from grader.diagnosis.localize.source import fill_made_at, fill_written_at
from grader.diagnosis.localize.reference import stage_lines, stages_from_trace, trace_reference
from grader.diagnosis.localize.untrusted import validate, validate_consts

log = logging.getLogger(__name__)


def trace_call(ex, harness) -> dict | None:
    """Constructor arguments, weights and inputs for one traced forward (init, params, args, kwargs and
    non-tensor scalars), or None. An exercise called another way (custom_*) says how in its module's
    trace_call(ex, kit), which may give a list of calls: each is traced while the ones before it reproduce every
    stage (a mistake only some inputs show: rows with no key left)."""
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
    call = {"init": init, "params": harness.weights(init, salt=804), "args": [x], "kwargs": {}}
    shapes = {k: v.shape for k, v in call["params"].items()}
    paths = [{**call, "init": {**init, **s}, "path": s} for s in switched(ex.sweep, init)
             if {k: v.shape for k, v in harness.weights({**init, **s}, salt=804).items()} == shapes]  # the same weights
    return [call, *paths] if paths else call


def switched(sweep, init: dict) -> list[dict]:
    """The sweep's settings that only turn switches (`flash = true`) the traced call has off: each selects another
    path through the same weights, traced after the call before it reproduces every stage."""
    return [dict(s) for s in sweep if s and all(isinstance(v, bool) and k in init and isinstance(init[k], bool)
                                                   and init[k] != v for k, v in s.items())]


def request(harness, call: dict, train: bool) -> tuple[dict, dict]:
    tensors = {f"param.{k}": v for k, v in call["params"].items()}
    tensors.update({f"arg{i}": a for i, a in enumerate(call["args"])})
    tensors.update({f"kw_{k}": v for k, v in call["kwargs"].items()})
    header = {"op": "trace", "init": call["init"], "args": [f"arg{i}" for i in range(len(call["args"]))],
              "kwargs": {k: f"kw_{k}" for k in call["kwargs"]}, "scalars": call.get("scalars", {}),
              "dtype": call.get("dtype", "float64"), "train": train, "seed": 0}
    return harness.request(header, tensors)


def localize(ex, harness, source: str) -> Localization | None:
    """Trace the submission in its worker, the reference here, and align them. Never raises."""
    found = locate(ex, harness, source)
    return None if isinstance(found, Abstain) else found


def locate(ex, harness, source: str) -> Localization | Abstain | None:
    """localize(), with the abstention itself when it still names the mistake (Abstain.cause)."""
    try:
        sandbox = harness.sandbox
        if sandbox is None or sandbox.gone is not None or harness.load_error is not None:
            log.debug("exercise %s: no live worker or the file did not load: no localization", ex.number)
            return None
        lines = stage_lines(ex.solution_path.read_text(encoding="utf-8"))
        calls = trace_call(ex, harness)
        if not lines or not calls:
            log.debug("exercise %s: %s", ex.number, "no marked stages" if not lines else "no traced call")
            return None
        ran = set()
        for call in calls if isinstance(calls, list) else [calls]:
            found = locate_call(ex, harness, source, lines, call, ran)
            if found is not ...:
                return found
        return None
    except Exception:  # feedback only: a failure here must never fail the grade
        log.debug("localization failed for exercise %s", getattr(ex, "number", "?"), exc_info=True)
        return None


def locate_call(ex, harness, source: str, lines, call: dict, ran: set[int]):
    """One traced call aligned with the reference: a Localization, an Abstain, None (no line), or ... when the
    call reproduces every stage (the next call, if any, may show the difference). `ran` holds the lines traced in
    the calls before, which reproduced every stage (this call's lines are added to it); the rules read it for a call
    on another path (`path`: the switches it turns, flash=True), not for other inputs on the same path."""
    n_lines = len(source.splitlines())
    if call.get("dtype", "float64") != "float64":  # only a raise is read: no reference to align with
        return half_raise(source, validate(*request(harness, call, False), n_lines)[1])
    reproduced, traced = True, set()
    for train in (False, True) if ex.dims.get("dropout") else (False,):
        ref_consts = []
        reference = trace_reference(harness.reference, {**call, "train": train}, consts=ref_consts)
        stages = stages_from_trace(reference, lines)
        reply = request(harness, call, train)
        entries, raised = validate(*reply, n_lines)
        log.debug("exercise %s (train=%s): %d stages, %d entries, raised %s", ex.number, train, len(stages),
                  len(entries), raised)
        found = decide(entries, stages, raised, train=train, source=source,
                       reference=[r for r in reference if not any(r.tensor is s.tensor for s in stages)],
                       consts=validate_consts(*reply, n_lines), reference_consts=ref_consts + reference,
                       ran=frozenset(ran) if call.get("path") else frozenset())
        if isinstance(found, Abstain):
            return found  # no line can be trusted in evaluation mode: a training-mode trace does not change that
        if found is not None or raised is not None:
            return found
        reproduced = reproduced and bool(stages) and Alignment(entries, stages).failing is None
        traced.update(e.line for e in entries)
    if reproduced:
        ran.update(traced)
    return ... if reproduced else None


def half_raise(source: str, raised: dict | None):
    """A call traced in half precision (its values round: only a raise is read): a masked_fill that raised there with
    its fill written on the line (-1e9 overflows float16) is that line; one read from a local name made once, of
    constants alone, is the line making it (fill_made_at); one read from a constant of the module: no line. Nothing raised: ... (nothing found)."""
    if raised is None:
        return ...
    if raised.get("line") and fill_written_at(source, raised["line"]):
        return Localization(raised["line"], "masked_scores", None,
                            f"in half precision it raised {raised['type']} at line {raised['line']}, filling the "
                            f"masked scores with a value the dtype cannot hold")
    if raised.get("line") and (a := fill_made_at(source, raised["line"])) is not None:
        return Localization(a, "masked_scores", None,
                            f"in half precision it raised {raised['type']} at line {raised['line']}, filling the "
                            f"masked scores with the value made at line {a}, which the dtype cannot hold")
    return None


def localize_verdict(verdict, ex, harness, source: str) -> None:
    """Set verdict.localization (a JSON-ready dict, or None) for a failing verdict whose worker is still alive.

    Call it after the diagnosis (and after any heat-map capture: a trace that runs out of time ends the worker).
    """
    verdict.localization = None
    if verdict.passed or verdict.state == "not_started" or any(d.id == "not_started" for d in verdict.diagnoses):
        return
    found = locate(ex, harness, source)
    abstained = isinstance(found, Abstain)
    if abstained:  # no line, but the difference may still name the mistake
        if found.cause is not None:
            from grader.diagnosis import named_by_localization

            verdict.diagnoses = named_by_localization(verdict.diagnoses, found.cause, found.evidence)
        found = None
    params = [t for t in verdict.failures() if t.code in ("parameter_names", "parameter_shapes")]
    if found is None and params:
        found = parameter_line(ex, harness, source, params[0].init)
    if found is None and not abstained:
        from grader.diagnosis import RAISED_CODES

        found = raising_line(verdict, source, RAISED_CODES)
    if found is not None and found.cause is not None:
        from grader.diagnosis import named_by_localization

        verdict.diagnoses = named_by_localization(verdict.diagnoses, found.cause, found.evidence)
    named = verdict.diagnoses[0].id if verdict.diagnoses else None
    if found is not None and not acts_on(named, found.stage):
        log.debug("exercise %s: line %d is at the %s, which %s does not act on: no line", ex.number, found.line,
                  found.stage, named)
        found = None
    verdict.localization = found.to_json() if found is not None else None
