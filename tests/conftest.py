"""Helpers for the kit's own tests: run the real CLI in a subprocess, find kit files."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# hypothesis keeps a cache (.hypothesis/constants) in the working directory even with database=None: a folder of
# this process's own instead, removed at exit, so a test run writes nothing into the user's checkout
if "HYPOTHESIS_STORAGE_DIRECTORY" not in os.environ:
    import atexit
    import shutil

    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = _hypothesis = tempfile.mkdtemp(prefix="attention-kit-hypothesis-")
    atexit.register(shutil.rmtree, _hypothesis, ignore_errors=True)
# A learner's grades are recorded in their data directory (grader/history.py); the kit's tests keep theirs apart.
os.environ.setdefault("ATTENTION_KIT_DATA_DIR", tempfile.mkdtemp(prefix="attention-kit-data-"))
# and its cache (hint levels outside a workspace, the explainers' numbers): one per test run, shared by its processes
os.environ.setdefault("ATTENTION_KIT_CACHE_DIR", tempfile.mkdtemp(prefix="attention-kit-cache-"))
CORPUS = ROOT / "tests" / "corpus"


GRADE = Path(sys.executable).with_name("grade")
# The installed console script, as a user runs it (and, unlike `python -m`, it never imports from the cwd).
COMMAND = [str(GRADE)] if GRADE.is_file() else [sys.executable, "-m", "grader"]


def run_grade(*args, cwd=None, timeout=120, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def grade_here(*args, cwd=None, env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI run in this process, as run_grade runs it in a new one: the same exit code and output, but
    torch and the grader are already imported and grades fork their workers from this process's warm
    server. For what a command does; what only a process shows (its exit, its file descriptors) stays
    with run_grade. env: variables to set (None removes one) for the duration."""
    from click.testing import CliRunner

    from grader.cli import run

    before, environment = os.getcwd(), dict(os.environ)
    with CliRunner().isolation(env=env) as (out, err, _):
        os.chdir(cwd or before)
        try:
            code = run([str(a) for a in args])
        finally:
            os.chdir(before)
            os.environ.clear()  # --pack sets the process's default pack: it must not outlive the command
            os.environ.update(environment)
    return subprocess.CompletedProcess(args, code, out.getvalue().decode(), err.getvalue().decode())


def grade_json(*args, cwd=None, timeout=120, here=False) -> tuple[int, dict]:
    proc = grade_here(*args, "--json", cwd=cwd) if here else run_grade(*args, "--json", cwd=cwd, timeout=timeout)
    assert proc.stdout.count("\n") == 1, f"--json must print exactly one line, got: {proc.stdout!r} {proc.stderr!r}"
    doc = json.loads(proc.stdout)
    if args and args[0] == "exercise":  # every verdict document a test reads has the published shape
        from grader.schema import read_verdict

        read_verdict(doc)
    return proc.returncode, doc


def gradebook_doc(source: str | Path) -> dict:
    """A JSON gradebook (its text, or the file) as a dict, checked against the published shape
    (docs/schemas/gradebook.schema.json, from grader/instructor/gradebook.py): every gradebook a test reads."""
    from grader.instructor.gradebook import read_gradebook

    text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    doc = json.loads(text)
    read_gradebook(doc, source if isinstance(source, Path) else "gradebook")
    return doc


@pytest.fixture
def write(tmp_path):
    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return _write


# `python -m pytest -m fast`: the edit loop's subset (well under a minute on two cores): modules that start no
# worker, or a handful; every other module runs in the full suite only.
FAST_MODULES = ("test_architecture", "test_schema", "test_textsafe", "test_variants", "test_localize", "test_localize_rules_ambiguous",
                "test_localize_rules_dropout", "test_localize_rules_layout", "test_localize_rules_loop", "test_localize_rules_missing",
                "test_localize_rules_paths", "test_localize_rules_split", "test_localize_rules_raised", "test_localize_rules_tensors",
                "test_localize_rules_values", "test_localize_rules_sizes", "test_localize_rules_fill", "test_localize_rules_discarded", "test_localize_gate", "test_localize_rules_constants", "test_localize_source", "test_layers",
                "test_suite_names", "test_hint_follows_diagnosis", "test_pack", "test_learner_cli", "test_one_text",
                "test_policy", "test_language_subset", "test_similarity", "test_gradebook", "test_interview", "test_numerics",
                "test_localize_abstain", "test_golden_json", "test_report", "test_learner_report", "test_feedback_views",
                "test_device", "test_watch_screen", "test_fail_closed")


# The longest work units first, so that two workers finish together (xdist hands units out in collection order).
LONGEST_FIRST = ("test_install", "test_isolation", "test_batch", "test_adversarial", "test_explain", "test_sandbox", "test_cli",
                 "test_classroom", "test_exercises", "test_gradescope", "test_pack_contract")


def gated(item) -> bool:
    """A slow test that runs only where its ATTENTION_KIT_* variable is set: every such skip says so in its reason."""
    return any("ATTENTION_KIT_" in str(mark.kwargs.get("reason", "")) for mark in item.iter_markers("skipif"))


def pytest_collection_modifyitems(config, items):
    """The fast subset's marker; the gated marker (.ci/run runs the slow tests with -m gated, in one session, not
    the default ones again); the longest units first; tests marked cuda run on a real GPU wherever PyTorch sees
    one, and are skipped, saying why, elsewhere."""
    for item in items:
        if item.path.stem in FAST_MODULES:
            item.add_marker(pytest.mark.fast)
        if gated(item):
            item.add_marker(pytest.mark.gated)
    rank = {stem: i for i, stem in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.stem, len(rank)))  # stable: file order within a module
    cuda = [item for item in items if item.get_closest_marker("cuda")]
    if cuda:
        import torch

        if not torch.cuda.is_available():
            skip = pytest.mark.skip(reason="needs a CUDA GPU: torch.cuda.is_available() is False on this machine")
            for item in cuda:
                item.add_marker(skip)


CORPUS_TESTS = ("test_diagnosis", "test_unseen_corpus")
CORPUS_ID = re.compile(r"::test_\w+\[(\d\d)/")
ATTACK_ID = re.compile(r"::test_attack\[(.+)\]$")


def work_unit(nodeid: str) -> str:
    """What one xdist worker runs as a whole: a test file (its module fixtures and warm fork server are
    built once), except the corpus, whose files are independent: one unit per exercise; and the attacks, graded
    in two halves (test_adversarial's outcomes grade each half once, where it runs)."""
    path = nodeid.split("::", 1)[0]
    stem = Path(path).stem
    number = CORPUS_ID.search(nodeid) if stem in CORPUS_TESTS else None
    if number:
        return f"{stem}-{number[1]}"
    attack = ATTACK_ID.search(nodeid) if stem == "test_adversarial" else None
    if attack:
        return f"{stem}-{zlib.crc32(attack[1].encode()) % 2}"
    return stem


@pytest.hookimpl(optionalhook=True)  # the kit's tests also run without xdist (-p no:xdist)
def pytest_xdist_make_scheduler(config, log):
    """xdist's own loadgroup reads groups from rewritten node ids, which pytest 9 no longer allows: the
    units are given here instead, by name."""
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    # xdist otherwise reorders the units by their number of tests, which put the costliest ones (few tests, each
    # starting workers) last and left one core idle at the end: the units go out in LONGEST_FIRST's order
    config.option.loadscopereorder = False
    return ByWorkUnit(config, log)




def pytest_terminal_summary(terminalreporter):
    """Diagnosis accuracy per corpus part and how often its reported line is a bug line, a wrong line or none, from
    what the corpus tests recorded (on any xdist worker)."""
    parts: dict[str, list[str]] = {}
    lines: dict[str, list[str]] = {}
    for report in [r for key in ("passed", "failed") for r in terminalreporter.stats.get(key, [])]:
        for name, value in getattr(report, "user_properties", ()):
            if name == "corpus":
                parts.setdefault(value[0], []).append(value[1])
            elif name == "line" and value[1] is not None:
                lines.setdefault(value[0], []).append(value[1])
    from tests.corpus_parts import PARTS

    for part in PARTS:
        results = parts.get(part)
        if not results:
            continue
        buggy = [r for r in results if r == "hit" or r.startswith("miss")]
        correct = [r for r in results if r == "pass" or r.startswith("rejected")]
        hits, passing = buggy.count("hit"), correct.count("pass")
        terminalreporter.write_line(f"diagnosis top-1 ({part}): {hits}/{len(buggy)} = {hits / max(1, len(buggy)):.1%}; "
                                    f"correct files passing {passing}/{len(correct)}")
        if lines.get(part):
            n, count = len(lines[part]), {k: lines[part].count(k) for k in ("right", "wrong", "none")}
            terminalreporter.write_line(f"  the reported line ({n} files with bug lines): " + ", ".join(
                f"{k} {count[k]} = {count[k] / n:.0%}" for k in count))
        for r in sorted(r for r in results if r not in ("hit", "pass")):
            terminalreporter.write_line(f"  {r}")
