"""Helpers for the kit's own tests: run the real CLI in a subprocess, find kit files."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"


GRADE = Path(sys.executable).with_name("grade")
# The installed console script, as a user runs it (and, unlike `python -m`, it never imports from the cwd).
COMMAND = [str(GRADE)] if GRADE.is_file() else [sys.executable, "-m", "grader"]


def run_grade(*args, cwd=None, timeout=120, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def grade_json(*args, cwd=None, timeout=120) -> tuple[int, dict]:
    proc = run_grade(*args, "--json", cwd=cwd, timeout=timeout)
    assert proc.stdout.count("\n") == 1, f"--json must print exactly one line, got: {proc.stdout!r} {proc.stderr!r}"
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture
def write(tmp_path):
    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return _write


def pytest_collection_modifyitems(config, items):
    """With xdist's loadgroup: a test file's tests stay on one worker (its fixtures and warm fork server),
    except the corpus, whose files are independent: grouped by exercise, they spread over both cores."""
    for item in items:
        path = Path(str(item.fspath))
        corpus = item.callspec.params.get("path") if path.stem in CORPUS_TESTS and hasattr(item, "callspec") else None
        group = f"{path.stem}-{corpus.relative_to(CORPUS).parts[0]}" if isinstance(corpus, Path) else path.stem
        item.add_marker(pytest.mark.xdist_group(group))


CORPUS_TESTS = ("test_diagnosis", "test_unseen_corpus")


def pytest_terminal_summary(terminalreporter):
    """Diagnosis accuracy per corpus part, from what the corpus tests recorded (on any xdist worker)."""
    parts: dict[str, list[str]] = {}
    for report in [r for key in ("passed", "failed") for r in terminalreporter.stats.get(key, [])]:
        for name, value in getattr(report, "user_properties", ()):
            if name == "corpus":
                parts.setdefault(value[0], []).append(value[1])
    for part in ("dev", "heldout", "realworld"):
        results = parts.get(part)
        if not results:
            continue
        buggy = [r for r in results if r == "hit" or r.startswith("miss")]
        correct = [r for r in results if r == "pass" or r.startswith("rejected")]
        hits, passing = buggy.count("hit"), correct.count("pass")
        terminalreporter.write_line(f"diagnosis top-1 ({part}): {hits}/{len(buggy)} = {hits / max(1, len(buggy)):.1%}; "
                                    f"correct files passing {passing}/{len(correct)}")
        for r in sorted(r for r in results if r not in ("hit", "pass")):
            terminalreporter.write_line(f"  {r}")
