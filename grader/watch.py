"""`grade watch`: re-grade the exercise being edited on every save and redraw one screen.

torch, pytest and the suites stay imported in this process and each grade forks a fresh worker
from the warm fork server, so a save shows its verdict in a fraction of a second.
"""
from __future__ import annotations

import contextlib
import os
import queue
import select
import sys
import termios
import threading
import time
import tty
from pathlib import Path

from grader.catalog import Exercise, load_catalog
from grader.workspace import Workspace

KEYS = "[bold]h[/] hint · [bold]e[/] explain · [bold]n[/] next · [bold]l[/] list · [bold]q[/] quit"


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


def _watch_files(folder: Path, events: queue.Queue, stop: threading.Event) -> None:
    from watchfiles import watch

    for changes in watch(folder, stop_event=stop, debounce=30, step=10, rust_timeout=500, yield_on_timeout=True):
        for _, path in changes:
            events.put(Path(path))


class Watcher:
    def __init__(self, ws: Workspace, start: Exercise, console, *, timeout: float):
        self.ws, self.ex, self.console, self.timeout = ws, start, console, timeout
        self.catalog = load_catalog()
        self.extra = ""  # hint or list shown under the verdict until the next redraw

    def grade(self):
        from grader.render import verdict_text
        from grader.runner import grade
        from grader.sandbox import Limits

        started = time.perf_counter()
        v = grade(exercise=self.ex, path=self.ws.file_for(self.ex), device="cpu", limits=Limits(wall_s=self.timeout), warm=True)
        self.ws.record(self.ex, v.passed)
        self.console.clear()
        done = len(self.ws.passed)
        self.console.print(f"[bold]attention-kit watch[/] · exercise {self.ex.number}/{len(self.catalog.exercises)} · "
                           f"{done} passed · graded in {time.perf_counter() - started:.2f} s\n")
        self.console.print(verdict_text(v, path=str(self.ws.file_for(self.ex)), watching=True))
        if v.passed:
            nxt = self.next_pending()
            if nxt is not None:
                self.console.print(f"\n[green]Moving on to exercise {nxt.number}: {nxt.title}[/]")
                self.ex = nxt
                return self.grade_quietly_next()
        self.console.print(f"\n{KEYS}")
        return v

    def grade_quietly_next(self):
        time.sleep(0.8)  # let the learner see the pass before the next exercise's screen
        return self.grade()

    def next_pending(self) -> Exercise | None:
        later = [e for e in self.catalog.exercises if e.number > self.ex.number and e.number not in self.ws.passed]
        earlier = [e for e in self.catalog.exercises if e.number < self.ex.number and e.number not in self.ws.passed]
        return (later or earlier or [None])[0]

    def key(self, ch: str) -> bool:
        """Handle one key; False means quit."""
        if ch in ("q", "\x04"):
            return False
        if ch == "h":
            level = min(self.ws.hint_level.get(self.ex.number, 0) + 1, len(self.ex.hints))
            self.ws.hint_level[self.ex.number] = level
            self.ws.save()
            self.console.print(f"\n[bold]Hint {level}/{len(self.ex.hints)}:[/] {self.ex.hints[level - 1]}")
        elif ch == "e":
            from grader.explain import render_explainer

            self.console.print(render_explainer(str(self.ex.number), fmt="term"), markup=False)
        elif ch == "n":
            self.ex = self.catalog.next_after(self.ex) or self.catalog.exercises[0]
            self.grade()
        elif ch == "l":
            marks = [f"{'✓' if e.number in self.ws.passed else '·'} {e.number} {e.slug}" for e in self.catalog.exercises]
            self.console.print("\n" + "\n".join(marks), markup=False)
        return True


def run(*, ws: Workspace, exercise: Exercise | None, console, timeout: float = 30.0, stdin=None) -> None:
    """Watch ws until q or Ctrl-C. Grades `exercise`, or the first one not yet passed."""
    from grader.runner import keep_warm

    stdin = stdin or sys.stdin
    catalog = load_catalog()
    start = exercise or next((e for e in catalog.exercises if e.number not in ws.passed), catalog.exercises[0])
    keep_warm()
    watcher = Watcher(ws, start, console, timeout=timeout)
    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    threading.Thread(target=_watch_files, args=(ws.root / "exercises", events, stop), daemon=True).start()
    try:
        with keypresses(stdin) as key_fd:
            watcher.grade()
            while True:
                ready = select.select([key_fd], [], [], 0.05)[0] if key_fd is not None else time.sleep(0.05)
                if ready and not watcher.key(os.read(key_fd, 1).decode(errors="ignore")):
                    break
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
        console.print("\nBye: your progress is saved.")
