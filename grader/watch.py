"""`grade watch`: re-grade the exercise being edited on every save and redraw one screen.

torch, pytest and the suites stay imported in this process and each grade forks a fresh worker
from the warm fork server, so a save shows its verdict in a fraction of a second.
"""
from __future__ import annotations

import contextlib
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

from rich.markup import escape

from grader import history
from grader.catalog import Exercise, load_catalog
from grader.workspace import Hints, Workspace, named_mistake

KEYS = "[bold]h[/] hint · [bold]e[/] explain · [bold]n[/] next · [bold]l[/] list · [bold]q[/] quit"


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


def watch_files(folder: Path, events: queue.Queue, stop: threading.Event) -> None:
    """Put the path of every file changed under folder into events until stop is set (run it in a thread)."""
    from watchfiles import watch

    for changes in watch(folder, stop_event=stop, debounce=30, step=10, rust_timeout=500, yield_on_timeout=True):
        for _, path in changes:
            events.put(Path(path))


def grade_file(ex: Exercise, path: Path, *, timeout: float, allow_weak: bool = False):
    """One warm grade of path as ex on the CPU: its Verdict, or the exception that stopped it (to show)."""
    from grader.runner import grade
    from grader.sandbox import Limits

    try:
        return grade(exercise=ex, path=path, device="cpu", limits=Limits(time_s=timeout), warm=True,
                     allow_weak_sandbox=allow_weak)
    except Exception as exc:  # shown on the screen; watching goes on
        return exc


class Watcher:
    """One screen: the verdict of the exercise being edited. Grades run in a thread so keys stay live."""

    allow_weak = False  # --allow-weak-sandbox: grade the learner's own files on a machine that cannot isolate them

    def __init__(self, ws: Workspace, start: Exercise, console, *, timeout: float):
        self.ws, self.ex, self.console, self.timeout = ws, start, console, timeout
        self.catalog = load_catalog()
        self.hints = Hints(ws)
        self.results: queue.Queue = queue.Queue()
        self.job: threading.Thread | None = None
        self.generation = 0
        self.passed_next: Exercise | None = None  # a pass stays on screen until a key moves on to this one
        self.verdict = None

    # -- grading in the background ----------------------------------------------------------
    def grade(self) -> None:
        """Start grading self.ex (stopping a grade still running); the screen says so at once."""
        self.cancel()
        self.generation += 1
        self.passed_next = None
        self.console.print(f"\n[bold]⧗ grading exercise {self.ex.number} ({self.ex.slug})…[/] [dim]q quits[/]")
        self.job = threading.Thread(target=self._grade, args=(self.ex, self.generation), daemon=True)
        self.job.start()

    def _grade(self, ex: Exercise, generation: int) -> None:
        started = time.perf_counter()
        v = grade_file(ex, self.ws.file_for(ex), timeout=self.timeout, allow_weak=self.allow_weak)
        self.results.put((generation, ex, v, time.perf_counter() - started))

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

    def show(self, ex: Exercise, v, took: float) -> None:
        from grader.render import show, verdict_text

        self.console.clear()
        if isinstance(v, Exception):
            self.console.print(f"[red]grading failed: {escape(f'{type(v).__name__}: {v}')}[/]\n\n{KEYS}")
            return
        self.verdict = v
        problem = None
        try:
            self.ws.record(ex, v.passed)
            if v.state == "not_started":
                self.hints.mark(ex, 1)  # hint 1 is on the screen: h shows hint 2
            self.hints.note(ex, named_mistake(v))
            if self.hints.pending(ex):
                self.hints.shown(ex)  # the verdict on screen shows that mistake's hint: h goes on with the ladder
        except OSError as exc:
            problem = f"progress not saved: {exc.strerror or exc}"
        problem = history.record_grade(ex, v)[1] or problem
        self.console.print(f"[bold]attention-kit watch[/] · exercise {ex.number}/{len(self.catalog.exercises)} · "
                           f"{len(self.ws.passed)} passed · graded in {took:.2f} s\n")
        show(self.console, verdict_text(v, path=str(self.ws.file_for(ex)), watching=True))
        if problem:
            self.console.print(f"[yellow]{escape(problem)}[/]")
        nxt = self.next_pending() if v.passed else None
        if nxt is not None:
            self.passed_next = nxt
            self.console.print(f"\n[green]Press any key for exercise {nxt.number}: {escape(nxt.title)}[/] "
                               "(or keep editing; q quits)")
        else:
            self.console.print(f"\n{KEYS}")

    def next_pending(self) -> Exercise | None:
        later = [e for e in self.catalog.exercises if e.number > self.ex.number and e.number not in self.ws.passed]
        earlier = [e for e in self.catalog.exercises if e.number < self.ex.number and e.number not in self.ws.passed]
        return (later or earlier or [None])[0]

    # -- keys ------------------------------------------------------------------------------
    def key(self, ch: str) -> bool:
        """Handle one key; False means quit."""
        from grader.render import hint_text, show

        if ch in ("q", "\x04", "\x03"):  # Ctrl-C arrives as a key only where the terminal does not signal
            return False
        if self.passed_next is not None:
            self.ex = self.passed_next
            self.grade()
        elif ch == "h":
            level = self.hints.next(self.ex)
            if level <= self.hints.seen(self.ex):
                self.console.print(f"\n[dim]That was the last hint ({level}/{len(self.ex.hints)}); "
                                   "[bold]e[/] opens the explainers.[/]")
                return True
            self.hints.mark(self.ex, level)
            show(self.console, "\n" + escape(hint_text(self.ex, level)))
        elif ch == "e":
            self.explain()
        elif ch == "n":
            self.ex = self.catalog.next_after(self.ex) or self.catalog.exercises[0]
            self.grade()
        elif ch == "l":
            marks = [f"{'✓' if e.number in self.ws.passed else '·'} {e.number} {e.slug}" for e in self.catalog.exercises]
            self.console.print("\n" + "\n".join(marks), markup=False)
        return True

    def explain(self) -> None:
        """The exercise's explainers in a pager ($PAGER, else less with LESS=FRX when unset), wrapped to the terminal's width."""
        import click

        from grader.explain import render_explainer
        from grader.explain.pager import find_pager, page

        if self.job is not None and self.job.is_alive():  # the suite redirects sys.stdout while it runs
            self.job.join(timeout=3)
            self.cancel()
            self.job.join(timeout=10)  # its worker is gone, so the suite ends fast; the pager needs the real stdout
            self.poll()
        pager = find_pager() if sys.stdin.isatty() and self.console.file.isatty() else None
        color = self.console.color_system is not None and (pager is None or pager.color)
        text = render_explainer(str(self.ex.number), fmt="term", color=color, width=min(self.console.width, 100))
        if pager is None:
            click.echo(text, color=color)
        else:
            self.console.file.flush()
            page(text, pager)
        self.console.print(f"\n{KEYS}")


def run(*, ws: Workspace, exercise: Exercise | None, console, timeout: float = 30.0, stdin=None,
        allow_weak: bool = False) -> None:
    """Watch ws until q or Ctrl-C. Grades `exercise`, or the one being worked on (Workspace.current)."""
    from grader.runner import keep_warm

    stdin = stdin or sys.stdin
    catalog = load_catalog()
    start = exercise or ws.current(catalog)  # graded last and not passed yet, else the first not passed
    import watchfiles  # noqa: F401  (imported here, not in its thread, so that watching starts before grading)

    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    threading.Thread(target=watch_files, args=(ws.root / "exercises", events, stop), daemon=True).start()
    keep_warm()
    console.file = sys.stdout  # bound now: while a suite runs in the grading thread, sys.stdout is redirected
    watcher = Watcher(ws, start, console, timeout=timeout)
    watcher.allow_weak = allow_weak
    try:
        with interrupt_flag() as interrupted, keypresses(stdin) as key_fd:
            watcher.grade()
            while not interrupted.is_set():
                ready = select.select([key_fd], [], [], 0.05)[0] if key_fd is not None else time.sleep(0.05)
                if ready and not watcher.key(os.read(key_fd, 1).decode(errors="ignore")):
                    break
                watcher.poll()
                changed = set()
                while not events.empty():
                    changed.add(events.get().resolve())
                for ex in catalog.exercises:
                    if ws.file_for(ex).resolve() in changed:
                        watcher.ex = ex
                        watcher.grade()
                        break
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        watcher.cancel()
        console.print("\nBye: your progress is saved.")
