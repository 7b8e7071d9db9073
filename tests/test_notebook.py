"""%%grade in a real Jupyter kernel (nbclient + ipykernel) and `grade exercise N --html` through the real CLI,
their HTML rendered in headless Chromium. They grade (a cold grader per cell), so they run from .ci/run:
ATTENTION_KIT_NOTEBOOK_TESTS=1 python -m pytest -q -n 0 tests/test_notebook.py"""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from grader.catalog import load_catalog
from tests.conftest import CORPUS, run_grade

pytestmark = pytest.mark.skipif(os.environ.get("ATTENTION_KIT_NOTEBOOK_TESTS") != "1",
                                reason="grades in a real kernel and through the CLI (tens of seconds): "
                                       "ATTENTION_KIT_NOTEBOOK_TESTS=1, as .ci/run does")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
has_chromium = pytest.mark.skipif(not shutil.which(CHROMIUM), reason="headless Chromium is not installed (CI installs it)")
# the inverted mask of the corpus, printing hostile text when imported (in the worker) and carrying it in a comment
BUGGY = ('print("<script>alert(1)</script>\\x1b[2J")  # <b>not bold</b>\n'
         + (CORPUS / "03" / "mask_inverted.py").read_text(encoding="utf-8"))
BUG = "masked_fill_(self.mask.bool()"


def dom(page, tmp_path) -> str:
    """The page as headless Chromium parsed it."""
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]
    return subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout


def marked(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr class="ak-mark"><td class="ak-ln">(\d+)</td>', html)]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """A notebook run top to bottom in a fresh kernel: load the extension, a buggy cell, the same with --hint,
    the reference, an unknown exercise."""
    import nbformat
    from nbclient import NotebookClient

    cache = tmp_path_factory.mktemp("cache")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("%load_ext grader"),
                nbformat.v4.new_code_cell("%%grade 3\n" + BUGGY),
                nbformat.v4.new_code_cell("%%grade causal_attention --hint\n" + BUGGY),
                nbformat.v4.new_code_cell("%%grade 3 --hint\n" + BUGGY),
                nbformat.v4.new_code_cell("%%grade 3\n" + load_catalog().get(3).solution_path.read_text(encoding="utf-8")),
                nbformat.v4.new_code_cell("%%grade 99\nx = 1\n")]
    env = {"ATTENTION_KIT_CACHE_DIR": str(cache), "XDG_DATA_HOME": str(cache)}  # the hint levels kept outside a workspace
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(cache)}}).execute()
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return nb


def result(cell) -> dict:
    found = [o for o in cell.outputs if o.output_type == "execute_result"]
    assert len(found) == 1, cell.outputs
    return found[0].data


def test_a_buggy_cell_shows_the_mistake_its_line_and_heat_maps(executed):
    data = result(executed.cells[1])
    html, text = data["text/html"], data["text/plain"]
    bug_line = 1 + next(i for i, line in enumerate(BUGGY.splitlines(), 1) if BUG in line)  # the magic is line 1
    assert 'data-status="failed"' in html and "mask_inverted" in html and "The mask is inverted" in html
    assert marked(html) == [bug_line]
    assert html.count("<svg") == 2  # yours beside the reference's
    assert "Check which entries are True" not in html and "%%grade 3 --hint" in html  # the hint waits to be asked
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;b&gt;not bold&lt;/b&gt;" in html
    assert "<script" not in html and "<b>" not in html and "\x1b" not in html
    assert "mask_inverted" in text and f">{bug_line:>4} |" in text and "██" in text


def test_hints_on_request_escalate_as_grade_hint_does(executed):
    first, second = (result(executed.cells[i])["text/html"] for i in (2, 3))
    assert "Check which entries are True" in first and "again for another hint" in first and "Hint 1/" not in first
    assert "Check which entries are True" in second and "Hint 1/" in second  # the mistake's hint seen: the ladder


def test_a_correct_cell_passes_and_a_bad_line_is_one_line(executed):
    html = result(executed.cells[4])["text/html"]
    assert 'data-status="passed"' in html and "31 / 31 points" in html and "<svg" not in html
    assert "Next: exercise 4" in html and "%%grade 4" in html
    err = "".join(o.get("text", "") + o.get("evalue", "") for o in executed.cells[5].outputs)
    assert "unknown exercise '99'" in err and "Traceback" not in err and "execute_result" not in str(executed.cells[5].outputs)


@has_chromium
def test_the_cell_output_renders_in_chromium(executed, tmp_path):
    page = tmp_path / "cell.html"
    page.write_text(f"<!DOCTYPE html><html><body>{result(executed.cells[1])['text/html']}</body></html>", encoding="utf-8")
    parsed = dom(page, tmp_path)
    assert parsed.count("<svg") == 2 and len(marked(parsed)) == 1 and "mask_inverted" in parsed
    assert "<script" not in parsed and "<b>" not in parsed


@pytest.fixture(scope="module")
def html_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("learner")
    path = folder / "03_causal_attention.py"
    path.write_text(BUGGY, encoding="utf-8")
    proc = run_grade("exercise", "3", path, "--html", "--json", cwd=folder, timeout=300)
    return path, proc


def test_grade_exercise_html_writes_the_report_beside_the_file(html_report):
    path, proc = html_report
    report = path.with_name("03_causal_attention.report.html")
    assert proc.returncode == 1 and json.loads(proc.stdout)["diagnoses"][0]["id"] == "mask_inverted"  # stdout: the JSON
    assert f"Report: {report}" in proc.stderr
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<title>Exercise 3 · Causal self-attention with dropout: failed" in page
    assert marked(page) == [next(i for i, line in enumerate(BUGGY.splitlines(), 1) if BUG in line)]
    assert page.count("<svg") == 2 and "Hint:" in page and "grade hint 3" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script" not in page and "\x1b" not in page
    assert "<link" not in page and "<a " not in page and "http://" not in page.replace("http://www.w3.org", "")


def test_grade_exercise_html_to_a_named_file(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(load_catalog().get(3).solution_path.read_text(encoding="utf-8"), encoding="utf-8")
    proc = run_grade("exercise", "3", path, "--html", "-o", tmp_path / "r.html", cwd=tmp_path, timeout=300)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert proc.returncode == 0 and "Report:" in proc.stdout and 'data-status="passed"' in page
    assert "grade solution 3 --diff" in page and not list(tmp_path.glob(".r.html.*"))


@has_chromium
def test_the_report_renders_in_chromium(html_report, tmp_path):
    path, _ = html_report
    parsed = dom(path.with_name("03_causal_attention.report.html"), tmp_path)
    assert parsed.count("<svg") == 2 and len(marked(parsed)) == 1 and "mask_inverted" in parsed
    assert "<script" not in parsed and "<b>" not in parsed


def test_an_interrupted_grade_stops_and_the_next_cell_grades(tmp_path):
    """Interrupting a cell that grades a submission stuck in a loop: KeyboardInterrupt in the cell at once, no
    grading process or worker left behind, and the next %%grade works."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        kc.execute_interactive("%load_ext grader", timeout=60)
        stuck = "%%grade 1\nwhile True:\n    pass\n"
        msg_id = kc.execute(stuck)
        deadline = time.monotonic() + 120  # the grading process, its fork server and the worker stuck in the loop
        while len(_children(km.provisioner.process.pid, "")) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1)
        grading = _children(km.provisioner.process.pid, "")
        assert len(grading) >= 2 and _children(km.provisioner.process.pid, "grader.notebook"), grading
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=60)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = kc.get_shell_msg(timeout=60)
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in grading) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in grading if _alive(p)]
        outputs = []
        kc.execute_interactive("%%grade 1\n" + load_catalog().get(1).solution_path.read_text(encoding="utf-8"),
                               timeout=300, output_hook=outputs.append)
        html = "".join(m["content"].get("data", {}).get("text/html", "") for m in outputs)
        assert 'data-status="passed"' in html
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _children(pid: int, marker: str) -> list[int]:
    """Processes below pid whose command line contains marker."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = open(f"/proc/{entry}/stat").read()
                cmdline = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                todo.append(int(entry))
                if marker in cmdline:
                    found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
