"""The worker boundary: limits, kills, output capture, safe replies."""
import os
import time

import pytest
import torch

from grader.sandbox import Limits, Sandbox, SubmissionError, WorkerGone, isolation
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
    """Start a worker for source: a fresh interpreter, or a fork of the warm zygote. Both, for what the two
    paths do differently (starting, output, exits, limits, kills); fork alone for the request loop they share."""
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


@pytest.mark.parametrize("start", ["fork"], indirect=True)  # the worker loop: the same after spawn
def test_a_batch_answers_each_call_as_if_alone_and_stops_at_the_first_error(start):
    """One frame, several calls: each gets its own copy of a tensor they share (an in-place change made by one
    is not seen by the next), replies come back in order, and the first call that raises ends the batch."""
    src = "import torch\n\ndef f(x):\n    x.mul_(10)\n    return x + 1\n\ndef g(x):\n    raise ValueError('no')\n"
    with start(src) as sb:
        sb.request({"op": "load"})
        x = torch.ones(2)
        call = {"op": "run", "entry": "f", "init": None, "args": ["x"]}
        answers = sb.batch([(call, {"x": x}), (call, {"x": x}), ({**call, "entry": "g"}, {"x": x}), (call, {"x": x})])
        assert len(answers) == 3 and sb.answered == 4  # the load, then three calls run: the fourth was not
        for reply, out in answers[:2]:
            assert reply["ok"] and list(out) == ["out.0"] and torch.equal(out["out.0"], torch.full((2,), 11.0))
        assert isinstance(answers[2], SubmissionError) and answers[2].type == "ValueError" and answers[2].line == 8
        assert torch.equal(x, torch.ones(2)) and sb.gone is None
        with pytest.raises(ValueError):
            sb.batch([({"op": "load"}, None)])  # never a load (nor a trace, nor a batch) inside a batch


@pytest.mark.parametrize("start", ["fork"], indirect=True)  # the worker loop: the same after spawn
def test_exception_in_submission_is_reported_with_line(start):
    with start("import torch\n\ndef f(x):\n    return x @ torch.ones(7, 7)\n") as sb:
        sb.request({"op": "load"})
        with pytest.raises(SubmissionError) as err:
            sb.request({"op": "run", "entry": "f", "init": None, "args": ["x"]}, {"x": torch.ones(2, 3)})
        assert err.value.line == 4 and err.value.type == "RuntimeError"


@pytest.mark.parametrize("start", ["fork"], indirect=True)  # the worker loop: the same after spawn
def test_base_exceptions_are_contained(start):
    with start("def f(x):\n    raise SystemExit(0)\n\ndef g(x):\n    raise KeyboardInterrupt\n") as sb:
        sb.request({"op": "load"})
        for name in ("f", "g"):
            with pytest.raises(SubmissionError):
                sb.request({"op": "run", "entry": name, "init": None, "args": ["x"]}, {"x": torch.ones(1)})
        assert sb.gone is None  # the worker survived both


def test_hang_costs_one_budget_then_fails_fast(start):
    # the budget counts only requests, not the worker's start (a fresh interpreter imports torch)
    with start("def f(x):\n    while True:\n        pass\n", time_s=1.5) as sb:
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


def test_no_child_processes_or_close_kills_the_whole_process_group(start):
    """With seccomp the worker cannot start a process at all (so its memory limit is the submission's);
    without, whatever it started dies with its process group."""
    src = ("import subprocess\n"
           "try:\n"
           "    p = subprocess.Popen(['sleep', '60'])\n"
           "    open('child.pid', 'w').write(str(p.pid))\n"
           "except OSError as exc:\n"
           "    open('child.pid', 'w').write(type(exc).__name__)\n")
    sb = start(src)
    sb.request({"op": "load"})
    got = open(os.path.join(sb._tmp, "child.pid")).read()
    if isolation.pyseccomp is not None:
        assert got == "PermissionError"
        sb.close()
        return
    sb.close()
    time.sleep(0.2)
    assert not alive(int(got))


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


@pytest.mark.parametrize("header", [
    b"[" * 100_000 + b"]" * 100_000,  # RecursionError in json
    b'{"ok": true, "outputs": [{"shape": [[[[[[2]]]]]], "dtype": "float64"}]}',  # deeper than a reply
    b'{"ok": true, "pwned": 1}',  # a key no reply has
    b'{"ok": true, "outputs": "all"}',  # a key of the wrong type
    b'{"ok": false, "error": {"type": "' + b"x" * 5000 + b'"}}',  # an overlong string
])
def test_every_malformed_reply_is_a_crash_of_that_submission(zygote, write, header):
    """Whatever the worker writes into its reply pipe is data: a ProtocolError, reported as a crash
    (the grader's side of the protocol, the same on both spawn paths: forked workers only)."""
    src = ("import os, struct\n"
           f"HEADER = {header!r}\n"
           "def f(x):\n"
           "    for fd in range(3, 256):\n"
           "        try:\n"
           "            os.write(fd, struct.pack('>Q', len(HEADER)) + HEADER + struct.pack('>Q', 0))\n"
           "        except OSError:\n"
           "            pass\n"
           "    return x\n")
    with Sandbox(write("sub.py", src), zygote=zygote) as sb:
        sb.request({"op": "load"})
        with pytest.raises(WorkerGone) as err:
            sb.request({"op": "run", "entry": "f", "init": None, "args": ["x"]}, {"x": torch.ones(1)})
        assert err.value.reason == "crash" and "reply" in err.value.detail


@pytest.mark.parametrize("header", [
    b'{"ok": true, "replies": [{"ok": true}, {"ok": true}, {"ok": true}]}',  # more replies than calls
    b'{"ok": true, "replies": []}',  # none
    b'{"ok": true, "replies": [{"ok": false}, {"ok": true}]}',  # on after a failure
    b'{"ok": true, "replies": [{"ok": true, "pwned": 1}]}',  # a reply no call gets
    b'{"ok": true, "replies": [7]}',  # not a reply
    b'{"ok": true, "replies": [{"ok": true}], "outputs": []}',  # a key a batch reply does not have
])
def test_every_malformed_batch_reply_is_a_crash_of_that_submission(zygote, write, header):
    """The reply to a batch is checked as a whole and call by call, as any reply is."""
    src = ("import os, struct\n"
           f"HEADER = {header!r}\n"
           "def f(x):\n"
           "    for fd in range(3, 256):\n"
           "        try:\n"
           "            os.write(fd, struct.pack('>Q', len(HEADER)) + HEADER + struct.pack('>Q', 0))\n"
           "        except OSError:\n"
           "            pass\n"
           "    return x\n")
    with Sandbox(write("sub.py", src), zygote=zygote) as sb:
        sb.request({"op": "load"})
        call = ({"op": "run", "entry": "f", "init": None, "args": ["x"]}, {"x": torch.ones(1)})
        with pytest.raises(WorkerGone) as err:
            sb.batch([call, call])
        assert err.value.reason == "crash" and "reply" in err.value.detail


def test_batch_reply_tensors_must_name_a_call():
    from grader.sandbox.protocol import ProtocolError, split_batch_tensors

    assert split_batch_tensors({"0.out.0": 1, "1.out.0": 2}, 2) == [{"out.0": 1}, {"out.0": 2}]
    for name in ("2.out.0", "out.0", "01.out.0", "\u00b2.out.0", "-1.out.0"):
        with pytest.raises(ProtocolError):
            split_batch_tensors({name: 1}, 2)


@pytest.mark.parametrize("start", ["fork"], indirect=True)  # the worker loop: the same after spawn
def test_submission_text_is_cleaned(start):
    """Exception type names, messages and printed output reach the grader without escape sequences."""
    src = ("print('\\x1b[2J\\x1b[32mpassed\\r')\n"
           "Spoof = type('\\x1b[32mOK\\x1b[0m', (Exception,), {})\n"
           "def f(x):\n"
           "    raise Spoof('\\x1b[1A\\x1b[2K\\u202e passed')\n")
    with start(src) as sb:
        sb.request({"op": "load"})
        with pytest.raises(SubmissionError) as err:
            sb.request({"op": "run", "entry": "f", "init": None, "args": ["x"]}, {"x": torch.ones(1)})
        time.sleep(0.1)
        shown = err.value.type + err.value.message + sb.captured_output()
        assert "\x1b" not in shown and "\r" not in shown and "\u202e" not in shown
        assert err.value.type == "OK" and "passed" in err.value.message


def test_cgroup_v2_per_worker(tmp_path, monkeypatch):
    """Where a writable cgroup v2 has the controllers, a worker's cgroup gets the limits and is removed."""
    from grader.sandbox import cgroup

    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    monkeypatch.setattr(cgroup, "ROOTS", (str(tmp_path),))
    monkeypatch.setattr(cgroup, "_own_path", lambda: "/")
    group = cgroup.WorkerCgroup("attention-kit-test")
    assert group.create(memory_mb=512, processes=64, cpus=1.0), group.reason
    made = tmp_path / "attention-kit-test"
    assert (made / "memory.max").read_text() == str(512 << 20) and (made / "pids.max").read_text() == "64"
    assert (made / "cpu.max").read_text() == "100000 100000"
    assert "+memory" in (tmp_path / "cgroup.subtree_control").read_text()
    for f in made.iterdir():
        f.unlink()
    group.remove()
    assert not made.exists()
    (tmp_path / "cgroup.controllers").write_text("cpuset io\n")  # a hybrid layout: controllers are in v1
    ok, why = cgroup.available()
    assert not ok and "memory" in why


def test_without_libseccomp_the_worker_degrades(monkeypatch):
    """pyseccomp cannot load libseccomp: no filter, a clear reason, and the self-check's tier says so."""
    from grader.sandbox import selfcheck

    monkeypatch.setattr(isolation, "pyseccomp", None)
    monkeypatch.setattr(isolation, "SECCOMP_ERROR", "RuntimeError: Unable to find libseccomp")
    state = isolation._install_seccomp()
    assert state.startswith("no seccomp filter") and "libseccomp" in state
    assert selfcheck.tier({"syscalls": state, "limits": "no cgroup"}).endswith("per-process rlimits only")


def test_runs_gives_each_result_in_turn_as_run_would(zygote, write):
    """Harness.runs: one request for the calls; results in order; a call's error is raised at its turn, the
    calls before it still answered; a call after it (the worker stopped there) is sent alone if the check goes on."""
    from grader.catalog import load_catalog
    from grader.harness import Harness

    ex = load_catalog().get("2")
    src = ("import torch\n\n"
           "def scaled_dot_product_attention(query, key, value, mask=None):\n"
           "    if query.shape[-2] == 3:\n"
           "        raise ValueError('three')\n"
           "    w = torch.softmax(query @ key.transpose(-2, -1), -1)\n"
           "    return w @ value, w\n")
    with Sandbox(write("sub.py", src), zygote=zygote) as sb:
        kit = Harness(ex, sb)
        kit.load()
        q = [kit.randn(2, n, 4, salt=n) for n in (2, 3, 5)]
        results = kit.runs([kit.call(None, [x, x, x], n_outputs=2) for x in q])
        assert sb.answered == 1  # nothing sent before the first result is asked for
        (out, w), _ = next(results)
        assert sb.answered == 3 and out.shape == (2, 2, 4) and w.shape == (2, 2, 2)  # two calls ran, then the error
        with pytest.raises(SubmissionError) as err:
            next(results)
        assert err.value.type == "ValueError" and kit.last_call["args"][0]["shape"] == [2, 3, 4]
        (out, _), _ = next(results)  # the check caught it and went on: the third call is sent on its own
        assert sb.answered == 4 and out.shape == (2, 5, 4)
        with pytest.raises(StopIteration):
            next(results)


def test_a_run_call_already_answered_in_the_grade_is_not_sent_again(zygote, write):
    """The same call (request and tensor values) is answered from the grade's memory, a copy each time; a call that
    differs in one value, or that raised, goes to the worker; a new Harness (the next grade) remembers nothing."""
    from grader.catalog import load_catalog
    from grader.harness import Harness

    ex = load_catalog().get("2")
    src = ("import torch\n\n"
           "def scaled_dot_product_attention(query, key, value, mask=None):\n"
           "    if query.shape[-2] == 3:\n"
           "        raise ValueError('three')\n"
           "    w = torch.softmax(query @ key.transpose(-2, -1), -1)\n"
           "    return w @ value, w\n")
    with Sandbox(write("sub.py", src), zygote=zygote) as sb:
        kit = Harness(ex, sb)
        kit.load()
        x, y, bad = kit.randn(2, 2, 4), kit.randn(2, 2, 4, salt=1), kit.randn(2, 3, 4)
        (first, _), _ = next(kit.runs([kit.call(None, [x, x, x], n_outputs=2)]))
        assert sb.answered == 2
        kept = first.clone()
        first.add_(1.0)  # a check that changes what it got does not change what is remembered
        again = list(kit.runs([kit.call(None, [x.clone(), x, x], n_outputs=2), kit.call(None, [y, y, y], n_outputs=2)]))
        assert sb.answered == 3  # only y's call was sent
        assert torch.equal(again[0][0][0], kept)
        for _ in range(2):
            with pytest.raises(SubmissionError):
                kit.run(None, [bad, bad, bad], n_outputs=2)
        assert sb.answered == 5
        kit2 = Harness(ex, sb)
        kit2.run(None, [x, x, x], n_outputs=2)
        assert sb.answered == 6


def test_after_a_forbidden_call_nothing_remembered_is_answered(zygote, write):
    """The worker refuses every call after the submission called a forbidden API: a call answered before is sent
    again, and refused."""
    from grader.catalog import load_catalog
    from grader.harness import Harness

    ex = load_catalog().get("2")
    assert "torch.nn.functional.scaled_dot_product_attention" in ex.forbidden
    src = ("import torch\nimport torch.nn.functional as F\n\n"
           "def scaled_dot_product_attention(query, key, value, mask=None):\n"
           "    if query.shape[-2] == 3:\n"
           "        return F.scaled_dot_product_attention(query, key, value), query\n"
           "    w = torch.softmax(query @ key.transpose(-2, -1), -1)\n"
           "    return w @ value, w\n")
    with Sandbox(write("sub.py", src), zygote=zygote, forbidden=ex.forbidden) as sb:
        kit = Harness(ex, sb)
        kit.load()
        x, bad = kit.randn(2, 2, 4), kit.randn(2, 3, 4)
        kit.run(None, [x, x, x], n_outputs=2)
        with pytest.raises(SubmissionError) as err:
            kit.run(None, [bad, bad, bad], n_outputs=2)
        assert err.value.type == "ForbiddenAPI"
        with pytest.raises(SubmissionError):
            kit.run(None, [x, x, x], n_outputs=2)
        assert sb.answered == 4


def test_the_fork_server_answers_each_thread_its_own_reply(zygote):
    """Grades in two threads of one process (the adversarial tests, a notebook's grading process) share one fork
    server's socket: each request and its reply go together, or a thread reads the other's reply (a worker reported
    as gone, a correct file graded `crash`, a thread waiting for an answer already taken)."""
    from concurrent.futures import ThreadPoolExecutor

    def ask(seed: int) -> list:
        # pids no process has: the server answers each with its own pid's code, None
        return [zygote.exit_status(4_000_000 + seed * 1000 + i, timeout=0) for i in range(150)]

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(ask, range(4)))
    assert answers == [[None] * 150] * 4
