"""The learner's commands in-process (click's CliRunner): parameter types, exit codes, environment errors,
hints that escalate everywhere, progress that keeps a pass, text wrapped at word boundaries (issue 14)."""
import json
import re

import click
import pytest
from click.testing import CliRunner

from grader import workspace
from grader.catalog import load_catalog
from grader.cli import cli
from grader.params import EXERCISE, EXERCISES

CATALOG = load_catalog()
EX1, EX2 = CATALOG.get(1), CATALOG.get(2)


@pytest.fixture
def invoke(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_KIT_CACHE_DIR", str(tmp_path / "cache" / "attention-kit"))  # hint state outside a workspace
    monkeypatch.setenv("NO_COLOR", "1")

    def _invoke(*args, cwd=None, env=None):
        if cwd is not None:
            monkeypatch.chdir(cwd)
        return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)

    return _invoke


@pytest.fixture
def ws(tmp_path):
    return workspace.create(tmp_path / "ws", CATALOG)


def test_exercise_parameter_types():
    assert EXERCISE.convert("causal_attention", None, None).number == 3
    assert EXERCISE.convert("03", None, None).number == 3
    assert [e.number for e in EXERCISES.convert("1,3-5", None, None)] == [1, 3, 4, 5]
    assert [e.number for e in EXERCISES.convert("self_attention, 2", None, None)] == [1, 2]
    for bad in ("42", "5-3", ",", "1-99"):
        with pytest.raises(click.BadParameter):
            EXERCISES.convert(bad, None, None)


def test_unknown_exercise_exits_2_for_every_learner_command(invoke):
    for command in ("exercise", "hint", "solution", "reset", "watch"):
        result = invoke(command, "42")
        assert result.exit_code == 2 and "unknown exercise '42'" in result.output, command


def test_an_internal_error_exits_3(invoke, monkeypatch):
    from grader import runner

    def broken(**kwargs):
        raise runner.InternalError("the hidden suite did not run")

    monkeypatch.setattr(runner, "grade", broken)
    result = invoke("exercise", "1", EX1.solution_path)
    assert result.exit_code == 3 and "internal grader error" in result.output


def test_hints_escalate_outside_a_workspace(invoke, tmp_path):
    outside = tmp_path / "anywhere"
    outside.mkdir()
    levels = [re.search(r"Hint (\d)/3", invoke("hint", "3", cwd=outside).output).group(1) for _ in range(4)]
    assert levels == ["1", "2", "3", "3"]
    assert (tmp_path / "cache" / "attention-kit" / "hints.json").is_file()


def test_the_hint_on_screen_is_not_repeated(invoke, ws):
    untouched = invoke("exercise", "1", cwd=ws.root)
    assert untouched.exit_code == 1 and "Hint 1/3" in untouched.output
    assert "Hint 2/3" in invoke("hint", "1").output  # not hint 1 again


def test_a_read_only_workspace_shows_the_verdict_then_exits_2(invoke, ws, monkeypatch):
    def read_only(self):
        raise PermissionError(13, "Permission denied", str(self.state_path))

    monkeypatch.setattr(workspace.Workspace, "save", read_only)
    result = invoke("exercise", "1", cwd=ws.root)
    assert result.exit_code == 2
    assert "not started yet" in result.output  # the verdict was computed and is shown
    last = result.output.strip().splitlines()[-1]
    assert "your progress was not saved" in last and "Permission denied" in last
    hint = invoke("hint", "1")
    assert hint.exit_code == 2 and "Hint 1/3" in hint.output and "Permission denied" in hint.output


def test_a_pass_is_never_taken_back(invoke, ws):
    ws.record(EX1, True)
    ws.record(EX1, False)  # a failing re-grade later
    again = workspace.find(ws.root)
    assert 1 in again.passed
    assert "class SelfAttention" in invoke("solution", "1", cwd=ws.root).output
    assert "passed (failing now)" in invoke("list").output
    invoke("reset", "1", "--yes")
    assert 1 not in workspace.find(ws.root).passed  # only a reset starts afresh


def test_terminal_text_wraps_at_word_boundaries(invoke, tmp_path):
    source = EX2.solution_path.read_text(encoding="utf-8").replace(" / math.sqrt(d_k)", "")
    path = tmp_path / "no_scaling.py"
    path.write_text(source, encoding="utf-8")
    result = invoke("exercise", "2", path, env={"COLUMNS": "60"})
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 60
    words = set(re.findall(r"[A-Za-z]{4,}", " ".join(result.output.split())))
    from grader.diagnosis import texts

    for word in re.findall(r"[A-Za-z]{4,}", texts()["no_scaling"]["explanation"]):
        assert word in words, f"{word!r} was broken across lines"


def test_explainers_wrap_to_the_terminal_width():
    from rich.cells import cell_len

    from grader.explain import render_explainer

    text = render_explainer("scaling", lang="zh", fmt="term", width=50)
    assert max(cell_len(line) for line in text.splitlines()) <= 50


# -- issue 22: hint, explain and solution default to the current exercise; reset keeps a backup -------------------
EX3 = CATALOG.get(3)


def test_hint_explain_and_solution_default_to_the_exercise_being_worked_on(invoke, ws, tmp_path):
    assert ws.current(CATALOG).number == 1  # nothing graded yet: the first not passed
    ws.record(EX3, False)  # graded last, failing: that is the one being worked on
    again = workspace.find(ws.root)
    assert again.last == 3 and again.current(CATALOG).number == 3
    assert "Hint 1/3 for exercise 3 (causal_attention)" in invoke("hint", cwd=ws.root).output
    assert invoke("explain", "--no-pager").output.startswith("Exercise 3: ")
    locked = invoke("solution")
    assert locked.exit_code == 2 and "pass exercise 3 first" in locked.output
    ws.record(EX3, True)  # passed: current moves on to the first exercise not passed ...
    assert workspace.find(ws.root).current(CATALOG).number == 1
    assert "class CausalAttention" in invoke("solution").output  # ... but the solution is the one just passed
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for command in ("hint", "solution"):
        result = invoke(command, cwd=outside)
        assert result.exit_code == 2 and "which exercise?" in result.output and f"grade {command} 1" in result.output
    assert "scaling" in invoke("explain", cwd=outside).output  # outside a workspace: the topics, as before


def test_solution_prints_the_reference_without_stage_markers(invoke, ws):
    import ast

    for ex in CATALOG.exercises:
        ws.record(ex, True)
    for ex in CATALOG.exercises:
        shown = invoke("solution", ex.number, cwd=ws.root).output
        reference = ex.solution_path.read_text(encoding="utf-8")
        assert "stage:" in reference or ex.number > 9  # the markers are there to strip
        assert "stage:" not in shown and "# ;" not in shown and not re.search(r"[ \t]+$", shown, re.M), ex.number
        assert ast.dump(ast.parse(shown)) == ast.dump(ast.parse(reference)), ex.number  # the same code
        assert len(shown.splitlines()) == len(reference.splitlines())  # line numbers unchanged
    assert "att = torch.softmax(att, dim=-1)\n" in invoke("solution", "1").output  # a marker-only comment goes


def _grade_process(*args, cwd, stdin=None):
    import subprocess

    from tests.conftest import COMMAND

    return subprocess.run([*COMMAND, *map(str, args)], cwd=cwd, stdin=subprocess.DEVNULL if stdin is None else stdin,
                          capture_output=True, text=True, timeout=120)


def test_reset_without_a_terminal_refuses_unless_yes_and_keeps_a_backup(ws):
    mine = ws.file_for(EX1)
    mine.write_text(EX1.solution_path.read_text(encoding="utf-8"), encoding="utf-8")
    ws.record(EX1, True)
    refused = _grade_process("reset", "1", cwd=ws.root)  # stdin is not a terminal: a notebook cell, an IDE task
    assert refused.returncode == 2 and refused.stdout == ""
    line, = refused.stderr.splitlines()
    assert "no terminal to confirm on" in line and "grade reset 1 --yes" in line
    assert mine.read_text(encoding="utf-8") == EX1.solution_path.read_text(encoding="utf-8")  # untouched
    done = _grade_process("reset", "1", "--yes", cwd=ws.root)
    assert done.returncode == 0, done.stderr
    backups = list((ws.root / workspace.BACKUPS).glob("01_self_attention.*.py"))
    assert len(backups) == 1 and str(backups[0]) in done.stdout
    assert backups[0].read_text(encoding="utf-8") == EX1.solution_path.read_text(encoding="utf-8")
    assert mine.read_bytes() == EX1.skeleton_path.read_bytes()
    again = _grade_process("reset", "1", "--yes", cwd=ws.root)  # the skeleton itself: nothing to keep
    assert again.returncode == 0 and "Your version" not in again.stdout
    assert len(list((ws.root / workspace.BACKUPS).iterdir())) == 1


def test_reset_in_a_terminal_asks_then_keeps_a_backup(ws):
    from tests.conftest import COMMAND
    from tests.test_watch import Terminal

    ws.file_for(EX1).write_text("# my attempt\n", encoding="utf-8")
    term = Terminal([*COMMAND, "reset", "1"], cwd=ws.root)
    try:
        term.wait_for("Overwrite", timeout=60)
        term.wait_for("backed up first)? [y/N]")
        term.press("y\r")
        term.wait_for("Your version is in")
        assert term.exit_code(20) == 0
    finally:
        term.close()
    backup, = (ws.root / workspace.BACKUPS).iterdir()
    assert backup.read_text(encoding="utf-8") == "# my attempt\n"


def test_a_grade_is_remembered_with_its_hint_state(ws):
    """workspace.remember, after `grade exercise` and `grade all`: the outcome, hint 1 (the not-started screen
    shows it) and the named mistake `grade hint` answers first; a pass clears the mistake."""
    from types import SimpleNamespace as NS

    workspace.remember(ws, EX1, NS(passed=False, state="not_started", diagnoses=[]))
    assert workspace.Hints(ws).seen(EX1) == 1 and EX1.number not in ws.passed
    workspace.remember(ws, EX2, NS(passed=False, state="graded", diagnoses=[NS(id="no_scaling")]))
    assert workspace.Hints(workspace.find(ws.root)).pending(EX2) == "no_scaling"
    workspace.remember(ws, EX2, NS(passed=True, state="graded", diagnoses=[]))
    again = workspace.find(ws.root)
    assert EX2.number in again.passed and workspace.Hints(again).pending(EX2) is None


def test_grade_all_lists_each_exercise_then_how_many_passed():
    from types import SimpleNamespace as NS

    from grader.render import all_lines

    passed = NS(passed=True, state="graded", diagnoses=[], exercise=1, slug="self_attention", score=10, max_score=10)
    wrong = NS(passed=False, state="graded", diagnoses=[NS(title="The scores are not scaled")], exercise=2,
               slug="scaled_dot_product", score=4, max_score=12)
    assert all_lines([passed, wrong]) == [
        "[green]✓[/] 1 self_attention          10/10 ",
        "[red]✗[/] 2 scaled_dot_product       4/12   The scores are not scaled",
        "\n1 of 2 exercises passed."]
