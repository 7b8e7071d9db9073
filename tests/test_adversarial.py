"""The trust boundary, attacked: every file in tests/adversarial/ graded, as the grader runs it.

Each attack's first line says what it attacks and what must happen (`# attack: ... -> fail (reason)`
or `-> pass`, for correct code that only misbehaves harmlessly). An attack the static policy
refuses says so (`-> fail (unsafe_code)`) and carries a second line, `# runtime: ...`: what must
happen when it runs anyway, graded with `--policy adversarial/runtime_only.toml` (the policy's
unsafe-code rules off), so the runtime isolation is proven on its own too. Each attack file's header
comment says which invariant it proves.

Most attacks are graded in this process (runner.grade, workers forked from one warm server, as batch
grading does); the few in CLI_JOBS, which attack the grader's own stdout or memory or are refused end to
end, through the real CLI two at a time meanwhile. For every grade: the verdict and its reason, exit code
1 (0 for a pass), one JSON line, bounded wall time (and, through the CLI, the grader's memory), no
escape sequences or control characters in what the verdict shows, no process left running (nothing
whose command line or environment names the attack's private directory), no marker file written in
the repo, the installed grader package, torch's package, /tmp or beside the submission, the files
beside the submission intact, and no sandbox directory left behind. A test selection runs only the
attacks it selects.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.catalog import load_catalog
from grader.policy import check
from grader.runner import grade
from grader.sandbox import Limits
from tests.conftest import COMMAND, ROOT, gradebook_doc, run_grade, work_unit

ADVERSARIAL = ROOT / "tests" / "adversarial"
RUNTIME_ONLY = ADVERSARIAL / "runtime_only.toml"
HEADER = re.compile(r"# attack: (?P<what>.+) -> (?P<outcome>pass|fail \((?P<reason>\w+)\))\s*$")
RUNTIME = re.compile(r"# runtime: (?P<outcome>pass|fail \((?P<reason>\w+)\))\s*$")
HANG_TIMEOUT = 2  # --timeout for attacks that must end as a timeout (start-up is not counted)
BATCH_TIMEOUT = 5  # for every submission of the batch test: correct ones must finish on a loaded machine
OTHER_TIMEOUT = 40  # for the rest: a safety net, they end long before
SLACK = 25  # seconds on top of --timeout: boot, the suite, two grades sharing two cores
MAX_RSS_KB = 3 << 20  # the grader (~0.5 GB) and its worker (address space capped at 2 GB)
JOBS = 2
SYSTEM_TMP = tempfile.gettempdir()
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # newlines and tabs are fine


@dataclass(frozen=True)
class Attack:
    path: Path
    exercise: int
    what: str
    outcome: str  # "pass" | "fail"
    reason: str | None
    runtime_outcome: str | None = None  # for attacks the policy refuses: without the policy
    runtime_reason: str | None = None

    @property
    def name(self) -> str:
        return self.path.stem


def parse(path: Path) -> Attack:
    lines = path.read_text(encoding="utf-8").splitlines()
    head = HEADER.match(lines[0])
    assert head, f"{path.name}: first line must be '# attack: WHAT -> fail (REASON)' or '-> pass'"
    runtime = RUNTIME.match(lines[1]) if len(lines) > 1 else None
    number = int(re.match(r"e(\d+)_", path.name)[1])
    return Attack(path, number, head["what"], head["outcome"].split()[0], head["reason"],
                  runtime["outcome"].split()[0] if runtime else None, runtime["reason"] if runtime else None)


ATTACKS = [parse(p) for p in sorted(ADVERSARIAL.glob("e*.py"))]
# What is graded through the CLI: each attack as the policy sees it, or (when the policy refuses it)
# without the policy; plus a few refused ones with the policy on, end to end.
POLICY_END_TO_END = ("e1_os_exit_at_import", "e2_kill_the_grader", "e3_read_reference_solution")
JOBS_LIST = [(a.name, "runtime" if a.runtime_outcome else "default") for a in ATTACKS] + \
            [(name, "default") for name in POLICY_END_TO_END]
# Graded through the real CLI (exit code, one JSON line on the process's stdout, the grader's peak memory):
# one refusal end to end and the attacks on the grader's own stdout and memory; the rest in-process from one
# warm fork server, which yields the same verdict document.
CLI_JOBS = {("e2_kill_the_grader", "default"), ("e1_fake_verdict_stdout", "default"), ("e1_huge_output", "default"),
            ("e2_memory_hog", "default")}


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    elapsed: float
    timeout: float
    max_rss_kb: int
    leftovers: list[str]
    written: list[str]
    damaged: list[str]
    sandboxes_left: list[str]
    doc: dict | None = None


def _expected(attack: Attack, mode: str) -> tuple[str, str | None]:
    """(outcome, reason) the attack must end with, graded in mode "default" or "runtime"."""
    if mode == "runtime":
        return attack.runtime_outcome, attack.runtime_reason
    return attack.outcome, attack.reason


def _installed_dirs() -> tuple[Path, Path]:
    """The grader package the CLI imports (installed, or this checkout when editable) and torch's."""
    with tempfile.TemporaryDirectory() as cwd:
        out = subprocess.run([sys.executable, "-I", "-c", "import os, grader, torch; "
                              "print(os.path.dirname(grader.__file__)); print(os.path.dirname(torch.__file__))"],
                             cwd=cwd, capture_output=True, text=True, check=True).stdout.split("\n")
    return Path(out[0]), Path(out[1])


def _secrets(grader_dir: Path) -> list[Path]:
    """Files a worker must not read: reference solutions and hidden suites, checkout and installed."""
    found = []
    for base in (ROOT, grader_dir / "_kit"):
        found += sorted((base / "solutions").glob("0[1-5]_*.py"))
    for package in {ROOT / "grader", grader_dir}:
        found += sorted((package / "suites").glob("*.py"))
    return found


def _mentions(needle: bytes) -> list[str]:
    """Live (non-zombie) processes whose command line or environment contains needle."""
    hits = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            if state in (b"Z", b"X"):
                continue
            blob = b""
            for part in ("cmdline", "environ"):
                try:
                    with open(f"/proc/{entry.name}/{part}", "rb") as f:
                        blob += f.read()
                except PermissionError:
                    pass
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if needle in blob:
            shown = blob[:160].replace(b"\0", b" ").decode(errors="replace")
            hits.append(f"pid {entry.name}: {shown}")
    return hits


def _shm_segments() -> int:
    try:
        with open("/proc/sysvipc/shm", "rb") as f:
            return len(f.readlines()) - 1
    except FileNotFoundError:
        return 0


def _leftovers(needle: bytes) -> list[str]:
    """Processes still mentioning needle after a grade ended; a SIGKILLed process may take a moment to go."""
    hits = _mentions(needle)
    for _ in range(20):
        if not hits:
            break
        time.sleep(0.1)
        hits = _mentions(needle)
    for hit in hits:  # leave nothing behind on this machine either
        try:
            os.kill(int(hit.split()[1].rstrip(":")), 9)
        except (OSError, ValueError):
            pass
    return hits


def _cli(submission: Path, attack: Attack, mode: str, timeout: float, work: Path, tmpdir: Path):
    """Grade through the real CLI: (exit code, stdout, stderr, peak RSS of the grader in KB)."""
    args = ["exercise", attack.exercise, submission, "--json", "--timeout", timeout]
    if mode == "runtime":
        args += ["--policy", RUNTIME_ONLY]
    env = {**os.environ, "TMPDIR": str(tmpdir)}  # the sandbox directory, and so the worker's env, names work
    with tempfile.TemporaryFile(dir=work) as out, tempfile.TemporaryFile(dir=work) as err:
        # a session of its own: should an attack ever reach the grader's process group, it ends that grade only
        proc = subprocess.Popen([*COMMAND, *map(str, args)], stdout=out, stderr=err, env=env, cwd=work,
                                start_new_session=True)
        guard = threading.Timer(timeout + 120, proc.kill)
        guard.start()
        _, status, usage = os.wait4(proc.pid, 0)
        guard.cancel()
        out.seek(0)
        err.seek(0)
        return (os.waitstatus_to_exitcode(status), out.read().decode(errors="replace"),
                err.read().decode(errors="replace"), usage.ru_maxrss)


def _in_process(submission: Path, attack: Attack, mode: str, timeout: float, tmpdir: Path):
    """Grade in this process, forking the worker from the warm server: (exit code, one JSON line, "", 0)."""
    previous = tempfile.tempdir
    tempfile.tempdir = str(tmpdir)  # the sandbox directory, and so the worker's env, names work
    try:
        verdict = grade(exercise=load_catalog().get(attack.exercise), path=submission, limits=Limits(time_s=timeout),
                        warm=True, policy_file=RUNTIME_ONLY if mode == "runtime" else None)
    finally:
        tempfile.tempdir = previous
    return 0 if verdict.passed else 1, json.dumps(verdict.to_json(), ensure_ascii=False) + "\n", "", 0


def _run(attack: Attack, mode: str, base: Path, grader_dir: Path, torch_dir: Path, cli: bool) -> Outcome:
    work = base / f"{attack.name}-{mode}"
    tmpdir = work / "tmp"
    tmpdir.mkdir(parents=True)
    marker = f"attention-kit-adversarial-{uuid.uuid4().hex[:12]}"
    targets = [ROOT / marker, ROOT / "solutions" / marker, ROOT / "grader" / marker, grader_dir / marker,
               grader_dir / f"{marker}.py", torch_dir / f"{marker}.py", Path(SYSTEM_TMP) / marker,
               work / marker, Path("/") / marker]
    source = attack.path.read_text(encoding="utf-8")
    source = source.replace("@TARGETS@", "|".join(map(str, targets)))
    source = source.replace("@SECRETS@", "|".join(map(str, _secrets(grader_dir)))).replace("@MARKER@", marker)
    submission = work / f"{attack.name}.py"
    submission.write_text(source, encoding="utf-8")
    sentinel = work / "sentinel.txt"
    sentinel.write_text("the grader's files beside the submission")

    timeout = HANG_TIMEOUT if _expected(attack, mode)[1] == "timeout" else OTHER_TIMEOUT
    segments = _shm_segments()
    start = time.monotonic()
    if cli:
        code, stdout, stderr, rss = _cli(submission, attack, mode, timeout, work, tmpdir)
    else:
        code, stdout, stderr, rss = _in_process(submission, attack, mode, timeout, tmpdir)
    elapsed = time.monotonic() - start
    written = [str(t) for t in targets if t.exists()]
    if _shm_segments() > segments:  # SysV shared memory outlives its creator and escapes its memory limit
        written.append(f"{_shm_segments() - segments} SysV shared memory segment(s) left (/proc/sysvipc/shm)")
    for path in written:  # clean up before failing, so a broken sandbox does not pollute the machine
        Path(path).unlink(missing_ok=True)
    damaged = [str(p) for p in (submission, sentinel) if not p.exists()]
    if submission.exists() and submission.read_text(encoding="utf-8") != source:
        damaged.append(f"{submission} (changed)")
    outcome = Outcome(code, stdout, stderr, elapsed, timeout, rss, _leftovers(str(work).encode()), written, damaged,
                      sorted(p.name for p in tmpdir.iterdir()) if tmpdir.exists() else [])
    try:
        outcome.doc = json.loads(stdout)
    except json.JSONDecodeError:
        pass
    shutil.rmtree(work, ignore_errors=True)
    return outcome


@pytest.fixture(scope="module")
def outcomes(request, tmp_path_factory):
    """job -> Outcome, each selected attack graded once: on first use, the selected jobs of the asking job's work
    unit (tests/conftest.py: the attacks are two units, which xdist may run side by side), those in CLI_JOBS
    through the CLI two at a time in the background, the rest meanwhile in this process from one warm fork server."""
    units: dict[str, list[tuple[str, str]]] = {}
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if item.module is sys.modules[__name__] and spec is not None and "job" in spec.params:
            units.setdefault(work_unit(item.nodeid), []).append(spec.params["job"])
    by_name = {a.name: a for a in ATTACKS}
    base = tmp_path_factory.mktemp("adversarial")
    grader_dir, torch_dir = _installed_dirs()
    graded: dict[tuple[str, str], Outcome] = {}

    def _grade(jobs: list[tuple[str, str]]) -> None:
        with ThreadPoolExecutor(JOBS) as pool:
            futures = {job: pool.submit(_run, by_name[job[0]], job[1], base, grader_dir, torch_dir, True)
                       for job in jobs if job in CLI_JOBS}
            graded.update({job: _run(by_name[job[0]], job[1], base, grader_dir, torch_dir, False)
                           for job in jobs if job not in CLI_JOBS})
            graded.update({job: f.result() for job, f in futures.items()})

    def outcome(job: tuple[str, str], nodeid: str) -> Outcome:
        if job not in graded:
            _grade(units[work_unit(nodeid)])
        return graded[job]

    return outcome


def test_corpus_covers_the_attacks():
    assert len(ATTACKS) >= 24
    # test_cli leaves to these two the one JSON line on the real process's stdout beside a flood and a fake verdict
    assert {("e1_huge_output", "default"), ("e1_fake_verdict_stdout", "default")} <= CLI_JOBS
    assert {a.exercise for a in ATTACKS} >= {1, 2, 3, 4, 5}
    for a in ATTACKS:
        assert a.outcome == "pass" or a.reason, a.name
        if a.reason == "unsafe_code":
            assert a.runtime_outcome, f"{a.name}: an attack the policy refuses says what happens without it"
    themes = " ".join(a.what.lower() for a in ATTACKS)
    for theme in ("os._exit", "systemexit", "keyboardinterrupt", "infinite", "torch call", "sigterm", "memory",
                  "fork", "socket", "reference solution", "hidden suite", "allclose", "__torch_function__", "__eq__",
                  "stdout", "stderr", "floods", "parent", "torch.os", "__subclasses__", "delete",
                  "installed package", "tofile", "shell", "attrgetter", "get_overridable_functions", "deeply nested",
                  "nested 200 000 deep", "ansi", "strips", "forking", "cpu hog", "copy of the kit",
                  "f_setown", "prlimit64", "shared memory", "inotify", "mode 000", "fork server"):
        assert theme in themes, f"no attack on {theme!r}"


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a.runtime_outcome], ids=lambda a: a.name)
def test_static_policy_refuses(attack):
    """Attacks marked unsafe_code are refused before they run (checked here in-process, quickly)."""
    source = attack.path.read_text(encoding="utf-8")
    violations = check(source, forbidden=load_catalog().get(attack.exercise).forbidden)
    assert any(v.rule == "unsafe_code" for v in violations), f"{attack.name}: the policy let it through"


@pytest.mark.parametrize("job", JOBS_LIST, ids=lambda job: f"{job[0]}@{job[1]}")
def test_attack(job, outcomes, request):
    name, mode = job
    attack = next(a for a in ATTACKS if a.name == name)
    got = outcomes(job, request.node.nodeid)
    want, reason = _expected(attack, mode)
    context = f"{name} ({mode}): exit {got.code} in {got.elapsed:.1f} s\nstdout: {got.stdout[:1500]}\nstderr: {got.stderr[-1500:]}"

    assert got.stdout.count("\n") == 1 and got.doc is not None, f"--json must print one JSON line: {context}"
    doc = got.doc
    assert got.code == (0 if want == "pass" else 1), context
    assert doc["passed"] is (want == "pass"), context
    if want == "fail":
        failing = [t for t in doc["tests"] if t["status"] not in ("passed", "skipped")]
        reasons = {d["id"] for d in doc["diagnoses"]} | {t["status"] for t in failing}
        assert failing and (reason in reasons or any(reason in t["message"] for t in failing)), \
            f"expected the reason {reason!r}: {context}"
    if reason == "unsafe_code":
        assert all(t["status"] == "skipped" for t in doc["tests"] if t["category"] != "policy"), context
    assert '"passed": true' not in got.stderr and "pwned" not in got.stderr, f"submission output leaked: {context}"
    assert got.elapsed < got.timeout + SLACK, f"took {got.elapsed:.1f} s: {context}"
    assert got.max_rss_kb < MAX_RSS_KB, f"peak memory {got.max_rss_kb >> 10} MB: {context}"  # 0 in-process
    assert not got.leftovers, f"still running after the grade: {got.leftovers}"
    assert not got.written, f"files written outside the sandbox: {got.written}"
    assert not got.damaged, f"files beside the submission removed or changed: {got.damaged}"
    assert not got.sandboxes_left, f"sandbox directories left behind: {got.sandboxes_left}"
    shown = "\n".join([doc.get("output") or "", *[t["message"] for t in doc["tests"]],
                       *[str(d.get(k, "")) for d in doc["diagnoses"] for k in ("explanation", "evidence")]])
    assert not CONTROL.search(shown), f"escape sequences or control characters reach the verdict: {context}"
    if name == "e1_huge_output":
        assert len(doc.get("output", "")) < 10_000 and "more bytes of output not shown" in doc["output"]


BATCH_EVE = {
    # both attacks pass the static policy: patch torch for whoever would run next and flood the output;
    # hang until the wall clock ends
    "01_self_attention.py": (ADVERSARIAL / "e1_huge_output.py").read_text().replace(
        "print(\"noise \" * 200_000)",
        "print(\"noise \" * 200_000)\ntorch.softmax = lambda x, dim=-1: x\ntorch.nn.Linear.forward = lambda self, x: x * 0\n"
        "torch.allclose = lambda *a, **k: True"),
    "02_scaled_dot_product.py": (ADVERSARIAL / "e2_infinite_loop.py").read_text(),
}


@pytest.mark.skipif(not os.environ.get("ATTENTION_KIT_TIER_TESTS"),
                    reason="a cohort graded around an attacker (~18 s): .ci/run runs it in its gated session and in "
                           "every weaker tier (ATTENTION_KIT_TIER_TESTS=1)")
def test_batch_keeps_going_around_an_attacker(tmp_path):
    """One hostile submission among correct ones: every other submission gets its correct result."""
    catalog = load_catalog()
    subs = tmp_path / "subs"
    for name in ("alice", "zoe"):
        (subs / name).mkdir(parents=True)
        for number in (1, 2):
            ex = catalog.get(number)
            (subs / name / ex.file).write_text(ex.solution_path.read_text())
    (subs / "eve").mkdir()
    for file, text in BATCH_EVE.items():
        (subs / "eve" / file).write_text(text)
    start = time.monotonic()
    proc = run_grade("batch", subs, "--jobs", "2", "-o", tmp_path / "gradebook.json", "--exercises", "1,2",
                     "--timeout", str(BATCH_TIMEOUT), "-q", timeout=400, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert time.monotonic() - start < 120, proc.stderr
    doc = gradebook_doc(tmp_path / "gradebook.json")
    rows = {r["submission"]: r for r in doc["rows"]}
    for name in ("alice", "zoe"):
        assert [e["status"] for e in rows[name]["exercises"]] == ["passed"] * 2, (name, json.dumps(rows[name])[:3000], proc.stderr)
        assert rows[name]["total"] == rows[name]["max_total"] > 0
    assert all(e["status"] != "passed" for e in rows["eve"]["exercises"]), rows["eve"]
    assert not _leftovers(str(tmp_path).encode())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("attention-kit-")]
