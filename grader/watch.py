"""`grade watch`: re-grade the exercise being edited on every save and redraw one screen.

torch, pytest and the suites stay imported in this process and each grade forks a fresh worker
from the warm fork server, so a save shows its verdict in a fraction of a second. The screen
(grader/screen.py, templates/watch.term.j2) is redrawn in place: a status line, the verdict and its
diagnosis first, the details one key away, and the keys, which all work whatever is on the screen.

For other loops built on this one (`grade interview`): grade_file grades one file warm, watch_files
reports saves, keypresses and interrupt_flag read the keyboard.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import queue
import select
import signal
import sys
import termios
import threading
import time
import tty
from pathlib import Path

from grader import history
from grader.catalog import Exercise, load_catalog
from grader.screen import Screen
from grader.workspace import Hints, Workspace, remember


@contextlib.contextmanager
def interrupt_flag():
    """Ctrl-C sets an event instead of raising KeyboardInterrupt, which is lost when the signal lands while
    the main thread runs a finalizer (CPython reports it as "Exception ignored" and carries on)."""
    flag = threading.Event()
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield flag  # signals go to the main thread; an ignored SIGINT (nohup, a background job) stays ignored
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: flag.set())
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def keypresses(stream):
    """Single keypresses from a terminal (cbreak mode, restored on exit); nothing when not a tty."""
    if not stream.isatty():
        yield None
        return
    fd = stream.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield fd
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


class Waker:
    """A pipe that wakes the main loop's select: a grade ended, a file was saved, a signal (a resize) came."""

    def __init__(self):
        self.fd, self._w = os.pipe()
        os.set_blocking(self._w, False)
        os.set_blocking(self.fd, False)

    def wake(self) -> None:
        try:
            os.write(self._w, b"!")
        except (BlockingIOError, OSError):  # full: the loop wakes anyway; closed: the loop has ended
            pass

    def drain(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self.fd, 4096):
                pass

    @contextlib.contextmanager
    def on_signals(self):
        """Signals (SIGWINCH: the terminal was resized; SIGINT) wake the loop at once (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous_fd = signal.set_wakeup_fd(self._w, warn_on_full_buffer=False)
        previous = signal.signal(signal.SIGWINCH, lambda signum, frame: None)
        try:
            yield self
        finally:
            signal.signal(signal.SIGWINCH, previous)
            signal.set_wakeup_fd(previous_fd)

    def close(self) -> None:
        for fd in (self.fd, self._w):
            with contextlib.suppress(OSError):
                os.close(fd)


def watch_files(folder: Path, events: queue.Queue, stop: threading.Event, wake=None) -> None:
    """Put the path of every file saved under folder on events (and call wake) until stop is set."""
    from watchfiles import watch

    for changes in watch(folder, stop_event=stop, debounce=30, step=10, rust_timeout=500, yield_on_timeout=True):
        for _, path in changes:
            events.put(Path(path))
        if changes and wake is not None:
            wake()


_watch_files = watch_files  # its name before watch's screen was rewritten


def grade_file(ex: Exercise, path: Path, *, timeout: float, allow_weak: bool = False):
    """Grade one file with a worker forked from this process's warm fork server (runner.keep_warm)."""
    from grader.runner import grade
    from grader.sandbox import Limits

    return grade(exercise=ex, path=path, device="cpu", limits=Limits(time_s=timeout), warm=True,
                 allow_weak_sandbox=allow_weak)


ARROWS = {"\x1b[A": "up", "\x1bOA": "up", "\x1b[B": "down", "\x1bOB": "down", "\x1b[5~": "pgup", "\x1b[6~": "pgdn",
          "\x1b[H": "home", "\x1b[1~": "home", "\x1bOH": "home", "\x1b[F": "end", "\x1b[4~": "end", "\x1bOF": "end"}


def parse_keys(data: str) -> list[str]:
    """Keys from what one read of the terminal gave: characters, and arrows or page keys by name ("up", "pgdn")."""
    keys, i = [], 0
    while i < len(data):
        if data[i] == "\x1b":
            seq = next((s for s in ARROWS if data.startswith(s, i)), None)
            if seq:
                keys.append(ARROWS[seq])
                i += len(seq)
                continue
            end = i + 1
            if data[end:end + 1] in ("[", "O"):  # an escape sequence this screen has no use for: skipped whole
                end += 1
                while end < len(data) and not ("@" <= data[end] <= "~"):
                    end += 1
                keys.append("")
                i = end + 1
                continue
            keys.append("esc")
            i += 1
            continue
        keys.append(data[i])
        i += 1
    return [k for k in keys if k]


SCROLL = {"j": 1, "down": 1, "k": -1, "up": -1}


class Watcher:
    """One screen: the verdict of the exercise being edited. Grades run in a thread so keys stay live."""

    allow_weak = False  # --allow-weak-sandbox: grade the learner's own files on a machine that cannot isolate them

    def __init__(self, ws: Workspace, start: Exercise, console, *, timeout: float, screen: Screen | None = None,
                 wake=None):
        self.ws, self.ex, self.console, self.timeout = ws, start, console, timeout
        self.screen = screen or Screen(console.file, console, full=False)
        self.wake = wake or (lambda: None)
        self.catalog = load_catalog()
        self.hints = Hints(ws)
        self.results: queue.Queue = queue.Queue()
        self.job: threading.Thread | None = None
        self.deferred = False  # a grade asked for while the cancelled one was still ending
        self.generation = 0
        self.attempts: dict[int, int] = {}
        self.digest: bytes | None = None  # what the running or last grade of self.ex graded
        self.state = "grading"  # "grading" | "graded" | "error"
        self.verdict = None  # the last verdict of self.ex (None after moving to another exercise)
        self.error = ""
        self.took: float | None = None
        self.view = "verdict"  # or "details", "list", "explain"
        self.explainer = None
        self.flash = ""  # one line for the prompt row until the next key or verdict
        self.hint_level: dict[int, int] = {}  # the hint asked for with h, per exercise, in this session

    # -- grading in the background ----------------------------------------------------------
    def grade(self) -> None:
        """Start grading self.ex (stopping a grade still running); the screen says so at once. Grades never
        overlap: one that has not ended 0.3 s after its worker was killed is waited for, and this one starts
        when its result comes (poll)."""
        self.cancel()
        if self.job is not None and self.job.is_alive():
            self.deferred = True
            self.state = "grading"
            self.draw()
            return
        self.deferred = False
        self.generation += 1
        self.attempts[self.ex.number] = self.attempts.get(self.ex.number, 0) + 1
        self.digest = self._digest(self.ex)
        if self.verdict is not None and self.verdict.exercise != self.ex.number:
            self.verdict = None
        self.state = "grading"
        self.job = threading.Thread(target=self._grade, args=(self.ex, self.generation), daemon=True)
        self.job.start()
        self.draw()

    def _grade(self, ex: Exercise, generation: int) -> None:
        started = time.perf_counter()
        try:
            v = grade_file(ex, self.ws.file_for(ex), timeout=self.timeout, allow_weak=self.allow_weak)
        except Exception as exc:  # shown on the screen; watching goes on
            v = exc
        self.results.put((generation, ex, v, time.perf_counter() - started))
        self.wake()

    def _digest(self, ex: Exercise) -> bytes | None:
        try:
            return hashlib.sha256(self.ws.file_for(ex).read_bytes()).digest()
        except OSError:
            return None

    def saved(self, ex: Exercise) -> None:
        """A file was saved: grade it, unless it is the file being graded (or shown) with the same content,
        which is an editor's second write event for one save."""
        if ex.number == self.ex.number and self.state != "error" and self._digest(ex) == self.digest:
            return
        self.ex = ex
        self.grade()

    def cancel(self) -> None:
        """Stop a running grade within a fraction of a second: its worker is killed."""
        from grader.sandbox.session import cancel_all

        if self.job is not None and self.job.is_alive():
            self.generation += 1  # its result, when it comes, is ignored
            cancel_all()
            self.job.join(timeout=0.3)

    def poll(self) -> None:
        """Show the newest grade's verdict if it has finished."""
        while not self.results.empty():
            generation, ex, v, took = self.results.get()
            if generation == self.generation:
                self.show(ex, v, took)
        if self.deferred and not (self.job is not None and self.job.is_alive()):
            self.grade()

    def show(self, ex: Exercise, v, took: float) -> None:
        self.took, self.view, self.screen.scroll, self.flash = took, "verdict", 0, ""
        if isinstance(v, Exception):
            self.state, self.error = "error", f"{type(v).__name__}: {v}"
            self.draw()
            return
        self.state, self.verdict = "graded", v
        try:
            remember(self.ws, ex, v)  # hint 1 is on the not-started screen: h shows hint 2
            if self.hints.pending(ex):
                self.hints.shown(ex)  # the verdict on screen shows that mistake's hint: h goes on with the ladder
        except OSError as exc:
            self.flash = f"progress not saved: {exc.strerror or exc}"
        self.flash = history.record_grade(ex, v)[1] or self.flash
        self.draw()

    def upcoming(self) -> tuple[Exercise, bool]:
        """Where n goes, and whether every exercise is passed (then n goes on through the catalog, to review)."""
        pending = self.ws.next_exercise(self.catalog, self.ex)
        if pending is not None:
            return pending, False
        return self.catalog.next_after(self.ex) or self.catalog.exercises[0], True

    # -- the screen --------------------------------------------------------------------------
    def status(self) -> str:
        """The status line: exercise, attempt (grades of it in this session), state, time, exercises passed."""
        from grader.render import watch_parts

        return watch_parts().status(self.ex, len(self.catalog.exercises), self.attempts.get(self.ex.number, 0),
                                    self.state, self.verdict, self.took, len(self.ws.passed))

    def draw(self) -> None:
        from grader.render import progress_table, shown_failures, verdict_text, watch_parts

        parts, ex, v = watch_parts(), self.ex, self.verdict
        path = str(self.ws.file_for(ex))
        status = self.status()
        if self.view == "list":
            body = progress_table(self.ws, self.catalog, current=ex)
        elif self.view == "explain":
            body = self.explainer
        elif self.state == "error":
            body = parts.failed(self.error)
        elif v is None:
            body = parts.grading(ex)
        elif self.view == "details":
            body = verdict_text(v, path=path, verbose=True, watching=True)
        else:
            level = self.hint_level.get(ex.number)
            hint = {"level": level, "count": len(ex.hints), "text": ex.hints[level - 1]} if level else None
            shown, _, _ = shown_failures(v, limit=3)
            body = parts.verdict(v, v.failures(), shown, hint, ex.hints, path)
        nxt, all_passed = self.upcoming()
        passed_now = self.state == "graded" and v is not None and v.passed
        prompt = parts.prompt(self.flash, passed_now, nxt, all_passed)
        self.screen.draw(status=status, body=body, prompt=prompt, keys=parts.keys(self.view))

    # -- keys ------------------------------------------------------------------------------
    def key(self, key: str) -> bool:
        """Handle one key (a character, or "up", "pgdn"... from parse_keys); False means quit. Every key does
        the same thing whatever the screen shows; Enter also moves on once the exercise has passed."""
        if key in ("q", "\x04", "\x03"):  # Ctrl-C arrives as a key only where the terminal does not signal
            return False
        self.flash = ""
        passed_now = self.state == "graded" and self.verdict is not None and self.verdict.passed
        if key == "n" or (key in ("\r", "\n") and passed_now):
            self.ex = self.upcoming()[0]
            self.view = "verdict"
            self.grade()
            return True
        if key == "r":
            self.view = "verdict"
            self.grade()
            return True
        if key == "h":
            self.hint()
        elif key == "e":
            self.explain()
        elif key in ("d", "l"):
            wanted = {"d": "details", "l": "list"}[key]
            self.view = "verdict" if self.view == wanted else wanted
            self.screen.scroll = 0
        elif key == "esc":
            self.view, self.screen.scroll = "verdict", 0
        elif key in SCROLL:
            self.screen.scroll += SCROLL[key]
        elif key in (" ", "pgdn", "\x06"):
            self.screen.scroll += self.screen.page_rows()
        elif key in ("b", "pgup", "\x02"):
            self.screen.scroll -= self.screen.page_rows()
        elif key in ("g", "home"):
            self.screen.scroll = 0
        elif key in ("G", "end"):
            self.screen.scroll = self.screen.total
        elif key in ("\r", "\n"):
            self.flash = "Enter moves on once this exercise passes; n goes to the next one now."
        elif key.isprintable():
            self.flash = f"{key!r} does nothing here: h hint, e explain, d details, l list, n next, r regrade, q quit"
        self.screen.scroll = max(0, self.screen.scroll)
        self.draw()
        return True

    def hint(self) -> None:
        level = self.hints.next(self.ex)
        if level <= self.hints.seen(self.ex) and self.hint_level.get(self.ex.number) == level:
            self.flash = f"That was the last hint ({level}/{len(self.ex.hints)}); e opens the explainers."
        self.hints.mark(self.ex, level)
        self.hint_level[self.ex.number] = level
        self.view, self.screen.scroll = "verdict", 0

    def explain(self) -> None:
        """The exercise's explainers in a pager ($PAGER, else less -RX when LESS is unset: it holds the screen
        until q, as F would not for a short text), else in this screen, scrolled with the same keys."""
        from rich.text import Text

        from grader.explain import render_explainer
        from grader.explain.pager import find_pager, page

        pager = None
        if self.screen.full and sys.stdin.isatty():
            pager = find_pager({**os.environ, "LESS": os.environ.get("LESS", "RX")})
        color = self.console.color_system is not None and (pager is None or pager.color)
        width = min(self.screen.size[0] - 1, 100) if self.screen.full else min(self.console.width, 100)
        text = render_explainer(str(self.ex.number), fmt="term", color=color, width=width)
        if pager is None:
            self.explainer, self.view, self.screen.scroll = Text.from_ansi(text), "explain", 0
            return
        self.screen.suspend()
        page(text, pager)


def run(*, ws: Workspace, exercise: Exercise | None, console, timeout: float = 30.0, stdin=None,
        allow_weak: bool = False) -> None:
    """Watch ws until q or Ctrl-C. Grades `exercise`, or the one being worked on (Workspace.current)."""
    from grader.runner import keep_warm

    stdin = stdin or sys.stdin
    catalog = load_catalog()
    start = exercise or ws.current(catalog)  # graded last and not passed yet, else the first not passed
    import watchfiles  # noqa: F401  (imported here, not in its thread, so that watching starts before grading)

    out = sys.stdout  # bound now: while a suite runs in the grading thread, sys.stdout is redirected
    console.file = out
    waker = Waker()
    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    threading.Thread(target=watch_files, args=(ws.root / "exercises", events, stop, waker.wake), daemon=True).start()
    keep_warm()
    full = out.isatty() and os.environ.get("TERM") != "dumb"
    watcher = None
    try:
        with interrupt_flag() as interrupted, waker.on_signals(), keypresses(stdin) as key_fd, \
                Screen(out, console, full=full) as screen:
            watcher = Watcher(ws, start, console, timeout=timeout, screen=screen, wake=waker.wake)
            watcher.allow_weak = allow_weak
            watcher.grade()
            while not interrupted.is_set():
                fds = [waker.fd] + ([key_fd] if key_fd is not None else [])
                ready = select.select(fds, [], [], 0.5)[0]
                waker.drain()
                if key_fd in ready:
                    data = os.read(key_fd, 64)
                    if not data:  # the terminal is gone
                        break
                    if not all(watcher.key(k) for k in parse_keys(data.decode(errors="ignore"))):
                        break
                watcher.poll()
                changed = set()
                while not events.empty():
                    changed.add(events.get().resolve())
                saved = [ex for ex in catalog.exercises if ws.file_for(ex).resolve() in changed]
                if saved:
                    watcher.saved(next((ex for ex in saved if ex.number == watcher.ex.number), saved[0]))
                elif screen.resized():
                    watcher.draw()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        if watcher is not None:
            watcher.cancel()
        waker.close()
        if watcher is not None and watcher.state != "grading":
            console.print(watcher.status(), highlight=False)
        console.print("Bye: your progress is saved.")
