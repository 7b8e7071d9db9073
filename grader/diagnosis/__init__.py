"""Names the mistake: from the submission's behaviour under inputs and weights the grader controls."""
from __future__ import annotations

from grader.diagnosis.diagnoses import known, make, text_of, texts
from grader.results import Diagnosis, Status, Verdict

__all__ = ["diagnose", "known", "make", "texts"]

def _merge(found: list[Diagnosis]) -> list[Diagnosis]:
    out: dict[str, Diagnosis] = {}
    for d in found:
        if d.id in out:
            out[d.id].evidence += [e for e in d.evidence if e not in out[d.id].evidence]
        else:
            out[d.id] = d
    return list(out.values())


def diagnose(ex, harness, verdict: Verdict, *, violations=(), syntax=None, untouched=False) -> list[Diagnosis]:
    """Most likely mistakes first. Empty only when nothing failed."""
    from grader.sandbox import SubmissionError, WorkerGone

    if syntax is not None:
        return [make("syntax_error", f"line {syntax.lineno}: {syntax.msg}")]
    if violations:
        return _merge([make(v.rule, str(v)) for v in violations])
    failures = verdict.failures()
    load = harness.load_error
    not_impl = [f for f in failures if f.code == "not_implemented"]
    if untouched or (isinstance(load, SubmissionError) and load.not_implemented) or (failures and len(not_impl) == len(failures)):
        where = not_impl[0].message if not_impl else "the file is unchanged from the skeleton"
        return [make("not_started", where)]
    if isinstance(load, WorkerGone):
        return [make(load.reason, load.detail)]
    if isinstance(load, SubmissionError):  # refused while it was imported (a library class changed): forbidden_api
        code = "memory_limit" if load.memory else "forbidden_api" if load.type == "ForbiddenAPI" else "import_error"
        return [make(code, str(load))]
    from grader.pack import exercise_module

    exercise_module(ex)  # its DIAGNOSES texts are known from here on (built once per process)
    forbidden = [f for f in failures if f.code == "forbidden_api"]
    if forbidden:  # whatever else failed followed from it: every later answer of the worker reports it
        return [make("forbidden_api", forbidden[0].message)]
    found: list[Diagnosis] = []
    gone = harness.sandbox.gone if harness.sandbox is not None else None
    if gone is not None and gone.reason == "timeout":
        found += raised_before_timeout(failures)
        found.append(make("timeout", gone.detail))
    for f in failures:
        if f.status is Status.ERROR and f.code == "out_of_memory":
            found.append(make("memory_limit", f.message))
        elif f.status is Status.ERROR and f.code == "worker_exit":
            found.append(make("crash", f.message))
    if gone is None or gone.reason != "timeout":
        from grader.diagnosis.behaviour import behavioural

        found += behavioural(ex, harness, verdict)
    shapes = [f for f in failures if f.code == "shape_mismatch"]
    if shapes and len(shapes) == len(failures) and all(d.id == "wrong_output" for d in found):
        found = [make("output_shape", *(f.message for f in shapes[:3]))]  # every value compared was right
    if not found:
        nan = next((f.message for f in failures if f.code == "non_finite"), None)
        found.append(make("nan_output", nan) if nan else make("wrong_output", *(f"{f.name}: {f.message}" for f in failures[:2])))
    return rank(_merge(found), verdict)


def raised_before_timeout(failures) -> list[Diagnosis]:
    """What the submission raised before it ran out of time: an exception on the small calls that came first is the
    cause to fix first (the probes cannot run any more to say so); the timeout of a later, larger call comes after."""
    for f in failures:
        if f.status is Status.TIMEOUT:
            return []
        if f.status is Status.ERROR and f.code in RAISED_CODES:
            return [make("runtime_error", f.message)]
    return []


def rank(found: list[Diagnosis], verdict: Verdict) -> list[Diagnosis]:
    """Causes before secondary findings: a contract detail that only the construction check saw (no error for
    heads that do not divide) goes after what the submission's behaviour shows, and symptoms go last."""
    construct_only = {t.message for t in verdict.failures() if t.code == "construct_should_raise"}

    def secondary(d: Diagnosis) -> int:
        if d.id == "heads_not_divisible" or (d.id == "api_mismatch" and d.evidence and set(d.evidence) <= construct_only):
            return 1
        return 2 if d.id in SYMPTOMS else 0

    return sorted(found, key=secondary)


SYMPTOMS = ("wrong_output", "nan_output")  # what is left when no cause is named


def named_by_localization(found: list[Diagnosis], cause: str, evidence: str) -> list[Diagnosis]:
    """When no rule named the mistake, the stage where the submission parts from the reference can: a mistake
    no variant models still gets its name (heads merged by another wrong transpose, a mask built another way)."""
    if found and found[0].id not in SYMPTOMS:
        return found
    return [make(cause, evidence)] + [d for d in found if d.id not in ("wrong_output", cause)]


GENERIC_CODES = ("value_mismatch", "non_finite", "future_weight", "future_token_leak", "diagonal_blocked", "check_failed",
                 "shape_mismatch", "no_gradient", "dropout_misplaced")  # what differing from the reference looks like
RAISED_CODES = ("raised_exception", "size_mismatch", "dtype_overflow", "view_noncontiguous")
RAISED = ("runtime_error", "crash", "view_noncontiguous")


def explained_codes(id: str) -> tuple[str, ...]:
    """The failure codes a diagnosis accounts for when no other named mistake claims the failure: its catalog
    entry's `explains`, else what a raised exception or a forward that differs from the reference produces."""
    declared = (text_of(id) or {}).get("explains")
    if isinstance(declared, (list, tuple)):
        return tuple(c for c in declared if isinstance(c, str))
    return RAISED_CODES + ("worker_exit",) if id in RAISED else GENERIC_CODES


def mark_consequences(verdict: Verdict) -> None:
    """Set TestResult.explained_by on the failing tests that the first diagnosis explains, so they are shown as
    its consequences rather than as separate problems: the tests that declared themselves evidence for it, and
    those whose failure code it accounts for (explained_codes) unless they are evidence for another mistake the
    verdict names too. A check's declared evidence the diagnosis did not retain (a dropout check that compares
    with the reference, failing because the mask is wrong) is no second problem."""
    if not verdict.diagnoses or verdict.diagnoses[0].id in SYMPTOMS + ("not_started",):
        return
    first = verdict.diagnoses[0].id
    named = {d.id for d in verdict.diagnoses[1:]} - {first, "wrong_output"}
    codes = explained_codes(first)
    for t in verdict.failures():
        t.explained_by = None
        if first in t.evidence or (t.code in codes and not named.intersection(t.evidence)):
            t.explained_by = first
