"""The worker boundary: limits, kills, output capture, safe replies."""
import os
import time

import pytest
import torch

from grader.sandbox import Limits, Sandbox, SubmissionError, WorkerGone
from grader.sandbox.zygote import Zygote


def alive(pid: int) -> bool:
    """Running and not a zombie (an orphan killed with its group may wait for init to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture(scope="module")
def zygote():
    server = Zygote().start()
    yield server
    server.close()


@pytest.fixture(params=["spawn", "fork"])
def start(request, write, zygote):
    """Start a worker for source: a fresh interpreter, or a fork of the warm zygote."""
    def _start(source, **limits):
        server = zygote if request.param == "fork" else None
        return Sandbox(write("sub.py", source), limits=Limits(**limits), zygote=server).start()

    return _start


def test_round_trip_returns_plain_tensors(start):
    with start("import torch\n\ndef f(x):\n    return x * 2, x.sum()\n") as sb:
        sb.request({"op": "load"})
        reply, out = sb.request({"op": "run", "entry": "f", "init": None, "args": ["x"]}, {"x": torch.ones(2, 3)})
        assert reply["outputs"][0]["shape"] == [2, 3]
        assert type(out["out.0"]) is torch.Tensor and out["out.0"].dtype == torch.float64
        assert torch.equal(out["out.0"], torch.full((2, 3), 2.0, dtype=torch.float64))


def test_exception_in_submission_is_reported_with_line(start):
    with start("import torch\n\ndef f(x):\n    return x @ torch.ones(7, 7)\n") as sb:
        sb.request({"op": "load"})
        with pytest.raises(SubmissionError) as err:
            sb.request({"op": "run", "entry": "f", "init": None, "args": ["x"]}, {"x": torch.ones(2, 3)})
        assert err.value.line == 4 and err.value.type == "RuntimeError"


def test_base_exceptions_are_contained(start):
    with start("def f(x):\n    raise SystemExit(0)\n\ndef g(x):\n    raise KeyboardInterrupt\n") as sb:
        sb.request({"op": "load"})
        for name in ("f", "g"):
            with pytest.raises(SubmissionError):
                sb.request({"op": "run", "entry": name, "init": None, "args": ["x"]}, {"x": torch.ones(1)})
        assert sb.gone is None  # the worker survived both


def test_hang_costs_one_budget_then_fails_fast(start):
    # the budget also covers the worker's start (a fresh interpreter imports torch), so leave room for it
    with start("def f(x):\n    while True:\n        pass\n", wall_s=8) as sb:
        sb.request({"op": "load"})
        with pytest.raises(WorkerGone) as err:
            sb.request({"op": "run", "entry": "f", "init": None, "args": ["x"]}, {"x": torch.ones(1)})
        assert err.value.reason == "timeout"
        assert time.monotonic() <= sb.deadline + 1.0  # stopped at the budget's end, not later
        t1 = time.monotonic()
        with pytest.raises(WorkerGone):
            sb.request({"op": "load"})
        assert time.monotonic() - t1 < 0.1


def test_process_exit_is_a_crash(start):
    with start("import torch\nimport math\n\ndef f(x):\n    import os\n    os._exit(0)\n") as sb:
        sb.request({"op": "load"})
        with pytest.raises(WorkerGone) as err:
            sb.request({"op": "run", "entry": "f", "init": None, "args": ["x"]}, {"x": torch.ones(1)})
        assert err.value.reason == "crash"


def test_memory_limit(start):
    src = "import torch\n\ndef f(x):\n    return torch.ones(1 << 31, dtype=torch.float64).sum() + x\n"
    with start(src, memory_mb=1024) as sb:
        sb.request({"op": "load"})
        with pytest.raises(SubmissionError) as err:
            sb.request({"op": "run", "entry": "f", "init": None, "args": ["x"]}, {"x": torch.ones(1)})
        assert err.value.memory


def test_output_is_captured_and_truncated(start):
    with start("print('x' * 100000)\n", output_kb=4) as sb:
        sb.request({"op": "load"})
        time.sleep(0.2)
        text = sb.captured_output()
        assert text.startswith("xxxx") and "more bytes of output not shown" in text and len(text) < 5000


def test_close_kills_the_whole_process_group(start):
    src = ("import subprocess\n"
           "p = subprocess.Popen(['sleep', '60'])\n"
           "open('child.pid', 'w').write(str(p.pid))\n")
    sb = start(src)
    sb.request({"op": "load"})
    pid = int(open(os.path.join(sb._tmp, "child.pid")).read())
    sb.close()
    time.sleep(0.2)
    assert not alive(pid)


def test_private_directory_holds_only_the_submission_and_is_removed(start):
    src = "import os\nFILES = sorted(os.listdir('.'))\n\ndef f(x):\n    return x\n"
    sb = start(src)
    sb.request({"op": "load"})
    tmp = sb._tmp
    assert sorted(os.listdir(tmp)) == ["submission.py"]
    sb.close()
    assert not os.path.exists(tmp)


def test_zygote_workers_are_isolated_processes(zygote, write):
    """A forked worker gets its own session and directory, and its exit status comes back."""
    src = "import os\nSID = os.getsid(0)\nPID = os.getpid()\n\ndef f(x):\n    os._exit(7)\n"
    sb = Sandbox(write("sub.py", src), zygote=zygote).start()
    try:
        sb.request({"op": "load"})
        assert os.getpgid(sb.pid) == sb.pid != zygote.proc.pid
        with pytest.raises(WorkerGone) as err:
            sb.request({"op": "run", "entry": "f", "init": None, "args": ["x"]}, {"x": torch.ones(1)})
        assert err.value.reason == "crash" and "exit status 7" in err.value.detail
    finally:
        sb.close()
