"""HTML reports: evidence, marked code, heat maps from the submission's own weights, rendered in Chromium."""
import re
import shutil
import subprocess
import zlib

import pytest

from grader.catalog import load_catalog
from grader.instructor.gradebook import Row
from grader.instructor.grading import grade_submission
from grader.instructor.report import marked_lines, render_report
from tests.conftest import CORPUS, ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"
BUGGY_3 = CORPUS / "03" / "mask_inverted.py"
BUGGY_4 = CORPUS / "04" / "no_scaling.py"


@pytest.fixture(scope="module")
def graded():
    """A submission with a passing exercise 1, an inverted mask in 3, no scaling in 4, and 2 missing."""
    files = {1: str(load_catalog().get(1).solution_path), 3: str(BUGGY_3), 4: str(BUGGY_4)}
    results = grade_submission(numbers=[1, 2, 3, 4], files=files, located={n: f"exercises/x{n}.py" for n in files},
                               rejected={}, timeout=30)
    sources = {n: open(p).read() for n, p in files.items()}
    sources[3] = sources[3] + "# <b>not bold</b> & </td>\n"  # appended: line numbers stay the graded file's
    return Row("ana <lee>", "digest", results), sources


def test_attention_is_captured_for_failures_only(graded):
    by = {r.number: r for r in graded[0].exercises}
    assert by[1].status == "passed" and by[1].attention is None
    assert by[2].status == "missing" and by[2].attention is None and by[2].max_score > 0
    att = by[3].attention
    sub, ref, blocked = att["submission"][0], att["reference"][0], att["blocked"]
    T = len(blocked)
    future = [(i, j) for i in range(T) for j in range(T) if j > i]
    assert all(blocked[i][j] for i, j in future) and not any(blocked[i][i] for i in range(T))
    assert all(ref[i][j] == 0 for i, j in future)
    assert any(sub[i][j] > 0.1 for i, j in future)  # the inverted mask attends to the future
    assert len(by[4].attention["submission"]) == load_catalog().get(4).probe["num_heads"]


def test_report_shows_evidence_code_and_heat_maps(graded):
    row, sources = graded
    html = render_report(row, sources)
    assert "ana &lt;lee&gt;" in html and "<lee>" not in html
    assert "&lt;b&gt;not bold&lt;/b&gt; &amp; &lt;/td&gt;" in html and "<b>not bold</b>" not in html
    for words in ("mask_inverted", "no_scaling", "Hint:", "missing", "exercises/x3.py"):
        assert words in html, words
    section3 = html[html.index('id="ex3"'):html.index('id="ex4"')]
    assert section3.count("<svg") == 2  # submission and reference, one head
    section4 = html[html.index('id="ex4"'):]
    assert section4.count("<svg") == 2 * load_catalog().get(4).probe["num_heads"]
    source3 = sources[3].splitlines()
    start = next(i for i, line in enumerate(source3, 1) if line.startswith("class CausalAttention"))
    marked = [int(n) for n in re.findall(r'<tr class="mark"><td class="ln">(\d+)</td>', section3)]
    localized = (row.exercises[2].verdict or {}).get("localization") or {}
    if isinstance(localized.get("line"), int):  # the line the diagnosis points at
        assert marked == [localized["line"]] and "masked_fill" in source3[marked[0] - 1]
    else:  # else the whole entry class
        assert marked and marked[0] == start and marked == list(range(start, start + len(marked)))
    assert "<script" not in html and "<link" not in html and "http://" not in html.replace("http://www.w3.org", "")


def test_marked_lines_prefers_where_the_code_raised():
    source = "import torch\n\ndef f(x):\n    return x\n"
    assert marked_lines(source, "f", [{"line": 4}]) == ({4}, "raised")
    assert marked_lines(source, "f", [{"line": None}]) == ({3, 4}, "entry")
    assert marked_lines("def f(:\n", "f", []) == ({1}, "syntax")
    assert marked_lines(source, "g", []) == (set(), "")


def _png_pixels_vary(png: bytes) -> bool:
    """Whether the (8-bit RGB/RGBA, non-interlaced) PNG has more than a handful of distinct rows."""
    data = b"".join(png[i + 8:i + 8 + int.from_bytes(png[i:i + 4], "big")]
                    for i in [m.start() - 4 for m in re.finditer(b"IDAT", png)])
    raw = zlib.decompress(data)
    width = int.from_bytes(png[16:20], "big")
    channels = {2: 3, 6: 4}[png[25]]
    stride = 1 + width * channels
    rows = {raw[i + 1:i + stride] for i in range(0, len(raw), stride)}
    return len(rows) > 50


@pytest.mark.skipif(not shutil.which(CHROMIUM), reason="headless Chromium is not installed (CI installs it)")
def test_report_renders_in_chromium(graded, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_report(*graded), encoding="utf-8")
    shot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / 'profile'}", "--hide-scrollbars", "--window-size=1100,2400",
                    f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120)
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert _png_pixels_vary(png), "the screenshot is (nearly) blank"


def _cohort_rows(graded):
    """The graded submission, a full score, two more with exercise 3's mask inverted, one with nothing."""
    from grader.instructor.batch import report_name
    from grader.instructor.grading import ExerciseResult

    row, _ = graded
    rows = [row]
    for name, statuses in (("Bea", ("passed",) * 4), ("Cem \x1b[31m<img src=x onerror=alert(1)>", ("passed", "missing", "failed", "failed")),
                           ("Dov", ("passed", "passed", "failed", "passed")), ("Eli", ("missing",) * 4)):
        exercises = []
        for e, status in zip(row.exercises, statuses):
            copy = ExerciseResult.from_dict(e.to_dict())
            if status == "passed":
                copy.status, copy.score, copy.diagnoses, copy.attention = "passed", copy.max_score, [], None
            elif status == "missing":
                copy.status, copy.score, copy.diagnoses, copy.verdict, copy.attention = "missing", 0, [], None, None
            elif copy.status != "failed":
                copy.status, copy.score, copy.diagnoses = "failed", 1, ["mask_inverted"]
            exercises.append(copy)
        rows.append(Row(name, "d", exercises, report=f"reports/{report_name(name)}"))
    row.report = f"reports/{report_name(row.submission)}"
    return rows


def _attention_rows():
    """One submission per thing a person must look at, and a dozen with a mistake each (more than 10 kinds)."""
    from grader.instructor.grading import ExerciseResult

    def ex(number, status, score=0, diagnoses=(), note="", tests=()):
        verdict = {"tests": list(tests), "diagnoses": [{"id": d, "title": f"title of {d}"} for d in diagnoses]}
        return ExerciseResult(number, f"slug{number}", status, score, 10, list(diagnoses), note=note, verdict=verdict)

    hang = {"name": "t", "status": "timeout", "message": "one call never returned (an infinite loop?)"}
    return [
        Row("hang", "d", [ex(1, "failed", 2, ["timeout"], tests=[hang]), ex(2, "passed", 10)], report="r/hang-1.html"),
        Row("osman", "d", [ex(1, "failed", 0, ["unsafe_code"]), ex(2, "failed", 0, ["forbidden_api"])]),
        Row("syd", "d", [ex(1, "failed", 0, ["syntax_error"]),
                         ex(2, "missing", note="no 02_x.py; did you mean 02_X (1).py?")]),
        Row("err", "d", [ex(1, "error", note="internal grader error: KeyError: 'x'"), ex(2, "passed", 10)]),
        Row("big", "d", [ex(1, "rejected", note="01_x.py is larger than 1 MB"), ex(2, "passed", 10)]),
        Row("zip", "d", [ex(1, "rejected", note="not a readable zip"), ex(2, "rejected", note="not a readable zip")],
            problem="not a readable zip archive (BadZipFile: File is not a zip file)"),
        Row("many", "d", [ex(1, "failed", 1, ["no_scaling"]), ex(2, "failed", 3, ["mask_inverted"])]),
        *[Row(f"m{i:02d}", "d", [ex(1, "failed", 1, [f"mistake_{i:02d}"]), ex(2, "passed", 10)]) for i in range(12)],
    ]


def test_cohort_page_puts_what_needs_attention_first_and_counts_every_mistake():
    from grader.instructor.cohort import cohort_page, frequent_diagnoses, needs_attention

    rows = _attention_rows()
    groups = {g["kind"]: [(i["name"], i["exercise"]) for i in g["entries"]] for g in needs_attention(rows)}
    assert list(groups) == ["error", "unreadable", "timeout", "policy", "syntax", "rejected", "ambiguous"]
    assert groups == {"error": [("err", 1)], "unreadable": [("zip", None)], "timeout": [("hang", 1)],
                      "policy": [("osman", 1), ("osman", 2)], "syntax": [("syd", 1)], "rejected": [("big", 1)],
                      "ambiguous": [("syd", 2)]}
    timeout = next(g for g in needs_attention(rows) if g["kind"] == "timeout")["entries"][0]
    assert timeout["detail"].startswith("one call never returned") and timeout["report"] == "hang-1.html#ex1"
    counted = {(d["id"], d["exercise"]): d["count"] for d in frequent_diagnoses(rows)}
    assert len(counted) == 18 and all(counted[(f"mistake_{i:02d}", 1)] == 1 for i in range(12))  # no cap of 10
    html = cohort_page(rows, [1, 2])
    assert html.index('id="attention"') < html.index('id="students"') < html.index('id="histogram"')
    assert html.count('class="diag"') == 18 and "mistake_11" in html
    assert html.count("<tr data-search=") == len(rows)


def test_cohort_page_shows_the_course_points_notes_and_who_handed_nothing_in():
    """With the gradebook's weights and overrides, notes and roster: what the course gives, what was noticed."""
    from grader.instructor.cohort import cohort_page, grid, needs_attention
    from grader.instructor.grading import ExerciseResult
    from grader.instructor.rubric import Mark, Override

    done = Row("ida", "d", [ExerciseResult(1, "s1", "failed", 12, 24, ["no_scaling"]),
                            ExerciseResult(2, "s2", "passed", 17, 17)], notes=["a .py and an .ipynb for exercise 1"])
    done.marks = {1: Mark(7.5, 10, 5.0, Override("ida", 1, None, 2.5, "late fix accepted")), 2: Mark(20, 20, 20)}
    absent = Row("joe", "", [ExerciseResult(n, f"s{n}", "missing", 0, 10, note="no submission") for n in (1, 2)],
                 problem="in the roster, but no submission was found")
    groups = {g["kind"]: [(i["name"], i["detail"]) for i in g["entries"]] for g in needs_attention([done, absent])}
    assert groups == {"absent": [("joe", "in the roster, but no submission was found")],
                      "ambiguous": [("ida", "a .py and an .ipynb for exercise 1")]}
    ida = grid([done], [1, 2])[0]
    assert (ida["total"], ida["max_total"], ida["percent"]) == ("27.5", "30", 92)
    assert ida["cells"][0]["score"] == "7.5" and "changed by hand: late fix accepted" in ida["cells"][0]["hover"]
    assert "median 27.5/30 points" in cohort_page([done], [1, 2])


def _grid(html: str) -> list[list[tuple[str, str, str]]]:
    body = html[html.index("<tbody>"):html.index("</tbody>")]
    return [re.findall(r'<td data-col="(\w+)" data-v="([^"]*)"[^>]*?(?: title="([^"]*)")?>', tr)
            for tr in body.split("<tr")[1:]]


def test_cohort_grid_sorts_filters_and_escapes(graded):
    import base64
    import hashlib

    from grader.instructor.cohort import cohort_page, frequent_diagnoses

    rows = _cohort_rows(graded)
    top = frequent_diagnoses(rows)
    assert (top[0]["id"], top[0]["exercise"], top[0]["count"]) == ("mask_inverted", 3, 3)
    assert [s["name"][:3] for s in top[0]["students"]] == ["Cem", "Dov", "ana"]
    assert top[0]["maps"] and top[0]["students"][0]["report"].endswith("#ex3")
    html = cohort_page(rows, [1, 2, 3, 4])
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html and "\x1b" not in html
    assert 'src="http' not in html and "<link" not in html and "http://" not in html.replace("http://www.w3.org", "")
    grid = _grid(html)
    assert [cells[0][1][:3] for cells in grid] == ["Bea", "Cem", "Dov", "Eli", "ana"]
    ana = {col: (v, title) for col, v, title in grid[-1]}
    assert ana["ex3"][0] == str(rows[0].exercises[2].score) and "mask_inverted" in ana["ex3"][1]
    assert ana["ex2"][1].startswith("exercise 2 (scaled_dot_product) · missing · 0/")
    (script,) = re.findall(r"<script>(.*?)</script>", html, re.S)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)[1].replace("&#39;", "'")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert policy.startswith("default-src 'none'") and f"script-src 'sha256-{digest}'" in policy
    assert html.count("<script") == 1 and "onclick" not in html and "javascript:" not in html


@pytest.mark.skipif(not shutil.which(CHROMIUM), reason="headless Chromium is not installed (CI installs it)")
def test_cohort_page_renders_sorts_and_filters_in_chromium(graded, tmp_path):
    from grader.instructor.cohort import cohort_page

    rows = _cohort_rows(graded) + _attention_rows()
    page = tmp_path / "index.html"
    page.write_text(cohort_page(rows, [1, 2, 3, 4]), encoding="utf-8")
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]

    dom = subprocess.run([*flags, "--dump-dom", page.as_uri() + "#q=mask_inverted&sort=total&dir=desc"],
                         capture_output=True, text=True, timeout=120).stdout
    assert 'data-ready="1"' in dom, "the inline script did not run under the page's Content-Security-Policy"
    assert dom.count('class="bin"') == 10 and dom.count('class="exercise-rate"') == 4
    assert '<strong class="count">3</strong>' in dom and dom.count("<svg") >= 2 and "<img" not in dom
    body = dom[dom.index("<tbody>"):dom.index("</tbody>")]
    ordered = [(tr, int(re.search(r'data-col="total" data-v="(\d+)"', tr)[1])) for tr in body.split("<tr")[1:]]
    assert [t for _, t in ordered] == sorted((t for _, t in ordered), reverse=True) and len(ordered) == len(rows)
    visible = [re.search(r'data-col="name" data-v="([^"]*)"', tr)[1][:3] for tr, _ in ordered
               if " hidden=" not in tr.split(">")[0]]
    assert sorted(visible) == ["Cem", "Dov", "ana", "man"] and f"4 of {len(rows)} shown" in dom
    shot = tmp_path / "index.png"
    subprocess.run([*flags, "--hide-scrollbars", "--window-size=1100,1800", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120)
    assert _png_pixels_vary(shot.read_bytes()), "the cohort page renders (nearly) blank"


def test_report_escapes_exception_text_and_folder_names():
    """Attack 8, in HTML: what the submission controls is text, its control characters gone."""
    from grader.instructor.grading import ExerciseResult

    hostile = "<img src=x onerror=alert(1)><a href='http://evil.example'>x</a>\x1b[2J\x1b[32mpassed\x07"
    folder = "<img src=y onerror=alert(2)>"
    row = Row(f"eve {folder}", "d", [
        ExerciseResult(1, "self_attention", "rejected", 0, 24, note=f"{folder}/01_self_attention.py: {hostile}",
                       file=f"{folder}/01_self_attention.py"),
        ExerciseResult(2, "scaled_dot_product", "error", 0, 20, note=f"internal grader error: ValueError: {hostile}")])
    html = render_report(row, {})
    assert "<img" not in html and "<a href='http" not in html and 'href="http' not in html
    assert "\x1b" not in html and "\x07" not in html and "[2J" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;img src=y onerror=alert(2)&gt;" in html


def test_integrity_flags_are_in_the_needs_attention_list(tmp_path):
    """A copy of the reference, and two submissions alike each other, are listed with what they are alike."""
    from grader.instructor.cohort import needs_attention
    from grader.instructor.similarity import integrity_flags
    from grader.instructor.submissions import open_submission

    ex = load_catalog().get(3)
    corpus = ROOT / "tests" / "corpus" / "03"
    given = {"ann": ex.solution_path, "bob": corpus / "mask_inverted.py", "cat": corpus / "mask_inverted.py",
             "dan": corpus / "no_scaling.py"}
    subs = []
    for i, (name, source) in enumerate(given.items()):
        folder = tmp_path / "subs" / name
        folder.mkdir(parents=True)
        shutil.copyfile(source, folder / ex.file)
        subs.append(open_submission(folder, name, tmp_path / "scratch" / str(i), [ex]))
    flags = integrity_flags(subs, [ex])
    assert ("ann", 3) in [(n, e) for n, e, _ in flags] and "reference" in dict(((n, d) for n, _, d in flags))["ann"]
    alike = {n: d for n, _, d in flags if "reference" not in d}
    assert set(alike) == {"bob", "cat"} and "cat" in alike["bob"] and "bob" in alike["cat"]
    group = next(g for g in needs_attention([], flags) if g["kind"] == "integrity")
    assert [e["name"] for e in group["entries"]] == ["ann", "bob", "cat"]
