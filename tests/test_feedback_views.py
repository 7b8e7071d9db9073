"""How a learner sees a failure (issue 21, items 3 and 5): the cause first with the failures it explains under it,
the line with a marker under it, notebooks as cell and line, and where a timed-out submission was stuck."""
import json
import os
import zipfile

import pytest
import torch

from grader.catalog import load_catalog
from grader.diagnosis import make, mark_consequences
from grader import results
from grader.results import Status, Verdict
from grader.sandbox import protocol

CODE = """import torch


def attend(q, k):
    scores = q @ k.T  # \x1b[2Jcleared
    return scores
"""


def plain(markup: str) -> str:
    from rich.text import Text

    return Text.from_markup(markup).plain


def Source(text, cells=None):
    from grader.source import Source

    return Source(text, cells)


def notebook_source(data: bytes):
    from grader.source import notebook_source

    return notebook_source(data)


def read_source(path):
    from grader.source import read_source

    return read_source(path)


def ex3_verdict(source=None) -> Verdict:
    """Exercise 3 with its mask filled with 0 (the learner's report in issue 21): the numerics fail, the dropout
    checks fail because they compare with the reference, and a device check fails for a reason of its own."""
    tests = [
        results.TestResult("matches_reference_float64[base]", "numerics", Status.FAILED, "output differs", code="value_mismatch"),
        results.TestResult("training_drops_attention_weights", "dropout", Status.FAILED, "weight 0.66 where 0 or 2",
                   code="dropout_misplaced", evidence=("dropout_misplaced",)),
        results.TestResult("eval_mode_is_deterministic_and_dropout_free", "dropout", Status.FAILED, "eval output differs",
                   code="value_mismatch", evidence=("dropout_in_eval",)),
        results.TestResult("runs_on_another_device", "device", Status.ERROR, "tensors on cpu and meta", line=5,
                   code="device_mismatch", evidence=("mask_device",)),
        results.TestResult("output_shapes", "shape", Status.PASSED),
    ]
    v = Verdict(3, "causal_attention", "Causal self-attention with dropout", tests,
                [make("mask_zero_fill", "your output equals the reference computed with blocked scores set to 0")],
                "cpu", 0.1)
    v.source = source
    return v


def test_a_named_mistake_explains_the_checks_that_compare_with_the_reference():
    v = ex3_verdict()
    mark_consequences(v)
    explained = {t.name: t.explained_by for t in v.failures()}
    assert explained == {"matches_reference_float64[base]": "mask_zero_fill",
                         "training_drops_attention_weights": "mask_zero_fill",
                         "eval_mode_is_deterministic_and_dropout_free": "mask_zero_fill",
                         "runs_on_another_device": None}  # a device failure is not a consequence of the fill value
    assert [t["explained_by"] for t in v.to_json()["tests"]][:4] == ["mask_zero_fill"] * 3 + [None]
    v.diagnoses.append(make("dropout_misplaced", "dropout on the values"))  # a second mistake, named too
    mark_consequences(v)
    assert v.tests[1].explained_by is None and v.tests[0].explained_by == v.tests[2].explained_by == "mask_zero_fill"


def test_the_terminal_shows_the_cause_then_its_symptoms_then_what_else_fails():
    from grader.render import verdict_text

    v = ex3_verdict(Source(CODE))
    mark_consequences(v)
    text = verdict_text(v, path="sub.py", verbose=True)
    cause, examples, also = (text.index(s) for s in ("Cause:", "It explains 3 of the failing tests", "Also failing"))
    assert cause < examples < text.index("training_drops_attention_weights") < also < text.index("runs_on_another_device")
    assert text.index("Masked scores are set to 0") < text.index("matches_reference_float64")
    assert "5 |" not in text  # the device error's line is not the cause's: no line under the cause


def test_the_dropout_check_reports_what_it_saw_not_a_cause():
    from grader.failures import Mismatch
    from grader.probes import expect_dropped_weights

    w_ref = torch.tensor([[[[1.0, 0.0], [0.4, 0.6]]]])
    w = torch.tensor([[[[0.7, 0.0], [0.8, 1.2]]]])  # query 0 on key 0: neither dropped (0) nor kept (2)
    with pytest.raises(Mismatch) as caught:
        expect_dropped_weights(w, w_ref, w.sum(-1), 0.5)
    message = str(caught.value)
    assert "must act on" not in message and "query 0 gives key 0 (head 0) weight 0.7" in message
    assert "reference's weight there is 1" in message


def test_the_line_is_shown_with_a_marker_under_what_it_computes():
    from grader.render import verdict_text

    v = ex3_verdict(Source(CODE))
    v.localization = {"line": 5, "stage": "scores", "matched_through": None, "evidence": "the scores differ"}
    text = plain(verdict_text(v, path="sub.py"))
    lines = text.splitlines()
    row = next(i for i, line in enumerate(lines) if line.lstrip().startswith("5 |"))
    code, marker = lines[row], lines[row + 1]
    assert code.endswith("scores = q @ k.T  # cleared") and "\x1b" not in text  # the escape is stripped
    start = code.index("q @ k.T")
    assert marker.index("^") == start and marker.count("^") == len("q @ k.T")
    assert marker.split("|")[0].strip() == ""


def test_without_a_column_the_whole_line_is_marked():
    from grader.render import excerpt

    v = ex3_verdict(Source("for i in range(3):\n    while True: pass\n"))
    code, marker = excerpt(v, 2)
    assert code.endswith("|     while True: pass") and marker.endswith("|     " + "^" * len("while True: pass"))
    assert excerpt(v, 99) == [] and excerpt(v, None) == []


def notebook(*cells) -> bytes:
    return json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": text,
                                  **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                 for kind, text in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


NOTEBOOK = notebook(("markdown", "# Exercise 1"), ("code", "import torch\n%matplotlib inline"),
                    ("code", ["x = 1\n", "y = 2\n", "z = x / 0"]))


def test_a_notebook_maps_every_line_to_its_cell():
    source = notebook_source(NOTEBOOK)
    assert source.text.splitlines()[1] == "# %matplotlib inline"
    assert source.cell_of(1) == (2, 1) and source.cell_of(3) is None and source.cell_of(7) == (3, 3)
    assert source.where(7) == "cell 3, line 3" and Source("x = 1\n").where(1) == "line 1"
    assert source.places("your code raised ZeroDivisionError at line 7") == \
        "your code raised ZeroDivisionError at cell 3, line 3"


def test_a_notebook_verdict_says_cell_and_line_in_the_json_and_the_terminal():
    from grader.render import verdict_text
    from grader.runner import place_lines

    source = notebook_source(NOTEBOOK)
    v = ex3_verdict()
    v.tests[3].line, v.tests[3].message = 7, "your code raised ZeroDivisionError at line 7: division by zero"
    v.localization = {"line": 7, "stage": "scores", "matched_through": None, "evidence": "the tensor at line 7 differs"}
    place_lines(v, source)
    doc = v.to_json()
    failing = doc["tests"][3]
    assert (failing["line"], failing["cell"], failing["cell_line"]) == (7, 3, 3)
    assert failing["message"].endswith("at cell 3, line 3: division by zero")
    assert doc["localization"]["cell"] == 3 and doc["localization"]["cell_line"] == 3
    assert "cell 3, line 3" in doc["localization"]["evidence"]
    text = plain(verdict_text(v, path="ex.ipynb"))
    assert "Where it goes wrong: cell 3, line 3" in text and "  3 | z = x / 0" in text


def test_batch_and_exercise_read_a_notebook_with_the_same_lines(tmp_path):
    """One reader: the batch keeps the notebook, so grade batch reports the lines grade exercise reports."""
    from grader.instructor.report import code_view
    from grader.instructor.submissions import open_submission

    ex = load_catalog().get(1)
    name = ex.file.rsplit(".", 1)[0] + ".ipynb"
    archive = tmp_path / "alice.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr(name, NOTEBOOK)
    sub = open_submission(archive, "alice", tmp_path / "scratch", [ex])
    graded = sub.files[ex.number]
    assert graded.suffix == ".ipynb" and read_source(graded) == notebook_source(NOTEBOOK)
    view = code_view(read_source(graded), ex.entry, [{"line": 7, "cell": 3, "cell_line": 3}], True)
    assert [line["label"] for line in view["lines"]] == ["2:1", "2:2", "", "", "3:1", "3:2", "3:3"]
    assert [line["label"] for line in view["lines"] if line["mark"]] == ["3:3"]


def test_the_html_report_folds_the_consequences_under_the_cause():
    from grader.instructor.grading import ExerciseResult
    from grader.instructor.report import exercise_view

    v = ex3_verdict()
    mark_consequences(v)
    view = exercise_view(ExerciseResult(3, "causal_attention", "failed", v.score, v.max_score, verdict=v.to_json()), CODE)
    assert sum(len(g["names"]) for g in view["explained_groups"]) == 3
    assert [g["names"] for g in view["failing_groups"]] == [["runs_on_another_device"]]
    assert view["failing_groups"][0]["where"] == "line 5"


def test_the_report_marks_where_a_timed_out_submission_was_stuck():
    from grader.instructor.report import code_view

    timed_out = [{"status": "timeout", "line": 5, "name": "t", "category": "shape", "message": "stuck at line 5"}]
    view = code_view(CODE, "attend", timed_out, True)
    assert view["why"] == "stuck" and [line["n"] for line in view["lines"] if line["mark"]] == [5]


def test_a_stack_dump_gives_the_innermost_line_of_the_submission():
    dump = (b'Thread 0x00007f (most recent call first):\n  File "/usr/lib/python3.11/threading.py", line 320 in wait\n\n'
            b'Current thread 0x00007e (most recent call first):\n'
            b'  File "/usr/lib/python3/torch/nn/functional.py", line 2000 in softmax\n'
            b'  File "/tmp/attention-kit-x/submission.py", line 26 in forward\n'
            b'  File "/tmp/attention-kit-x/submission.py", line 40 in helper\n')
    assert protocol.stuck_line(dump, "submission.py", 30) == 26
    assert protocol.stuck_line(dump, "submission.py", 20) is None  # a line the file does not have: no hint
    assert protocol.stuck_line(b"\x1b[2J" + b"A" * (1 << 20), "submission.py", 30) is None
    assert protocol.stuck_line(b'  File "submission.py", line 99999999999 in f\n', "submission.py", 30) is None


@pytest.mark.skipif(os.environ.get("ATTENTION_KIT_FEEDBACK_TESTS") != "1",
                    reason="runs a worker into its CPU budget (a few seconds): ATTENTION_KIT_FEEDBACK_TESTS=1 (.ci/run)")
def test_a_timeout_says_where_the_code_was_stuck(tmp_path):
    from grader.sandbox import Sandbox, WorkerGone
    from grader.sandbox.limits import Limits

    path = tmp_path / "sub.py"
    path.write_text("import torch\n\n\ndef f(x):\n    n = 0\n    while n >= 0:\n        n = n + 1\n    return x\n")
    with Sandbox(path, limits=Limits(time_s=1.0)) as sandbox:
        sandbox.request({"op": "load"})
        with pytest.raises(WorkerGone) as gone:
            sandbox.request({"op": "run", "entry": "f", "args": ["x"]}, {"x": torch.ones(2)})
    assert gone.value.reason == "timeout" and gone.value.line in (6, 7)
    assert gone.value.detail.endswith(f"it was stuck at line {gone.value.line}")


@pytest.mark.parametrize("mistake, code", [("mask_not_sliced", "size_mismatch"), ("batched_transpose", "size_mismatch"),
                                           ("fp16_fill_overflow", "dtype_overflow")])
def test_a_mistake_that_shows_as_an_exception_explains_the_raised_tests(mistake, code):
    """The cause first for a mistake whose symptom is an exception (a mask not cut to T raises in masked_fill): the
    raised tests fold under it, and it still explains what a forward that differs produces."""
    from grader.diagnosis import GENERIC_CODES, explained_codes

    assert set(GENERIC_CODES) <= set(explained_codes(mistake)) and code in explained_codes(mistake)
    tests = [results.TestResult("output_shapes[base]", "shape", Status.ERROR, "your code raised RuntimeError at line 24",
                                line=24, code=code),
             results.TestResult("matches_reference_float64[base]", "numerics", Status.FAILED, "max abs diff 0.3",
                                code="value_mismatch"),
             results.TestResult("runs_on_another_device", "device", Status.ERROR, "tensors on cpu and cuda:0",
                                code="device_mismatch", evidence=("mask_device",))]
    v = Verdict(3, "causal_attention", "Causal self-attention with dropout", tests, [make(mistake, "seen")], "cpu", 0.1)
    mark_consequences(v)
    assert [t.explained_by for t in v.tests] == [mistake, mistake, None]
    assert "size_mismatch" not in explained_codes("no_scaling")  # a mistake that does not raise explains no exception
