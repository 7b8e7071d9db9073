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


def pytest_terminal_summary(terminalreporter):
    """Print what tests recorded as a "summary" property (corpus accuracy per part), also from xdist workers."""
    for report in [r for key in ("passed", "failed") for r in terminalreporter.stats.get(key, [])]:
        for name, value in getattr(report, "user_properties", ()):
            if name == "summary":
                terminalreporter.write_line(str(value))
