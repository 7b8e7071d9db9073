"""grade watch's screen without a terminal or a grade (fast): the frame fits, the verdict and diagnosis come first,
every key works after a pass, n goes where the prompt says, and the list is `grade list`'s table."""
import re

from rich.cells import cell_len
from rich.console import Console

from grader.catalog import load_catalog
from grader.render import watch_parts
from grader.results import Diagnosis, Status, Verdict
from grader.results import TestResult as Result
from grader.screen import frame, lines_of
from grader.watch import Watcher, parse_keys
from grader.workspace import create
from tests.conftest import grade_here

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CATALOG = load_catalog()
EX3 = CATALOG.get(3)
BASE = Console(color_system="truecolor", force_terminal=True, highlight=False)


def failing_verdict(n_failures: int = 14) -> Verdict:
    tests = [Result(f"future_tokens_do_not_leak[{i}]", "masking", Status.FAILED,
                        f"changing token {i} changed the output at token 0 by 0.5{i}: the future leaks", code="future_token_leak")
             for i in range(n_failures)] + [Result("entry_point_has_contract_signature", "api", Status.PASSED)]
    mistake = Diagnosis("mask_inverted", "The mask is inverted: it blocks the past and keeps the future",
                        "The mask hides the wrong side of the diagonal. " * 4, "Check which entries are True.",
                        ["your output equals the reference computed with the mask inverted"])
    return Verdict(3, EX3.slug, EX3.title, tests, [mistake], "cpu", 0.4,
                   localization={"line": 26, "stage": "masked_scores", "matched_through": "scores",
                                 "evidence": "the tensor at line 26 is the first that differs"})


def plain(rows):
    return [ANSI.sub("", r) for r in rows]


def test_a_failing_verdict_fits_80x24_with_its_header_and_diagnosis_on_screen():
    v = failing_verdict()
    parts = watch_parts()
    body = parts.verdict(v, v.failures(), v.failures()[:3], None, EX3.hints, "/ws/exercises/03_causal_attention.py")
    status = parts.status(EX3, 12, 2, "graded", v, 0.4, 1)
    rows, scroll, total = frame(BASE, status=status, body=body, prompt=parts.prompt("", False, CATALOG.get(4), False),
                                keys=parts.keys("verdict"), columns=80, rows=24, scroll=0)
    text = plain(rows)
    assert len(rows) == 24 and total > 21  # the body is longer than the screen: it scrolls, the frame does not grow
    assert all(cell_len(r) <= 79 for r in text)  # the last column stays empty: no row can wrap
    assert text[0].startswith("exercise 3/12 causal_attention · attempt 2 · ✗ failing 1/15 · 0.4 s · 1 passed")
    assert text[1].startswith("✗ Exercise 3 · Causal self-attention with dropout")
    head = "\n".join(text[1:8])
    assert "(mask_inverted)" in head and "evidence: your output equals" in head  # the diagnosis comes first
    assert "where: line 26" in "\n".join(text)
    assert text[-3].startswith("  ↓ ") and "more" in text[-3]
    assert text[-1].startswith("h hint  e explain  d details  l list  n next  r regrade  q quit")
    rows, scroll, _ = frame(BASE, status=status, body=body, prompt="", keys="", columns=80, rows=24, scroll=10_000)
    assert scroll == total - 19 and plain(rows)[1].startswith("  ↑ ") and plain(rows)[-3] == ""  # clamped at the end


def test_a_small_or_wide_terminal_gets_a_frame_of_its_size():
    body = "\n".join(f"line {i} " + "word " * 30 for i in range(40))
    for columns, rows in ((80, 24), (120, 40), (40, 10)):
        out, _, _ = frame(BASE, status="s", body=body, prompt="p", keys="k", columns=columns, rows=rows, scroll=3)
        assert len(out) == rows and max(cell_len(r) for r in plain(out)) <= columns - 1
    assert len(frame(BASE, status="s", body=body, prompt="p", keys="k", columns=80, rows=4, scroll=0)[0]) == 1
    tiny, _, _ = frame(BASE, status="a status line longer than the terminal", body=body, prompt="p", keys="k",
                       columns=12, rows=24, scroll=0)
    assert len(tiny) == 1 and cell_len(plain(tiny)[0]) <= 11


def test_a_passing_grade_exercise_names_the_next_exercise_not_passed():
    from grader.render import verdict_text

    v = Verdict(3, EX3.slug, EX3.title, [Result("t", "api", Status.PASSED)], [], "cpu", 0.2)
    assert "Next: [bold]grade exercise 5[/] — Fix the naive" in verdict_text(v, path="x.py", upcoming=CATALOG.get(5))


def test_keys_arrive_whole_from_one_read():
    assert parse_keys("h\x1b[Bj\x1b[6~\x1bOA\x1b[1;5C\x1bq\r") == ["h", "down", "j", "pgdn", "up", "esc", "q", "\r"]


def test_next_is_the_first_exercise_not_passed_after_the_current_one(tmp_path):
    ws = create(tmp_path / "ws", CATALOG)
    ws.passed = {1, 2, 4}
    assert ws.next_exercise(CATALOG, EX3).number == 5
    ws.passed = {n for n in range(1, 13) if n != 2}
    assert ws.next_exercise(CATALOG, EX3).number == 2  # none after it: the first before it
    ws.passed = set(range(1, 13))
    assert ws.next_exercise(CATALOG, EX3) is None


class Frames:
    """A screen that keeps what it was asked to draw."""
    full, scroll, total, size = True, 0, 0, (80, 24)

    def __init__(self):
        self.drawn = []

    def draw(self, **parts):
        self.drawn.append(parts)

    def page_rows(self):
        return 19

    def text(self, part="body"):
        return "\n".join(plain(lines_of(BASE, self.drawn[-1][part], 79)))


def watcher_after_a_pass(tmp_path):
    ws = create(tmp_path / "ws", CATALOG)
    ws.passed = {1, 2, 4}
    ws.failing = {2}
    screen = Frames()
    w = Watcher(ws, EX3, BASE, timeout=30, screen=screen)
    started = []
    w.grade = lambda: started.append(w.ex.number)  # no worker: what would be graded is enough here
    v = Verdict(3, EX3.slug, EX3.title, [Result("t", "api", Status.PASSED)], [], "cpu", 0.2)
    w.attempts[3] = 1
    w.show(EX3, v, 0.2)
    return w, screen, started


def test_every_key_works_at_the_passed_prompt_and_n_goes_where_it_says(tmp_path):
    w, screen, started = watcher_after_a_pass(tmp_path)
    assert "n or Enter: exercise 5 — Fix the naive multi-head attention" in screen.text("prompt")  # 4 is passed
    w.key("h")
    assert w.ex.number == 3 and not started and "Hint 1/3:" in screen.text()  # not swallowed as "any key"
    w.key("l")
    assert w.ex.number == 3 and "causal_attention     Causal self-attention" in screen.text()
    w.key("d")
    assert w.view == "details" and "passed" in screen.text()
    w.key("x")
    assert "'x' does nothing here" in screen.text("prompt") and not started
    w.key("\r")
    assert started == [5] and w.ex.number == 5


def test_watch_list_shows_the_titles_and_states_of_grade_list(tmp_path):
    w, screen, _ = watcher_after_a_pass(tmp_path)
    w.key("l")
    shown = screen.text()
    listed = grade_here("list", cwd=w.ws.root).stdout
    for ex in CATALOG.exercises:
        row = next(line for line in shown.splitlines() if f" {ex.slug} " in line)
        assert ex.title.split()[0] in row
    for state in ("✓ passed (failing now)", "✓ passed", "not started"):
        assert shown.count(state) == listed.count(state) > 0
    row2 = next(line for line in shown.splitlines() if " scaled_dot_product " in line)
    assert "passed (failing now)" in row2 and "▸" in next(line for line in shown.splitlines() if " causal_attention " in line)


def test_frames_redraw_in_place_on_a_real_pty():
    """Screen's own escape sequences through a pty at 80×24 into a terminal emulator: a long frame, then a short
    one, leave exactly the second on screen, and nothing ever scrolls off the top."""
    import fcntl
    import os
    import select
    import struct
    import termios

    import pyte

    from grader.screen import Screen

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    emulator = pyte.HistoryScreen(80, 24, history=100)
    stream = pyte.ByteStream(emulator)
    with open(slave, "w", encoding="utf-8", closefd=True) as out:
        with Screen(out, BASE, full=True) as screen:
            screen.draw(status="first", body="\n".join(f"long {i} " + "wide " * 20 for i in range(60)), prompt="p",
                        keys="k")
            screen.draw(status="second", body="short body", prompt="prompt", keys="keys")
            while select.select([master], [], [], 0.2)[0]:
                stream.feed(os.read(master, 1 << 16))
            shown = [line.rstrip() for line in emulator.display]
    os.close(master)
    assert shown == ["second", "short body", *[""] * 20, "prompt", "keys"]
    assert not emulator.history.top


def test_a_save_during_a_grade_that_will_not_stop_waits_for_it_instead_of_overlapping(tmp_path, monkeypatch):
    import threading
    import time

    import grader.sandbox.session as session
    import grader.watch as watch

    release, running, calls = threading.Event(), [], []

    def stuck_grade(ex, path, **_):  # a grade that ignores the cancel (its worker is slow to die)
        running.append(1)
        calls.append(len(running))
        release.wait(10)
        running.pop()
        return Verdict(ex.number, ex.slug, ex.title, [Result("t", "api", Status.PASSED)], [], "cpu", 0.1)

    monkeypatch.setattr(watch, "grade_file", stuck_grade)
    monkeypatch.setattr(session, "cancel_all", lambda: None)
    ws = create(tmp_path / "ws", CATALOG)
    w = Watcher(ws, EX3, BASE, timeout=30, screen=Frames())
    w.grade()
    w.grade()  # a second save while the first grade is stuck
    assert w.deferred and w.state == "grading" and len(calls) == 1
    release.set()
    deadline = time.monotonic() + 5
    while w.state == "grading" and time.monotonic() < deadline:
        w.poll()
        time.sleep(0.02)
    assert calls == [1, 1] and not w.deferred and w.state == "graded"  # two grades, one after the other
