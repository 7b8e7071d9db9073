"""Grades one submission file: policy check, sandbox worker, hidden pytest suite, diagnosis -> Verdict."""
from __future__ import annotations

import dataclasses
import os
import resource
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from pluggy import HookimplMarker

from grader import policy
from grader.catalog import Exercise, check_forbidden, load_catalog
from grader.pack import PackCodeError, pack_fault
from grader import provenance
from grader.results import Status, TestResult, Verdict
from grader.sandbox import Limits, Sandbox, SubmissionError, WorkerGone
from grader.sandbox.isolation import WeakSandbox, given_up, gpu_devices, refusal
from grader.sandbox.cputime import run_state
from grader.sandbox.zygote import Zygote
from grader.source import Source, Unreadable, is_blank, read_source

hookimpl = HookimplMarker("pytest")  # pytest.hookimpl; pytest itself is imported once the worker has started


class InternalError(Exception):
    """The grader itself failed (exit code 3)."""


class DeviceUnavailable(Exception):
    """--device cuda was asked for on a machine without CUDA (a usage error)."""


def resolve_device(device: str) -> str:
    """auto -> cuda when PyTorch sees a GPU, else cpu. Imports torch, so call it after the worker starts."""
    if device == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise DeviceUnavailable("--device cuda was requested but PyTorch sees no CUDA device; use --device cpu or auto")
    return "cpu"


def _message(exc: BaseException) -> tuple[Status, str, int | None]:
    from grader.failures import Mismatch

    if isinstance(exc, Mismatch):
        return Status.FAILED, str(exc), None
    if isinstance(exc, SubmissionError):
        where = f" at line {exc.line}" if exc.line else ""
        if exc.not_implemented:
            return Status.FAILED, f"not implemented yet{where}: {exc.message or 'NotImplementedError'}", exc.line
        text = f"your code raised {exc.type}{where}: {exc.message}" if exc.message else f"your code raised {exc.type}{where}"
        return Status.ERROR, text, exc.line
    if isinstance(exc, WorkerGone):
        return (Status.TIMEOUT if exc.reason == "timeout" else Status.ERROR), exc.detail, exc.line
    return Status.ERROR, f"internal grader error: {type(exc).__name__}: {exc}", None


def _evidence(declared, code: str) -> tuple[str, ...]:
    """The diagnoses a check declared its failure (with this code) to be evidence for."""
    if declared is None:
        return ()
    if isinstance(declared, str):
        return (declared,)
    found = declared.get(code, declared.get("*"))
    return () if found is None else (found,) if isinstance(found, str) else tuple(found)


def where(item) -> str:
    """A check's own file and line: an exercise module's check is run through a generic test (its parameter)."""
    import inspect

    own = item.callspec.params.get("own") if hasattr(item, "callspec") else None
    fn = inspect.unwrap(own[0]) if own else getattr(item, "function", None)
    code = getattr(fn, "__code__", None)
    if code is None:
        return f"{item.path.name}: {item.name}"
    return f"{code.co_filename}:{code.co_firstlineno}: {fn.__name__}"


class Collector:
    """pytest plugin: keeps the tests this exercise needs and records each outcome as a TestResult."""

    def __init__(self, harness, features: set[str], catalog):
        self.harness = harness
        self.features = features
        self.points = catalog.points
        self.categories = catalog.categories
        self.results: list[TestResult] = []
        self.internal: list[str] = []
        self.pack_faults: list[str] = []  # errors in a pack's own check code (grader/pack.py pack_fault)
        self.notes: list[str] = []
        self._meta: dict[str, tuple] = {}
        self._excs: dict[str, BaseException] = {}

    def bind(self, config) -> None:
        from grader.suites.conftest import HARNESS

        config.stash[HARNESS] = self.harness

    def collected(self) -> tuple[dict, list[str]]:
        """What collecting the suite recorded (for the later grades that run the same collected items)."""
        return dict(self._meta), list(self.pack_faults)

    def adopt(self, collected: tuple[dict, list[str]]) -> None:
        self._meta, self.pack_faults = dict(collected[0]), list(collected[1])

    def pytest_configure(self, config):
        self.bind(config)
        config.addinivalue_line("markers", "check(category, evidence): the test's category and what its failure means")
        config.addinivalue_line("markers", "needs(*features): run only for exercises with these features")

    def pytest_collection_modifyitems(self, session, config, items):
        keep, drop = [], []
        for item in items:
            needs = set().union(*(m.args for m in item.iter_markers("needs")))
            (keep if needs <= self.features else drop).append(item)
        for item in keep:
            category = item.get_closest_marker("check").args[0]
            if category not in self.categories:
                self.pack_faults.append(f"{where(item)}: @check({category!r}): no such category; "
                                        "declare it in info.toml's [points]")
        keep.sort(key=lambda it: self.categories.index(it.get_closest_marker("check").args[0])
                  if it.get_closest_marker("check").args[0] in self.categories else len(self.categories))
        for item in keep:
            mark = item.get_closest_marker("check")
            params = item.callspec.params if hasattr(item, "callspec") else {}
            own = "own" in params  # a check of the exercise's own module: named by its parameter id
            name = item.callspec.id if own else item.nodeid.split("::", 1)[1].removeprefix("test_")
            init = params["own"][1] if own else params.get("init")
            self._meta[item.nodeid] = (mark.args[0], name, mark.kwargs.get("evidence"), init, own)
        items[:] = keep
        if drop:
            config.hook.pytest_deselected(items=drop)

    @property
    def planned(self) -> list[str]:
        """The category of each check this grade runs, in order (known once the suite is collected)."""
        return [category for category, *_ in self._meta.values()]

    def pytest_runtest_setup(self, item):
        self.harness.last_call = None

    @hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        import pytest

        outcome = yield
        if call.excinfo is not None and not call.excinfo.errisinstance(pytest.skip.Exception):
            self._excs[item.nodeid] = call.excinfo.value

    def pytest_runtest_logreport(self, report):
        from grader.failures import code_of

        if report.when != "call" and not (report.failed or report.skipped):
            return
        category, name, declared, init, own = self._meta[report.nodeid]
        line, code, evidence = None, "", ()
        if report.passed:
            status, message = Status.PASSED, ""
        elif report.skipped:
            status, message = Status.SKIPPED, str(report.longrepr[2]).removeprefix("Skipped: ")
        else:
            exc = self._excs.get(report.nodeid, Exception(report.longreprtext[-300:]))
            status, message, line = _message(exc)
            code = code_of(exc)
            evidence = _evidence(declared, code)
            if message.startswith("internal grader error"):
                fault = pack_fault(exc, self.harness.exercise.pack.checks)
                (self.pack_faults if fault else self.internal).append(fault or f"{name}: {message}")
        repro = self.harness.last_call if status in (Status.FAILED, Status.ERROR) else None
        self.results.append(TestResult(name, category, status, message, self.points.get(category, 1), line, code,
                                       evidence, init, own, repro=repro))


def _features(ex: Exercise, device: str) -> set[str]:
    from grader.suites.conftest import own_checks

    features = set(ex.features) | {ex.kind} | ({"cuda"} if device == "cuda" else set())
    if own_checks(ex):
        features.add("exercise_checks")
    return features


def _pytest(collector: Collector, *extra: str) -> tuple[int, str]:
    """The hidden suite under a fresh pytest session, with collector as its plugin: (exit code, its output)."""
    import pytest
    from grader.suite_session import run_fresh

    code, output = run_fresh(collector, *extra)
    if code == pytest.ExitCode.INTERRUPTED:
        raise KeyboardInterrupt
    return code, output


def run_suite(harness, ex: Exercise, device: str) -> Collector:
    import pytest
    from grader.suite_session import run_kept

    features = _features(ex, device)
    from grader.harness import PRECISION_NOTES  # imports torch

    notes = []
    token = PRECISION_NOTES.set(notes)
    try:
        code, output, collector = run_kept((id(ex), frozenset(features)), ex,
                                           lambda: Collector(harness, features, load_catalog(ex.pack)))
        if code == pytest.ExitCode.INTERRUPTED:
            raise KeyboardInterrupt
    finally:
        PRECISION_NOTES.reset(token)
    if notes:
        worst, what = max(notes)
        collector.notes = [f"your float64 results agree with the reference to {worst:.2g} ({what}), not to the 1e-9 that "
                           "float64 code reaches: a step rounds through float32 (a float32 constant, an epsilon, an upcast "
                           "softmax). That passes; compute in the input's dtype where you can."]
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or not collector.results:
        raise InternalError(f"the hidden suite did not run (pytest exit {int(code)}): {output[-800:]}")
    return collector


def max_score(ex: Exercise, device: str = "cpu") -> int:
    """The most a file can score on ex: the points of the checks a grade runs, found by collecting them
    (nothing runs, no worker starts). Equal to any verdict's max_score for ex on that device."""
    import pytest

    collector = Collector(SimpleNamespace(exercise=ex), _features(ex, device), load_catalog(ex.pack))
    code, output = _pytest(collector, "--collect-only")
    if code != pytest.ExitCode.OK or not collector.planned:
        raise InternalError(f"the hidden suite could not be collected (pytest exit {int(code)}): {output[-800:]}")
    return sum(collector.points.get(category, 1) for category in collector.planned)


def is_untouched(ex: Exercise, source: str) -> bool:
    return source.split() == ex.skeleton_path.read_text(encoding="utf-8").split()


_ZYGOTE: Zygote | None = None
_ZYGOTE_VITALS = None  # what the fork server started with (it inherits this process's)
_ZYGOTE_LOCK = threading.RLock()
_GRADED = False  # a later grade in the same process forks from the warm server
RLIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))


def vitals(pid: int) -> tuple | None:
    """What a process passes on to the workers it forks and another process could change (prlimit,
    setpriority, sched_setaffinity): its resource limits, niceness and scheduling."""
    try:
        return (tuple(resource.prlimit(pid, r) for r in RLIMITS), os.getpriority(os.PRIO_PROCESS, pid),
                os.sched_getscheduler(pid), frozenset(os.sched_getaffinity(pid)))
    except (OSError, AttributeError):  # gone, or not Linux
        return None


def _healthy(zygote: Zygote) -> bool:
    """Running, not stopped, and with the limits and scheduling it started with: a submission that signalled
    or re-limited its fork server (where workers share the grader's uid) must not cost the next one."""
    return zygote.alive and run_state(zygote.proc.pid) not in "TtZX" and vitals(zygote.proc.pid) == _ZYGOTE_VITALS


def drop_zygote() -> None:
    global _ZYGOTE
    if _ZYGOTE is not None:
        _ZYGOTE.close()
        _ZYGOTE = None


def keep_warm() -> Zygote:
    """Start (once per process) the fork server that later grades in this process use; one that is dead or
    unhealthy (_healthy) is replaced before the next grade.

    Worth it for anything that grades more than one file: each worker is then a fork of a
    process with torch already imported, instead of a new interpreter.
    """
    global _ZYGOTE, _ZYGOTE_VITALS
    with _ZYGOTE_LOCK:  # grades in two threads: one fork server, started or replaced once
        if _ZYGOTE is not None and not _healthy(_ZYGOTE):
            drop_zygote()
        if _ZYGOTE is None:
            _ZYGOTE_VITALS = vitals(os.getpid())
            _ZYGOTE = Zygote().start()
        return _ZYGOTE


def fork_from_now_on() -> None:
    """Start this process's fork server now (it boots while the caller imports) and fork every later grade's
    worker from it, the first one included: for a process that will grade many files (a batch pool process),
    one interpreter boot instead of two."""
    global _GRADED
    keep_warm()
    _GRADED = True


def _load(harness) -> None:
    """Import the submission in its worker. A worker that ended before the submission ran is not the
    submission's doing (a fork server broken by another submission, an overloaded machine): the fork server
    is dropped and the worker started once more from a fresh interpreter; a second such end is the grader's
    failure (InternalError, never cached as a verdict)."""
    sandbox = harness.sandbox
    harness.load()
    if sandbox.ready or sandbox.cancelled or sandbox.gone is None:
        return
    drop_zygote()
    sandbox.close()
    sandbox.zygote = None
    sandbox.start()
    harness.load()
    if not sandbox.ready and not sandbox.cancelled:
        raise InternalError(f"the sandbox worker did not start, twice: {sandbox.gone.detail if sandbox.gone else ''}")


_SANDBOX_CHECKED = False


def check_sandbox() -> None:
    """Raise WeakSandbox (why, and the fix) if workers here could read the reference, the suites or the
    default pack, or reach the grader and each other. Once per process, before a batch or a watch grades
    anything; every worker's own report is checked again as it boots (grade)."""
    global _SANDBOX_CHECKED
    if _SANDBOX_CHECKED:
        return
    from grader.pack import default_pack
    from grader.sandbox.selfcheck import preflight

    state = preflight(Limits(hidden=default_pack().hidden))
    weak = refusal(state) if state else "the sandbox's self-test did not run here: see `python -m grader.sandbox`"
    if weak:
        raise WeakSandbox(f"refusing to grade: {weak}")
    _SANDBOX_CHECKED = True


def _tier(sandbox: Sandbox | None) -> str:
    if sandbox is None:
        return "none: the file was refused before any of it ran"
    if not sandbox.state:
        return "unknown: the worker ended before it reported its sandbox"
    from grader.sandbox.selfcheck import tier

    return tier(sandbox.state)


def place_lines(verdict: Verdict, source: Source) -> None:
    """Keep the graded text with the verdict (for the views) and, for a notebook, say cell and line wherever a
    line is reported: the tests' and the localization's `cell`, `cell_line` and every "line N" of the texts."""
    verdict.source = source
    for t in verdict.tests:
        t.cell, t.cell_line = source.cell_of(t.line) or (None, None)
        t.message = source.places(t.message)
    for d in verdict.diagnoses:
        d.evidence = [source.places(e) for e in d.evidence]
    loc = verdict.localization
    if loc is not None:
        cell, cell_line = source.cell_of(loc.get("line")) or (None, None)
        verdict.localization = {**loc, "evidence": source.places(str(loc.get("evidence", ""))), "cell": cell,
                                "cell_line": cell_line}


def grade(*, exercise: Exercise, path: Path, device: str = "cpu", limits: Limits = Limits(),
          warm: bool | None = None, capture_attention: bool = False, policy_file: Path | None = None,
          allow_weak_sandbox: bool = False) -> Verdict:
    """Grade one file. The submission runs only in the sandbox worker; the verdict is computed here.

    warm: fork the worker from this process's fork server (True), spawn a fresh interpreter
    (False), or decide by itself (None): spawn for the first grade in a process, fork after it.
    capture_attention: for a failing verdict, also record the submission's and the reference's
    attention weights (Verdict.attention) while the worker is alive, for instructor reports.
    policy_file: an instructor's policy TOML applied on top of the kit's (grader/policy.py, SECURITY.md).
    allow_weak_sandbox: grade where the sandbox cannot keep the submission from the reference or from other
    submissions (a learner's own files only); otherwise such a machine raises WeakSandbox before the file runs.
    """
    ex = exercise
    started = time.perf_counter()
    if ex.limits:  # the exercise's own sandbox limits (info.toml `limits`), e.g. a memory budget the suite relies on
        limits = dataclasses.replace(limits, **{k: v for k, v in ex.limits.items() if k in ("memory_mb", "cpu_s")})
    if device != "cpu" and gpu_devices():  # the worker's view depends on the device: settle it before it starts
        device = resolve_device(device)
    limits = dataclasses.replace(limits, device="cuda" if device == "cuda" else "cpu", hidden=ex.pack.hidden)
    blocked, violations, syntax, unreadable = None, [], None, None
    try:
        text = read_source(path)
    except Unreadable as exc:
        text, unreadable = Source(""), str(exc)
    source = text.text
    try:
        violations = policy.check(source, policy=policy.load_policy(policy_file), forbidden=ex.forbidden)
    except SyntaxError as exc:
        syntax = exc
        blocked = f"syntax error at line {exc.lineno}: {exc.msg}"
    blank = is_blank(source) and not unreadable
    blocked = unreadable or blocked
    if violations:
        blocked = "; ".join(str(v) for v in violations)
    global _GRADED
    zygote = keep_warm() if (warm if warm is not None else _GRADED) else None
    _GRADED = True
    sandbox = None if blocked else Sandbox(Path(path), source=source, limits=limits, zygote=zygote, forbidden=ex.forbidden,
                                          weak_ok=allow_weak_sandbox).start()  # boots while torch loads
    try:
        from grader.harness import Harness  # imports torch
        import grader.suite_session  # noqa: F401  imports pytest, while the worker boots

        import torch

        torch.set_num_threads(1)  # the grader's tensors are tiny: threads only add waiting
        check_forbidden(ex)  # a misspelt ban bans nothing: CatalogError before any check runs (free: torch is loaded)
        device = resolve_device(device)
        harness = Harness(ex, sandbox, device=device, blocked=blocked)
        if sandbox is not None:
            _load(harness)
        collector = run_suite(harness, ex, device)
        if collector.pack_faults:  # a pack's own check raised: its error, with its file and line (exit 2)
            raise PackCodeError(collector.pack_faults[0])
        verdict = Verdict(ex.number, ex.slug, ex.title, collector.results, [], device, 0.0, topics=ex.topics)
        verdict.notes = collector.notes if verdict.passed else []  # correct but less precise: said, not failed
        refused_at = violations[0].line if violations else syntax.lineno if syntax is not None else None
        for t in verdict.failures():
            if t.code == "policy_blocked" and refused_at:
                t.line = refused_at  # the views mark the refused line, not the whole file
        from grader.diagnosis import diagnose

        from grader.diagnosis import make

        if unreadable or blank:
            verdict.diagnoses = [make("syntax_error" if unreadable else "not_started",
                                      unreadable or "the file is empty: it defines nothing yet")]
        elif not verdict.passed:  # an untouched skeleton, even one that runs (fix-the-bug), is not started: no fix shown
            try:
                verdict.diagnoses = diagnose(ex, harness, verdict, violations=violations, syntax=syntax,
                                             untouched=is_untouched(ex, source))
            except Exception as exc:  # a pack's diagnose() that raises is the pack's error, with its line
                fault = pack_fault(exc, ex.pack.checks)
                if fault is None:
                    raise
                raise PackCodeError(fault) from exc
        if blank or is_untouched(ex, source) or any(d.id == "not_started" for d in verdict.diagnoses):
            verdict.state = "not_started"  # scores 0 everywhere (Verdict.score)
        if capture_attention and not verdict.passed and sandbox is not None and sandbox.gone is None:
            from grader.probes import attention_weights

            verdict.attention = attention_weights(harness)  # heat maps for instructor reports
        if sandbox is not None and not verdict.passed:
            from grader.diagnosis.localize import localize_verdict

            localize_verdict(verdict, ex, harness, source)  # after the heat maps: a trace that hangs ends the worker
        from grader.diagnosis import mark_consequences

        mark_consequences(verdict)
        if collector.internal:
            raise InternalError("; ".join(collector.internal))
    finally:
        if sandbox is not None:
            sandbox.close()  # first: what the worker printed up to its end is drained
            verdict_output = sandbox.captured_output()
    if sandbox is not None:
        verdict.output = verdict_output
        verdict.sandbox = given_up(sandbox.state)
    place_lines(verdict, text)
    verdict.provenance = provenance.record(pack=ex.pack, text=source, limits=limits, device=verdict.device,
                                           tier=_tier(sandbox))
    verdict.duration_s = time.perf_counter() - started
    return verdict
