"""One text, checked and run: the grader decodes a submission once (bounded; UTF-8 or a short list of
cookie encodings) and the worker compiles exactly that text, whatever the bytes on disk say."""
from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.catalog import load_catalog
from grader.runner import grade
from grader.sandbox.session import Sandbox
from grader.source import MAX_BYTES, Unreadable, decode, read_submission
from tests.conftest import ROOT

EX1 = load_catalog().get(1)
SOLUTION = EX1.solution_path.read_text(encoding="utf-8")
# In UTF-7, "+AAo-" is a newline: a file that a UTF-8 reader sees as one comment runs `import os` in UTF-7.
HIDDEN = b"#+AAo-import os+AAo-os.system('touch /tmp/attention-kit-utf7-marker')\n"


@pytest.mark.parametrize("data, text", [
    (b"x = 1\r\ny = 2\r", "x = 1\ny = 2\n"),
    (b"\xef\xbb\xbfx = '\xc3\xa9'\n", "x = 'é'\n"),
    (b"# -*- coding: latin-1 -*-\nx = '\xe9'\n", "# -*- coding: latin-1 -*-\nx = 'é'\n"),
    (b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '\x80'\n",
     "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '€'\n"),
    (b"x = 1\n# coding: utf-7\n", "x = 1\n# coding: utf-7\n"),  # not in the first two lines: no cookie
])
def test_decoded_once(data, text):
    assert decode(data) == text


@pytest.mark.parametrize("data, reason", [
    (b"#\r# coding: utf-7\n" + HIDDEN, "'utf-7'"),  # a lone CR ends the first line, as for the interpreter
    (b"# coding: punycode\nx = 1\n", "'punycode'"),
    (b"# coding: rot13\nx = 1\n", "'rot13'"),
    (b"# coding: utf-16\nx = 1\n", "'utf-16'"),
    (b"x = '\xff'\n", "not valid utf-8"),
    (b"x = 1\0\n", "binary data"),
])
def test_refused_with_a_reason(data, reason):
    with pytest.raises(Unreadable, match=reason):
        decode(data)


def test_size_is_bounded_before_decoding(tmp_path):
    path = tmp_path / "big.py"
    path.write_bytes(b"# coding: punycode\n" + b"a" * MAX_BYTES)
    started = time.perf_counter()
    with pytest.raises(Unreadable, match="larger than 1 MB"):
        read_submission(path)
    assert time.perf_counter() - started < 1


@settings(derandomize=True, database=None, max_examples=400, deadline=None)
@given(st.binary(max_size=300), st.sampled_from([b"", b"# coding: utf-7\n", b"#\r# coding: latin-1\n", b"\xef\xbb\xbf"]))
def test_any_bytes_give_text_or_a_reason(data, head):
    try:
        text = decode(head + data)
    except Unreadable as exc:
        assert str(exc)
    else:
        assert isinstance(text, str) and "\r" not in text


def test_the_worker_compiles_the_text_it_is_sent(write):
    """The file on disk defines Other; the text the policy checked defines Checked: the worker has Checked."""
    path = write("sub.py", "Other = 1\n")
    with Sandbox(path, source="Checked = 2\n") as sb:
        sb.request({"op": "load"})
        assert sb.request({"op": "describe", "entry": "Checked"})[0]["ok"] is True
        with pytest.raises(Exception, match="Other"):
            sb.request({"op": "describe", "entry": "Other"})


def test_a_utf7_cookie_behind_a_lone_cr_is_a_failing_verdict(tmp_path):
    path = tmp_path / EX1.file
    path.write_bytes(b"#\r# coding: utf-7\n" + HIDDEN + SOLUTION.encode())
    verdict = grade(exercise=EX1, path=path)
    assert not verdict.passed and verdict.diagnoses[0].id == "syntax_error"
    assert any("utf-7" in line for line in verdict.diagnoses[0].evidence) or "utf-7" in verdict.diagnoses[0].explanation


def test_a_cookie_inside_a_notebook_changes_nothing(tmp_path):
    """A notebook's text is decoded from JSON once; a coding line in a cell is a comment on both sides."""
    marker = tmp_path / "marker"
    cell = "#\r# coding: utf-7\n" + HIDDEN.decode().replace("/tmp/attention-kit-utf7-marker", str(marker))
    notebook = {"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": cell + SOLUTION}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "01_self_attention.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    verdict = grade(exercise=EX1, path=path)
    assert verdict.passed and not marker.exists()


def test_hypothesis_writes_nothing_into_the_checkout():
    from hypothesis.configuration import storage_directory

    where = storage_directory("constants", intent_to_write=False).path.resolve()
    assert ROOT not in where.parents and not (ROOT / ".hypothesis").exists(), where
