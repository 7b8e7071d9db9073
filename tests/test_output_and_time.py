"""What a submission prints is kept, and its time budget counts only its own running time (issue 14, items 3, 7)."""
from grader.catalog import load_catalog
from grader.render import verdict_text
from grader.runner import grade
from grader.sandbox import Limits, Sandbox

EX2 = load_catalog().get(2)
SOURCE = EX2.solution_path.read_text(encoding="utf-8")
LINE = "    d_k = query.size(-1)\n"


def with_line(tmp_path, extra: str):
    assert LINE in SOURCE
    path = tmp_path / "02_scaled_dot_product.py"
    path.write_text(SOURCE.replace(LINE, LINE + extra, 1), encoding="utf-8")
    return path


def test_print_is_captured_from_a_forked_worker(tmp_path):
    path = with_line(tmp_path, "    print('query shape', tuple(query.shape))\n")
    v = grade(exercise=EX2, path=path, warm=True)
    assert v.passed and "query shape (2, 5, 6)" in v.output
    assert "query shape" in v.to_json()["output"]
    assert "What your code printed" in verdict_text(v, path=str(path), verbose=True)


def test_print_survives_the_worker_being_killed(tmp_path):
    path = with_line(tmp_path, "    print('about to loop')\n    while True:\n        pass\n")
    v = grade(exercise=EX2, path=path, warm=True, limits=Limits(time_s=2))
    assert any(t.status.value == "timeout" for t in v.tests)
    assert "about to loop" in v.output


def test_start_up_is_not_part_of_the_budget():
    # a fresh interpreter imports torch (seconds) before the submission runs: that must not count
    v = grade(exercise=EX2, path=EX2.solution_path, warm=False, limits=Limits(time_s=1.5))
    assert v.passed, [(t.name, t.message) for t in v.failures()]


def test_an_infinite_loop_is_named_as_such(tmp_path):
    path = with_line(tmp_path, "    while True:\n        pass\n")
    v = grade(exercise=EX2, path=path, warm=True, limits=Limits(time_s=2))
    message = next(t.message for t in v.tests if t.status.value == "timeout")
    assert "starting the worker is not counted" in message and "infinite loop" in message


def _stalled(*, answered: int, used: float, current: float) -> str:
    """The message of a session whose earlier calls used used - current CPU seconds, the last one current."""
    import time

    sb = Sandbox(EX2.solution_path, limits=Limits(time_s=5))
    sb._by_cpu = False  # the clock _cpu() reads: here the wall clock, set by hand
    sb.answered, sb.cpu_used, sb._cpu0 = answered, used - current, time.monotonic() - current
    return sb._timeout_message()


def test_slow_code_is_told_from_an_infinite_loop():
    slow = _stalled(answered=12, used=5.0, current=0.6)  # every call took about 0.4 s
    assert "slow" in slow and "--timeout 10" in slow and "infinite loop" not in slow
    stuck = _stalled(answered=12, used=5.0, current=4.9)  # earlier calls were instant, then one never returned
    assert "infinite loop" in stuck
    assert "importing the file never finished" in _stalled(answered=0, used=5.0, current=5.0)
