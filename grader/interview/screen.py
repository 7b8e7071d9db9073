"""The interview's terminal: a timer, a grade on every save (watch's file watching and warm grading),
keys, then the scorecard and the follow-up questions with their answers revealed one key at a time."""
from __future__ import annotations

import os
import queue
import select
import threading
import time
from pathlib import Path

from grader.interview.card import HINT_COST, Session
from grader.render import environment, show
from grader.watch import grade_file, interrupt_flag, keypresses, watch_files

SHOWN_FAILURES = 3


def clock(seconds: float | None) -> str:
    seconds = max(0, int(seconds or 0))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def macros():
    return environment().get_template("interview/interview.term.j2").module


class Screen:
    """One interview: grades run in a thread so keys and the timer stay live."""

    def __init__(self, *, ex, path: Path, session: Session, console, timeout: float, allow_weak: bool):
        self.ex, self.path, self.session, self.console = ex, path, session, console
        self.timeout, self.allow_weak = timeout, allow_weak
        self.results: queue.Queue = queue.Queue()
        self.job: threading.Thread | None = None
        self.generation = 0
        self.hint_level = 0
        self.pending: tuple | None = None  # (generation, text, at) of a save waiting for the running grade to end
        self.last_status = ""
        self.m = macros()

    # -- grading ------------------------------------------------------------------------
    # One grade at a time (the runner is not made for two at once in one process): a save while a grade runs
    # stops that grade's worker and waits for it to end; then the newest save is graded.
    def warm_up(self) -> None:
        """Grade the page once, unseen, while the candidate reads it: the first save is then as fast as the next."""
        self.job = threading.Thread(target=self._verdict, daemon=True)
        self.job.start()

    def grade(self) -> None:
        """Grade the page as saved now (after the grade running, if any, which is stopped)."""
        from grader.sandbox.session import cancel_all

        self.generation += 1
        at = self.session.elapsed()
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        self.pending = (self.generation, text, at)
        self.say(self.m.grading(clock(at)))
        if self.busy():
            cancel_all()
        else:
            self._start()

    def _start(self) -> None:
        self.job = threading.Thread(target=self._grade, args=self.pending, daemon=True)
        self.pending = None
        self.job.start()

    def _grade(self, generation: int, text: str, at: float) -> None:
        self.results.put((generation, text, at, self._verdict()))

    def _verdict(self):
        """The page's verdict, or the exception that stopped grading it (shown; the interview goes on)."""
        try:
            return grade_file(self.ex, self.path, timeout=self.timeout, allow_weak=self.allow_weak)
        except Exception as exc:
            return exc

    def cancel(self) -> None:
        from grader.sandbox.session import cancel_all

        self.pending = None
        if self.busy():
            self.generation += 1
            cancel_all()
            self.job.join(timeout=0.3)

    def busy(self) -> bool:
        return self.job is not None and self.job.is_alive()

    def poll(self) -> None:
        while not self.results.empty():
            generation, text, at, v = self.results.get()
            if generation == self.generation:
                self.result(text, at, v)
        if self.pending is not None and not self.busy():
            self._start()

    def result(self, text: str, at: float, v) -> None:
        if isinstance(v, Exception):
            self.say(f"[red]grading failed: {type(v).__name__}[/] {self._esc(v)}")
            return
        attempt = self.session.note(v, text, at)
        if attempt is None:
            reason = ("the page is unchanged" if text.split() == self.session.page.split()
                      else "not started yet: nothing is implemented (NotImplementedError, or no code)")
            self.say(self.m.not_counted(reason, clock(at)))
            return
        failing, seen = [], set()
        for t in v.failures():  # in the suites' order: api, shape, numerics, masking, dropout, device
            if t.message not in seen and len(failing) < SHOWN_FAILURES:
                failing.append(t)
                seen.add(t.message)
        self.say(self.m.attempt(len(self.session.attempts), attempt, v, failing, clock(at)))

    @staticmethod
    def _esc(value) -> str:
        from rich.markup import escape

        return escape(str(value))

    # -- output -------------------------------------------------------------------------
    def say(self, markup: str) -> None:
        """Print above the timer line (which is redrawn after)."""
        if self.last_status and self.console.is_terminal:
            self.console.file.write("\r\x1b[2K")
        self.last_status = ""
        show(self.console, markup)
        self.tick(force=True)

    def tick(self, force: bool = False) -> None:
        """The timer line, redrawn in place each second on a terminal (printed on changes elsewhere)."""
        s = self.session
        state = "grading…" if self.busy() or self.pending else ("waiting for a save" if not s.attempts else
                                               ("passed" if s.passed else "failing"))
        line = self.m.status(clock(s.elapsed()), clock(s.minutes * 60), len(s.attempts), state)
        if line == self.last_status and not force:
            return
        if self.console.is_terminal:
            from rich.text import Text

            self.console.file.write("\r\x1b[2K")
            self.console.print(Text.from_markup(line), end="")
            self.console.file.flush()
        elif force:
            self.console.print(line, markup=False)
        self.last_status = line

    # -- keys ---------------------------------------------------------------------------
    def key(self, ch: str) -> bool:
        """Handle one key; False ends the interview."""
        if ch in ("q", "\x04", "\x03"):
            return False
        if ch == "h":
            if not self.session.hints_allowed:
                self.say("[dim]No hints in this interview (start it with --hints to allow them, at a cost).[/]")
            elif self.hint_level >= len(self.ex.hints):
                self.say(f"[dim]That was the last hint ({len(self.ex.hints)}/{len(self.ex.hints)}).[/]")
            else:
                self.hint_level += 1
                self.session.hints += 1
                self.say(self.m.hint(self.hint_level, len(self.ex.hints), self.ex.hints[self.hint_level - 1], HINT_COST))
        return True


def run(*, ex, path: Path, session: Session, console, stdin, timeout: float, allow_weak: bool) -> Session:
    """Run the interview until a pass, the time limit, q or Ctrl-C; returns the session (ended is set)."""
    from grader.runner import keep_warm

    import watchfiles  # noqa: F401  (imported before its thread, so that watching starts before the first save)

    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    threading.Thread(target=watch_files, args=(path.parent, events, stop), daemon=True).start()
    keep_warm()
    screen = Screen(ex=ex, path=path, session=session, console=console, timeout=timeout, allow_weak=allow_weak)
    target = path.resolve()
    screen.warm_up()
    screen.say(screen.m.keys(session.hints_allowed))
    try:
        with interrupt_flag() as interrupted, keypresses(stdin) as key_fd:
            while session.ended is None:
                if interrupted.is_set():
                    session.ended = "quit"
                    break
                ready = select.select([key_fd], [], [], 0.1)[0] if key_fd is not None else time.sleep(0.1)
                if ready and not screen.key(os.read(key_fd, 1).decode(errors="ignore")):
                    session.ended = "quit"
                    break
                screen.poll()
                saved = False
                while not events.empty():
                    saved = saved or events.get().resolve() == target
                if saved and session.ended is None and not session.out_of_time():
                    screen.grade()
                if session.out_of_time() and session.ended is None and not screen.busy() and screen.pending is None:
                    screen.poll()  # a save graded just before the limit still counts
                    session.ended = session.ended or "time"
                screen.tick()
    except KeyboardInterrupt:
        session.ended = session.ended or "quit"
    finally:
        stop.set()
        screen.cancel()
        if screen.last_status and console.is_terminal:
            console.file.write("\n")
    return session


def ask(*, ex, questions, console, stdin, reveal: bool) -> None:
    """The follow-up questions: each answer on a key (space or a), all at once with reveal, none without a terminal."""
    m = macros()
    if not questions:
        console.print(f"No follow-up questions are kept for exercise {ex.number} ({ex.slug}).", markup=False)
        return
    show(console, m.questions_head(ex, len(questions)))
    with keypresses(stdin) as key_fd:
        for i, q in enumerate(questions, 1):
            show(console, m.question(i, len(questions), q))
            if reveal:
                show(console, m.answer(q))
                continue
            if key_fd is None:
                continue
            last = i == len(questions)
            show(console, m.question_keys(last))
            ch = _key(key_fd, "anq\x04 \r\n")
            if ch in "q\x04":
                return
            if ch in "a \r\n":
                show(console, m.answer(q))
                if last:
                    return
                show(console, m.next_keys())
                if _key(key_fd, "nq\x04 \r\n") in "q\x04":
                    return
    if not reveal and key_fd is None:
        show(console, m.no_answers(ex))


def _key(fd: int, wanted: str) -> str:
    while True:
        ch = os.read(fd, 1).decode(errors="ignore")
        if not ch or ch in wanted:
            return ch or "q"
