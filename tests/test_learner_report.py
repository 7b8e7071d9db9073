"""The learner's report for one exercise (`grade exercise N --html`, the notebook's `%%grade`) and
`grade solution N --diff`: rendering, escaping, the marked line, hints on request. Nothing here grades;
tests/test_notebook.py grades in a real kernel and through the CLI."""
import os
import pty
import re
import select
import subprocess

import pytest

from grader.catalog import load_catalog
from grader.learner_report import Guidance, learner_view, render_fragment, render_page, render_text
from tests.conftest import COMMAND, grade_here

HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>\x1b[2J\x07"
SOURCE = """import torch


class CausalAttention(torch.nn.Module):
    def forward(self, x):
        scores = x @ x.transpose(1, 2)
        scores = scores.masked_fill(self.mask == 0, -torch.inf)  # <b>wrong</b> & so on
        return torch.softmax(scores, dim=-1) @ x
"""
ATTENTION = {"blocked": [[False, True], [False, False]], "queries": ["q0", "q1"], "keys": ["k0", "k1"],
             "submission": [[[0.5, 0.5], [0.4, 0.6]]], "reference": [[[1.0, 0.0], [0.4, 0.6]]]}


def verdict(state="failed", passed=False):
    tests = [{"name": "future_keys_get_zero_weight", "category": "masking", "status": "passed" if passed else "failed",
              "message": "" if passed else f"query 0 puts weight 0.5 on future key 1 {HOSTILE}", "line": None,
              "code": "future_token_leak"},
             {"name": "api", "category": "api", "status": "passed", "message": "", "line": None, "code": None}]
    diagnoses = [] if passed else [{"id": "mask_inverted", "title": "The mask is inverted", "explanation": "It hides the past.",
                                    "hint": "Check which entries are True.", "evidence": [f"equals the inverted mask {HOSTILE}"]}]
    return {"passed": passed, "state": state, "score": 2 if passed else 1, "max_score": 2, "tests": tests,
            "diagnoses": diagnoses, "duration_s": 1.5, "output": f"printed {HOSTILE}", "notes": [],
            "localization": None if passed else {"line": 7, "stage": "masked_scores", "matched_through": "scores",
                                                 "evidence": "the tensor at line 7 is the first that differs"}}


def view(v=None, **guide):
    return learner_view(load_catalog().get(3), v or verdict(), ATTENTION, SOURCE, Guidance(where="this cell", **guide))


def test_page_names_the_mistake_marks_the_line_and_escapes_what_the_code_controls():
    page = render_page(view())
    assert "mask_inverted" in page and "The mask is inverted" in page and "Hint:" in page
    assert re.findall(r'<tr class="ak-mark"><td class="ak-ln">(\d+)</td>', page) == ["7"]
    assert "&lt;b&gt;wrong&lt;/b&gt; &amp; so on" in page
    assert "&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;" in page
    assert "<img" not in page and "<script" not in page and "\x1b" not in page and "\x07" not in page
    assert page.count("<svg") == 2 and "<link" not in page and "http://" not in page.replace("http://www.w3.org", "")


def test_the_notebook_fragment_keeps_its_style_to_itself():
    fragment = render_fragment(view())
    assert fragment.lstrip().startswith('<div class="ak-verdict ak-failed"') and "<html" not in fragment
    css = re.search(r"<style>(.*?)</style>", fragment, re.S)[1]
    selectors = [s.strip() for rule in re.findall(r"([^{}]+)\{", css) for s in rule.split(",")]
    assert selectors and all(s.startswith(".ak-verdict") for s in selectors), selectors


def test_hints_only_on_request_and_the_offer_otherwise():
    quiet = render_fragment(view(show_hints=False, offer="Stuck? Run the cell as %%grade 3 --hint for a hint."))
    assert "Check which entries are True" not in quiet and "%%grade 3 --hint" in quiet
    asked = render_fragment(view(show_hints=True))
    assert "Check which entries are True" in asked


def test_passed_and_not_started_read_as_such():
    passed = render_fragment(view(verdict(state="passed", passed=True), next_steps=["Next: exercise 4"]))
    assert 'data-status="passed"' in passed and "<svg" not in passed and "Next: exercise 4" in passed
    assert 'class="ak-mark"' not in passed and "<details>" in passed  # the code folded, nothing marked
    fresh = render_fragment(view(verdict(state="not_started"), hint="Hint 1/4: start here"))
    assert 'data-status="not_started"' in fresh and "Hint 1/4: start here" in fresh and "mask_inverted" not in fresh


def test_plain_text_fallback_has_the_mistake_the_line_and_unicode_heat_maps():
    text = render_text(view(), ATTENTION)
    assert "mask_inverted" in text and "line 7" in text and ">   7 |" in text
    assert "submission" in text and "reference" in text and "██" in text and "··" in text
    assert "\x1b" not in text and "\x07" not in text


def test_a_cell_is_read_with_the_cells_line_numbers():
    from grader.source import cell_code

    text = cell_code("%%grade 3 --hint", "import torch\n!pip list\nx = 1")
    assert text.splitlines() == ["# %%grade 3 --hint", "import torch", "# !pip list", "x = 1"]


def test_magic_line():
    from grader.notebook import Options, parse

    assert parse("3") == Options("3")
    assert parse(" causal_attention --hint --timeout=60 ") == Options("causal_attention", True, 60.0)
    for bad in ("", "3 4", "3 --hnit", "3 --timeout=soon", "3 --timeout=0", "'3"):
        with pytest.raises(ValueError):
            parse(bad)


def test_load_ext_grader_registers_the_cell_magic(monkeypatch):
    import grader
    import grader.notebook

    registered = []
    monkeypatch.setattr(grader.notebook.GRADER, "start", lambda: registered.append("started"))

    class Shell:
        def register_magic_function(self, func, magic_kind, magic_name):
            registered.append((func.__name__, magic_kind, magic_name))

    grader.load_ipython_extension(Shell())
    assert registered == [("grade_cell", "cell", "grade"), "started"]  # the grading process warms up meanwhile


def test_html_options_are_checked_before_grading(tmp_path):
    path = tmp_path / "03_causal_attention.py"
    path.write_text(SOURCE)
    proc = grade_here("exercise", "3", path, "-o", tmp_path / "r.html")
    assert proc.returncode == 2 and "add --html" in proc.stderr and proc.stderr.count("\n") == 1
    proc = grade_here("exercise", "3", path, "--html", "-o", path)
    assert proc.returncode == 2 and "the file being graded" in proc.stderr and path.read_text() == SOURCE


@pytest.fixture
def passed_workspace(tmp_path):
    """A workspace whose exercise 3 is marked passed, its file the reference with one line changed and a hostile
    comment; nothing graded."""
    from grader import workspace

    ws = workspace.create(tmp_path / "ws", load_catalog())
    ex = load_catalog().get(3)
    ws.record(ex, True)
    mine = workspace.solution_text(ex).replace("math.sqrt(self.d_out)", "self.d_out ** 0.5")
    assert mine != workspace.solution_text(ex)
    ws.file_for(ex).write_text(mine + "# \x1b[2J\x1b]0;owned\x07 done\n", encoding="utf-8")
    return ws


def test_solution_diff_piped_is_a_plain_unified_diff(passed_workspace):
    proc = grade_here("solution", "3", "--diff", cwd=passed_workspace.root)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("--- ") and "(yours)" in lines[0] and lines[1].startswith("+++ ")
    assert any(line.startswith("-") and "self.d_out ** 0.5" in line for line in lines)
    assert any(line.startswith("+") and "math.sqrt(self.d_out)" in line for line in lines)
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout and "stage:" not in proc.stdout


def test_solution_diff_waits_for_a_pass(passed_workspace):
    proc = grade_here("solution", "4", "--diff", cwd=passed_workspace.root)
    assert proc.returncode == 2 and "pass exercise 4 first" in proc.stderr and not proc.stdout
    proc = grade_here("solution", "4", "--diff", "--force", cwd=passed_workspace.root)
    assert proc.returncode == 0 and proc.stdout.startswith("--- ")
    proc = grade_here("solution", "3", "elsewhere.py", cwd=passed_workspace.root)
    assert proc.returncode == 2 and "add --diff" in proc.stderr


def _on_a_terminal(args, cwd, columns):
    """Run the real `grade` in a pseudo-terminal of the given width; everything it wrote."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "40", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([*COMMAND, *args], cwd=cwd, stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    out = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=60)
    os.close(leader)
    return proc.returncode, out.decode("utf-8", "replace")


def test_diff_shows_file_names_and_lines_as_text():
    from grader.diffview import render_diff

    out = render_diff("a = 1\nb = 2\n", "a = 1\nb = 3\n", mine_name="x\x1b[2J\x1b]0;t\x07.py", ref_name="r.py", width=120)
    assert "\x1b" not in out and "\x07" not in out and "x.py" in out
    assert render_diff("a\n", "a\n", mine_name="m", ref_name="r") == "Your code is the reference, line for line.\n"


def test_solution_diff_side_by_side_and_coloured_on_a_wide_terminal(passed_workspace):
    code, out = _on_a_terminal(["solution", "3", "--diff"], passed_workspace.root, 190)
    assert code == 0, out
    changed = [line for line in out.splitlines() if "self.d_out ** 0.5" in line]
    assert len(changed) == 1 and " | " in changed[0] and "math.sqrt(self.d_out)" in changed[0]  # one row, both sides
    assert "\x1b[31m" in changed[0] and "\x1b[32m" in changed[0]
    assert "identical lines" in out and "\x1b[2J" not in out and "\x1b]0;" not in out
    from grader import workspace
    from grader.diffview import render_diff

    ex = load_catalog().get(3)
    narrow = render_diff(passed_workspace.file_for(ex).read_text(), workspace.solution_text(ex), mine_name="m",
                         ref_name="r", width=80, color=True)
    assert "\x1b[31m-" in narrow and "\x1b[32m+" in narrow and " | " not in narrow  # unified, coloured
