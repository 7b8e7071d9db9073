"""The hidden suite's kept pytest session (grader/suite_session.py): a grade that reuses the session collected
by an earlier grade in the process gets the verdict a fresh session gives, and nothing of the earlier grade."""
from __future__ import annotations

import json

import pytest

from grader import runner, suite_session
from grader.catalog import load_catalog
from grader.sandbox import Limits

from tests.conftest import CORPUS


def _grade(number: int, path) -> dict:
    v = runner.grade(exercise=load_catalog().get(number), path=path, limits=Limits(time_s=30), warm=True,
                     capture_attention=True)
    doc = v.to_json()
    doc.pop("duration_s", None)
    return json.loads(json.dumps(doc, default=str))


def _fresh(key, owner, make):
    plugin = make()
    return (*suite_session.run_fresh(plugin), plugin)


def test_a_kept_session_grades_as_a_fresh_one(monkeypatch):
    ex = load_catalog().get(3)
    buggy = CORPUS / "03" / "mask_inverted.py"
    kept = [_grade(3, buggy), _grade(3, ex.solution_path), _grade(3, buggy)]
    sessions = [s for owner, s in suite_session._KEPT.values() if owner is ex]
    assert len(sessions) == 1, "one kept session for the exercise, reused by every grade"
    items = sessions[0].session.items
    assert all(item.funcargs is None and not item._report_sections for item in items), \
        "no fixture value or captured text of the last grade stays on the items"
    monkeypatch.setattr(suite_session, "run_kept", _fresh)
    fresh = _grade(3, buggy)
    assert kept[0]["passed"] is False and kept[1]["passed"] is True
    assert kept[0] == fresh == kept[2], "a failing file: the same verdict kept, fresh, and after a passing one"


def test_a_session_left_half_run_is_dropped(monkeypatch):
    ex = load_catalog().get(3)
    _grade(3, ex.solution_path)
    key = next(k for k, (owner, _) in suite_session._KEPT.items() if owner is ex)
    broken = suite_session._KEPT[key][1]

    def interrupted(self, plugin, fresh):
        raise KeyboardInterrupt

    monkeypatch.setattr(suite_session.KeptSession, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _grade(3, ex.solution_path)
    assert key not in suite_session._KEPT, "a session an exception left mid-run is never used again"
    monkeypatch.undo()
    assert _grade(3, ex.solution_path)["passed"] is True
    assert suite_session._KEPT[key][1] is not broken


def test_no_suite_fixture_asks_for_request():
    """pytest builds a new fixture definition (inspecting a signature) each time `request` is asked for, several per
    check: the suites' fixtures and checks take what they need from the harness (kit) and pytestconfig."""
    import ast
    from pathlib import Path

    for path in sorted(Path(suite_session.SUITES_DIR).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                assert "request" not in [a.arg for a in node.args.args], f"{path.name}: {node.name}"


def test_a_blocked_file_skips_every_check_but_the_policys_saying_why(tmp_path):
    ex = load_catalog().get("3")
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n" + ex.solution_path.read_text(encoding="utf-8"), encoding="utf-8")
    v = runner.grade(exercise=ex, path=bad, limits=Limits(time_s=20))
    skipped = [t for t in v.tests if t.status.value == "skipped"]
    assert skipped and all(t.message.startswith("not run: ") for t in skipped)
    assert [t.name for t in v.tests if t.status.value != "skipped"] == ["uses_only_allowed_imports_and_apis"]
