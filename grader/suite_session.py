"""The hidden suite under pytest, in the grading process: collected once per exercise, run again for each grade.

pytest reads nothing it finds: no config file (-c /dev/null), no conftest.py (the suites' own is loaded by
name), no plugin from entry points or PYTEST_PLUGINS, no options from PYTEST_ADDOPTS, no cache.

A new pytest session for every grade (configure, collect, run, unconfigure) cost a batch grade more than
a third of its time. A kept session is configured and collected for the first grade of an exercise (per
exercise and feature set) and then runs the same items, in the same order, with pytest's own run loop, for
each later grade in the process, with that grade's plugin (the runner's Collector) behind a relay. Nothing
of one grade reaches the next: the suites' fixtures are torn down after the last item (pytest's
teardown_exact(None)), each item's request is built again, and the submission itself only ever runs in
its own sandbox worker. A session that a grade left half-run (an exception out of pytest) is dropped.
"""
from __future__ import annotations

import contextlib
import io
import os
import threading
from pathlib import Path

import pytest

SUITES_DIR = Path(__file__).resolve().parent / "suites"
UNUSED_PLUGINS = ("cacheprovider", "randomly", "xdist", "timeout", "unraisableexception", "threadexception",
                  "logging", "faulthandler", "warnings", "doctest", "junitxml", "pastebin", "stepwise", "legacypath")
# A kept session prints nothing anyone reads, and its checks use no fixture but the suites' own: these plugins' hooks
# (three reports per check for the terminal, a wrapper round each phase for capture, one round each fixture for
# setuponly) were a fifth of the suite's CPU in a grade.
SILENT_PLUGINS = ("terminal", "capture", "assertion", "unittest", "debugging", "setuponly", "setupplan", "tmpdir",
                  "monkeypatch", "recwarn", "python_path", "freeze_support")
PYTEST_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")  # read by pytest.main: unset for the hidden suite's run


def pytest_args(*extra: str, silent: bool = False) -> list[str]:
    """silent: without the plugins that only print, capture or offer fixtures (SILENT_PLUGINS; a kept session).
    Otherwise --capture=no: pytest must not swap fds 0-2, watch reads keys and prints while a grade runs."""
    shown = [] if silent else ["-q", "--assert=plain", "--tb=no", "--capture=no"]
    args = [str(SUITES_DIR), "-c", os.devnull, "--rootdir", str(SUITES_DIR), "--confcutdir", str(SUITES_DIR),
            "--noconftest", "-p", "grader.suites.conftest", "--disable-plugin-autoload", *shown, *extra]
    for plugin in UNUSED_PLUGINS + (SILENT_PLUGINS if silent else ()):
        args += ["-p", f"no:{plugin}"]
    return args


@contextlib.contextmanager
def _unset(names: tuple[str, ...]):
    saved = {name: os.environ.pop(name) for name in names if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


@contextlib.contextmanager
def _quiet(sink: io.StringIO):
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), _unset(PYTEST_ENV):
        yield


def run_fresh(plugin, *extra: str) -> tuple[int, str]:
    """One whole pytest session with plugin: (exit code, its output)."""
    sink = io.StringIO()
    with _quiet(sink):
        code = pytest.main(pytest_args(*extra), plugins=[plugin, ShortReports()])
    return code, sink.getvalue()


class ShortReports:
    """A check that failed is reported without pytest's formatted traceback (source read, paths resolved, frames
    cut), which --tb=no never shows and the grade never reads (it keeps the exception): in a failing grade that
    formatting cost more than a tenth of the suite's own time. Setup, teardown and skips are pytest's."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        from _pytest.reports import TestReport

        excinfo = call.excinfo
        if call.when != "call" or excinfo is None or isinstance(excinfo.value, (pytest.skip.Exception, BaseExceptionGroup)):
            return None
        sections = [(f"Captured {key} {when}", content) for when, key, content in item._report_sections]
        return TestReport(item.nodeid, item.location, dict.fromkeys(item.keywords, 1), "failed",
                          f"{excinfo.typename}: {excinfo.value}", call.when, sections, call.duration, call.start,
                          call.stop, user_properties=item.user_properties)


class _Discard(io.TextIOBase):
    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


class Relay:
    """A kept session's plugin: hands pytest's calls on to the current grade's plugin."""

    def __init__(self, plugin):
        self.plugin = plugin

    def pytest_configure(self, config):
        self.plugin.pytest_configure(config)

    def pytest_collection_modifyitems(self, session, config, items):
        self.plugin.pytest_collection_modifyitems(session, config, items)

    def pytest_runtest_setup(self, item):
        self.plugin.pytest_runtest_setup(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        yield from self.plugin.pytest_runtest_makereport(item, call)

    def pytest_runtest_logreport(self, report):
        self.plugin.pytest_runtest_logreport(report)


class KeptSession:
    """One configured and collected pytest session. The plugin must have pytest_configure, the collection
    and run hooks Relay forwards, collected() (what the collection hooks recorded), adopt(that) and bind(config)."""

    def __init__(self, plugin):
        from _pytest.config import _prepareconfig
        from _pytest.main import Session

        self.lock = threading.Lock()
        self.relay = Relay(plugin)
        self.config = self.session = None
        sink = _Discard()
        with _quiet(sink):  # pytest's terminal reporter keeps this stream for the session's life
            config = _prepareconfig(pytest_args(silent=True), [self.relay, ShortReports()])
            try:
                config._do_configure()
                session = Session.from_config(config)
                session.exitstatus = pytest.ExitCode.OK
                config.hook.pytest_sessionstart(session=session)
                config.hook.pytest_collection(session=session)
            except BaseException:
                config._ensure_unconfigure()
                raise
        if session.testsfailed or not session.items:  # errors during collection: the caller runs a fresh session
            config._ensure_unconfigure()
            raise ValueError("errors during collection")
        self.config, self.session = config, session
        self.collected = plugin.collected()

    def run(self, plugin, fresh: bool) -> int:
        """Run every item once for plugin (fresh: plugin is the one the session was collected with)."""
        if not fresh:
            plugin.adopt(self.collected)
            plugin.bind(self.config)
        self.relay.plugin = plugin
        self.session.testsfailed = 0
        with _quiet(_Discard()):
            self.config.hook.pytest_runtestloop(session=self.session)
        return pytest.ExitCode.TESTS_FAILED if self.session.testsfailed else pytest.ExitCode.OK

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.session._setupstate.teardown_exact(None)
        with contextlib.suppress(Exception):
            self.config._ensure_unconfigure()


_KEPT: dict[tuple, tuple[object, KeptSession]] = {}


def run_kept(key: tuple, owner, make) -> tuple[int, str, object]:
    """Run the suite with a plugin from make() in the session kept for key (made, and collected with that
    plugin, the first time): (exit code, output, the plugin).

    owner is kept alive with the session (key may hold its id). A session already running (watch's cancelled
    grade still finishing in another thread) or one that cannot be collected: a fresh session this time."""
    kept = _KEPT.get(key, (None, None))[1]
    plugin, fresh = make(), kept is None
    if fresh:
        try:
            kept = KeptSession(plugin)
        except ValueError:
            plugin = make()
            return (*run_fresh(plugin), plugin)
        _KEPT[key] = (owner, kept)
    if not kept.lock.acquire(blocking=False):
        return (*run_fresh(plugin), plugin)
    try:
        return kept.run(plugin, fresh), "", plugin
    except BaseException:  # left half-run: never used again
        _KEPT.pop(key, None)
        kept.close()
        raise
    finally:
        kept.lock.release()
