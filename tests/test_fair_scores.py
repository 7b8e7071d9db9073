"""Fair scores: files are read as Python reads them, and nothing earns points before work starts (issue 14, items 1, 2, 9)."""
import json

import pytest

from grader.catalog import load_catalog
from grader.runner import grade

CATALOG = load_catalog()
EX1, EX5 = CATALOG.get(1), CATALOG.get(5)


def graded(ex, path):
    return grade(exercise=ex, path=path, warm=True)


@pytest.mark.parametrize("encode", [
    lambda s: b"\xef\xbb\xbf" + s.encode(),                                 # a BOM, as Windows editors save
    lambda s: s.replace("\n", "\r\n").encode(),                             # CRLF line ends
    lambda s: ("# -*- coding: latin-1 -*-\n# \xe9t\xe9\n" + s).encode("latin-1"),  # an encoding cookie
], ids=["bom", "crlf", "cookie"])
def test_files_are_read_as_python_reads_them(tmp_path, encode):
    path = tmp_path / "solution.py"
    path.write_bytes(encode(EX1.solution_path.read_text(encoding="utf-8")))
    v = graded(EX1, path)
    assert v.passed, [(t.name, t.message) for t in v.failures()]
    assert v.score == v.max_score


def test_a_binary_file_gets_a_clear_message(tmp_path):
    path = tmp_path / "01_self_attention.py"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    v = graded(EX1, path)
    assert not v.passed and v.score == 0
    assert v.diagnoses[0].evidence == ["01_self_attention.py holds binary data, not Python source: "
                                       "hand in the exercise as a .py file"]


def _notebook(*cells):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# my attempt")] + [nbformat.v4.new_code_cell(c) for c in cells]
    return nbformat.writes(nb)


def test_a_notebook_is_graded_from_its_code_cells(tmp_path):
    source = EX1.solution_path.read_text(encoding="utf-8")
    head, _, rest = source.partition("class SelfAttention")
    path = tmp_path / "attempt.ipynb"
    path.write_text(_notebook("%matplotlib inline\n" + head, "class SelfAttention" + rest), encoding="utf-8")
    assert graded(EX1, path).passed


def test_a_notebook_without_code_says_what_to_hand_in(tmp_path):
    path = tmp_path / "attempt.ipynb"
    path.write_text(_notebook(), encoding="utf-8")
    v = graded(EX1, path)
    assert v.score == 0 and "hand in the exercise as a .py file" in v.diagnoses[0].evidence[0]


@pytest.mark.parametrize("text", ["", "\n\n", '"""My attempt."""\nimport torch\nimport torch.nn as nn\n'],
                         ids=["empty", "blank", "docstring_and_imports"])
def test_an_empty_file_is_not_started_and_scores_zero(tmp_path, text):
    path = tmp_path / "01_self_attention.py"
    path.write_text(text, encoding="utf-8")
    v = graded(EX1, path)
    assert v.state == "not_started" and v.score == 0
    assert [d.id for d in v.diagnoses] == ["not_started"]
    assert v.to_json()["score"] == 0 and all(t["score"] == 0 for t in v.to_json()["tests"])


@pytest.mark.parametrize("number", [1, 5])
def test_an_untouched_skeleton_scores_zero_in_every_output(number):
    from grader.instructor.gradescope import results_document
    from grader.instructor.grading import grade_file

    ex = CATALOG.get(number)
    v = graded(ex, ex.skeleton_path)
    assert v.state == "not_started" and v.score == 0 and v.max_score > 0
    doc = v.to_json()
    assert doc["score"] == 0 and all(t["score"] == 0 for t in doc["tests"])
    row = grade_file(number, ex.skeleton_path, timeout=30)  # batch's gradebook row
    assert (row.status, row.score) == ("not_started", 0)
    gradescope = results_document([row], visibility="visible", elapsed=1.0)
    assert gradescope["score"] == 0 and all(t["score"] == 0 for t in gradescope["tests"])
    json.dumps(gradescope)


def test_the_fix_the_bug_skeleton_is_not_started_with_a_nudge_not_the_fix(tmp_path):
    """Issue 22: the untouched skeleton of exercise 5 runs and fails; finding why is the exercise, so the verdict
    says not started and to look for the bug, without naming the mistake or showing its fix."""
    from grader.render import verdict_text
    from grader.workspace import named_mistake

    v = graded(EX5, EX5.skeleton_path)
    assert v.state == "not_started" and v.score == 0 and v.failures()
    assert [d.id for d in v.diagnoses] == ["not_started"] and named_mistake(v) is None  # grade hint: the ladder
    text = verdict_text(v, path="exercises/05_fix_multihead.py")
    assert "not started yet" in text and "find the bug" in text and "Hint 1/3" in text
    assert "heads_split_wrong" not in text and "transpose(1, 2)" not in text and "Diagnosis" not in text
    touched = tmp_path / EX5.file
    touched.write_text("# my first look\n" + EX5.skeleton_path.read_text(encoding="utf-8"), encoding="utf-8")
    changed = graded(EX5, touched)
    assert changed.state == "graded" and changed.diagnoses[0].id == "heads_split_wrong"  # touched: named as usual
