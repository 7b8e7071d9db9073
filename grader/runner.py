"""Grades one submission file: policy check, sandbox worker, hidden pytest suite, diagnosis -> Verdict."""
from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import time
from pathlib import Path

import pytest

from grader import policy
from grader.catalog import Exercise, load_catalog
from grader.results import Status, TestResult, Verdict
from grader.sandbox import Limits, Sandbox, SubmissionError, WorkerGone
from grader.sandbox.zygote import Zygote

SUITES_DIR = Path(__file__).resolve().parent / "suites"
UNUSED_PLUGINS = ("cacheprovider", "randomly", "xdist", "timeout", "unraisableexception", "threadexception",
                  "logging", "faulthandler", "warnings", "doctest", "junitxml", "pastebin", "stepwise", "legacypath")
CATEGORY_ORDER = ["policy", "api", "shape", "numerics", "masking", "dropout", "device"]


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
    from grader.suites.harness import Mismatch

    if isinstance(exc, Mismatch):
        return Status.FAILED, str(exc), None
    if isinstance(exc, SubmissionError):
        where = f" at line {exc.line}" if exc.line else ""
        if exc.not_implemented:
            return Status.FAILED, f"not implemented yet{where}: {exc.message or 'NotImplementedError'}", exc.line
        text = f"your code raised {exc.type}{where}: {exc.message}" if exc.message else f"your code raised {exc.type}{where}"
        return Status.ERROR, text, exc.line
    if isinstance(exc, WorkerGone):
        return (Status.TIMEOUT if exc.reason == "timeout" else Status.ERROR), exc.detail, None
    return Status.ERROR, f"internal grader error: {type(exc).__name__}: {exc}", None


class Collector:
    """pytest plugin: keeps the tests this exercise needs and records each outcome as a TestResult."""

    def __init__(self, harness, features: set[str], points: dict):
        self.harness = harness
        self.features = features
        self.points = points
        self.results: list[TestResult] = []
        self.internal: list[str] = []
        self._meta: dict[str, tuple[str, str]] = {}
        self._excs: dict[str, BaseException] = {}

    def pytest_configure(self, config):
        from grader.suites.conftest import HARNESS

        config.stash[HARNESS] = self.harness
        config.addinivalue_line("markers", "check(category): the test's category and points (api, shape, ...)")
        config.addinivalue_line("markers", "needs(*features): run only for exercises with these features")

    def pytest_collection_modifyitems(self, session, config, items):
        keep, drop = [], []
        for item in items:
            needs = item.get_closest_marker("needs")
            (keep if needs is None or set(needs.args) <= self.features else drop).append(item)
        keep.sort(key=lambda it: CATEGORY_ORDER.index(it.get_closest_marker("check").args[0]))
        for item in keep:
            doc = (item.function.__doc__ or "").strip().splitlines()
            self._meta[item.nodeid] = (item.get_closest_marker("check").args[0], doc[0] if doc else item.name)
        items[:] = keep
        if drop:
            config.hook.pytest_deselected(items=drop)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        if call.excinfo is not None and not call.excinfo.errisinstance(pytest.skip.Exception):
            self._excs[item.nodeid] = call.excinfo.value

    def pytest_runtest_logreport(self, report):
        if report.when != "call" and not (report.failed or report.skipped):
            return
        category, _ = self._meta[report.nodeid]
        name = report.nodeid.split("::", 1)[1].removeprefix("test_")
        line = None
        if report.passed:
            status, message = Status.PASSED, ""
        elif report.skipped:
            status, message = Status.SKIPPED, str(report.longrepr[2]).removeprefix("Skipped: ")
        else:
            status, message, line = _message(self._excs.get(report.nodeid, Exception(report.longreprtext[-300:])))
            if message.startswith("internal grader error"):
                self.internal.append(f"{name}: {message}")
        self.results.append(TestResult(name, category, status, message, self.points.get(category, 1), line))


def run_suite(harness, ex: Exercise, device: str) -> Collector:
    catalog = load_catalog()
    features = set(ex.features) | {ex.kind} | ({"cuda"} if device == "cuda" else set())
    collector = Collector(harness, features, catalog.points)
    args = [str(SUITES_DIR), "-q", "-c", os.devnull, "--rootdir", str(SUITES_DIR), "--assert=plain", "--tb=no"]
    for plugin in UNUSED_PLUGINS:
        args += ["-p", f"no:{plugin}"]
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = pytest.main(args, plugins=[collector])
    if code == pytest.ExitCode.INTERRUPTED:
        raise KeyboardInterrupt
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or not collector.results:
        raise InternalError(f"the hidden suite did not run (pytest exit {int(code)}): {sink.getvalue()[-800:]}")
    return collector


def is_untouched(ex: Exercise, source: str) -> bool:
    return source.split() == ex.skeleton_path.read_text(encoding="utf-8").split()


_ZYGOTE: Zygote | None = None
_GRADED = False  # a later grade in the same process forks from the warm server


def keep_warm() -> Zygote:
    """Start (once per process) the fork server that later grades in this process use.

    Worth it for anything that grades more than one file: each worker is then a fork of a
    process with torch already imported, instead of a new interpreter.
    """
    global _ZYGOTE
    if _ZYGOTE is None or not _ZYGOTE.alive:
        _ZYGOTE = Zygote().start()
    return _ZYGOTE


def grade(*, exercise: Exercise, path: Path, device: str = "cpu", limits: Limits = Limits(),
          warm: bool | None = None, capture_attention: bool = False, policy_file: Path | None = None) -> Verdict:
    """Grade one file. The submission runs only in the sandbox worker; the verdict is computed here.

    warm: fork the worker from this process's fork server (True), spawn a fresh interpreter
    (False), or decide by itself (None): spawn for the first grade in a process, fork after it.
    capture_attention: for a failing verdict, also record the submission's and the reference's
    attention weights (Verdict.attention) while the worker is alive, for instructor reports.
    policy_file: an instructor's policy TOML applied on top of the kit's (grader/policy.py, SECURITY.md).
    """
    ex = exercise
    started = time.perf_counter()
    if ex.limits:  # the exercise's own sandbox limits (info.toml `limits`), e.g. a memory budget the suite relies on
        limits = dataclasses.replace(limits, **{k: v for k, v in ex.limits.items() if k in ("memory_mb", "cpu_s")})
    source = Path(path).read_text(encoding="utf-8", errors="replace")
    blocked, violations, syntax = None, [], None
    try:
        violations = policy.check(source, policy=policy.load_policy(policy_file), forbidden=ex.forbidden)
    except SyntaxError as exc:
        syntax = exc
        blocked = f"syntax error at line {exc.lineno}: {exc.msg}"
    if violations:
        blocked = "; ".join(str(v) for v in violations)
    global _GRADED
    zygote = keep_warm() if (warm if warm is not None else _GRADED) else None
    _GRADED = True
    sandbox = None if blocked else Sandbox(Path(path), limits=limits, zygote=zygote, forbidden=ex.forbidden).start()  # boots while torch loads
    try:
        from grader.suites.harness import Harness  # imports torch

        import torch

        torch.set_num_threads(1)  # the grader's tensors are tiny: threads only add waiting
        device = resolve_device(device)
        harness = Harness(ex, sandbox, device=device, blocked=blocked)
        if sandbox is not None:
            harness.load()
        collector = run_suite(harness, ex, device)
        verdict = Verdict(ex.number, ex.slug, ex.title, collector.results, [], device, 0.0, topics=ex.topics)
        from grader.diagnosis import diagnose

        verdict.diagnoses = [] if verdict.passed else diagnose(
            ex, harness, verdict, violations=violations, syntax=syntax, untouched=is_untouched(ex, source))
        if any(d.id == "not_started" for d in verdict.diagnoses):
            verdict.state = "not_started"
        if capture_attention and not verdict.passed and sandbox is not None and sandbox.gone is None:
            from grader.instructor.evidence import attention_weights

            verdict.attention = attention_weights(harness)  # heat maps for instructor reports
        if collector.internal:
            raise InternalError("; ".join(collector.internal))
    finally:
        if sandbox is not None:
            verdict_output = sandbox.captured_output()
            sandbox.close()
    if sandbox is not None:
        verdict.output = verdict_output
    verdict.duration_s = time.perf_counter() - started
    return verdict
