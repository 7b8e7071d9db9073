"""grade batch: folders and zips, a gradebook, reports, a cache, and submissions that cannot hurt each other."""
import csv
import json
import os
import stat
import struct
import subprocess
import tracemalloc
import zipfile

import pytest

from grader.catalog import load_catalog
from grader.instructor import UsageError, select_exercises
from grader.instructor.batch import report_name, run_batch, run_pool
from grader.instructor.gradebook import Row, gradebook_json
from grader.instructor.merge import merge, merge_gradebooks
from grader.instructor.submissions import MAX_FILE_BYTES, MAX_ZIP_ENTRIES, discover, open_submission
from grader.source import read_source
from tests.conftest import COMMAND, CORPUS, grade_here, gradebook_doc, run_grade

EX1, EX3 = load_catalog().get(1), load_catalog().get(3)
MARKUP = "# </pre></td><script>alert('report')</script>\n"


def _zip(path, entries: dict, links: dict | None = None):
    with zipfile.ZipFile(path, "w") as z:
        for name, text in entries.items():
            z.writestr(name, text)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    """Five submissions for exercises 1 and 3: right, buggy, hanging, hostile, and a symlink to the answer."""
    root = tmp_path_factory.mktemp("batch")
    subs = root / "subs"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / EX1.file).write_text(EX1.solution_path.read_text())
    (subs / "alice" / EX3.file).write_text(EX3.solution_path.read_text())
    # bob hands the handout back as a zip: one shared top folder, the files in exercises/
    _zip(subs / "bob.zip", {f"bob-handout/exercises/{EX1.file}": EX1.solution_path.read_text(),
                            f"bob-handout/exercises/{EX3.file}": MARKUP + (CORPUS / "03" / "mask_inverted.py").read_text(),
                            "bob-handout/README.md": "mine"})
    (subs / "carol").mkdir()  # exercise 1 hangs, exercise 3 is missing
    (subs / "carol" / EX1.file).write_text((CORPUS / "01" / "timeout_loop.py").read_text())
    # mallory: an entry that climbs out of the archive, a symlink named like the file, forbidden imports
    _zip(subs / "mallory.zip", {f"../../{EX3.file}": EX3.solution_path.read_text(),
                                f"/tmp/{EX3.file}": EX3.solution_path.read_text(),
                                f"sub/{EX1.file}": (CORPUS / "01" / "unsafe_os.py").read_text()},
         links={EX3.file: str(EX3.solution_path)})
    (subs / "dave").mkdir()  # a symlink to the reference must not be graded as dave's work
    os.symlink(EX1.solution_path, subs / "dave" / EX1.file)
    # josé hands in a notebook for exercise 1 and a misnamed copy of exercise 3
    jose = subs / "José Ñúñez"
    jose.mkdir()
    (jose / "01_self_attention.ipynb").write_text(_notebook(EX1.solution_path.read_text()))
    (jose / "03_Causal_Attention (1).py").write_text(EX3.solution_path.read_text())
    env = {**os.environ, "COLUMNS": "80"}
    proc = run_grade("batch", subs, "--jobs", "2", "-o", root / "gradebook.csv", "--report-dir", root / "reports",
                     "--exercises", "1,3", "--timeout", "5", timeout=300, env=env)
    return root, proc


def _notebook(code: str) -> str:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# My attention\n"]},
             {"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [], "source": ["%matplotlib inline\n"]},
             {"cell_type": "code", "metadata": {}, "execution_count": 2, "outputs": [],
              "source": code.splitlines(keepends=True)}]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})


def _rows(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        return {r["submission"]: r for r in csv.DictReader(f)}


def test_batch_runs_and_writes_one_row_per_submission(cohort):
    root, proc = cohort
    assert proc.returncode == 0, proc.stderr
    rows = _rows(root / "gradebook.csv")
    assert sorted(rows) == ["José Ñúñez", "alice", "bob", "carol", "dave", "mallory"]
    assert list(rows["alice"])[:7] == ["submission", "total", "max_total", "ex1_status", "ex1_score", "ex1_max",
                                       "ex1_diagnoses"]
    assert "6/6" in proc.stderr  # the progress bar: submissions done / all
    for name, row in rows.items():
        assert int(row["total"]) == int(row["ex1_score"]) + int(row["ex3_score"]), name
        assert int(row["max_total"]) == int(row["ex1_max"]) + int(row["ex3_max"]) > 0, name


def test_each_submission_gets_its_own_verdict(cohort):
    rows = _rows(cohort[0] / "gradebook.csv")
    alice, bob, carol, mallory, dave = (rows[n] for n in ("alice", "bob", "carol", "mallory", "dave"))
    assert alice["ex1_status"] == alice["ex3_status"] == "passed" and alice["total"] == alice["max_total"]
    assert bob["ex1_status"] == "passed" and bob["ex3_status"] == "failed"
    assert bob["ex3_diagnoses"].split()[0] == "mask_inverted"
    assert carol["ex1_status"] == "failed" and carol["ex1_diagnoses"].split()[0] == "timeout"
    assert carol["ex3_status"] == "missing" and carol["ex3_score"] == "0"
    assert mallory["ex1_status"] == "failed" and mallory["ex1_diagnoses"].split()[0] == "unsafe_code"
    assert mallory["ex3_status"] == "missing"  # neither the climbing entries nor the symlink were taken
    assert dave["ex1_status"] == "rejected" and dave["ex1_score"] == "0"
    jose = rows["José Ñúñez"]
    assert jose["ex1_status"] == "passed"  # the notebook's code cells, the % magic commented out
    assert jose["ex3_status"] == "missing"


def test_summary_fits_80_columns_and_csv_opens_in_excel(cohort):
    root, proc = cohort
    table = proc.stdout.split("\n\n")[0].splitlines()
    assert table and all(len(line) <= 80 for line in proc.stdout.splitlines() if str(root) not in line), proc.stdout
    alice = next(line for line in table if line.startswith("alice"))
    assert alice.split()[1] == _rows(root / "gradebook.csv")["alice"]["total"] + "/" + \
        _rows(root / "gradebook.csv")["alice"]["max_total"] and "✓✓" in alice
    assert any(line.startswith("José Ñúñez") for line in table)
    raw = (root / "gradebook.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and "José Ñúñez".encode() in raw  # a BOM: Excel reads UTF-8
    jose = json.loads((root / "gradebook.cache.json").read_text())["rows"]["José Ñúñez"]
    note = next(e["note"] for e in jose["exercises"] if e["number"] == 3)
    assert "did you mean 03_Causal_Attention (1).py?" in note


def test_archive_entries_never_land_outside(cohort):
    root, _ = cohort
    for folder in (root, root.parent, root.parent.parent):
        assert not (folder / EX3.file).exists()


def test_one_report_per_submission_self_contained_and_escaped(cohort):
    root, _ = cohort
    reports = sorted(p.name for p in (root / "reports").glob("*.html"))
    names = ["José Ñúñez", "alice", "bob", "carol", "dave", "mallory"]
    assert reports == sorted([report_name(n) for n in names] + ["index.html"])
    assert report_name("José Ñúñez").startswith("jose-nunez-") and report_name("Jose Nunez") != report_name("José Ñúñez")
    bob = (root / "reports" / report_name("bob")).read_text()
    assert "<script" not in bob and "&lt;script&gt;" in bob
    assert "mask_inverted" in bob and "<svg" in bob
    assert 'src="http' not in bob and "<link" not in bob
    carol = (root / "reports" / report_name("carol")).read_text()
    assert "missing" in carol and EX3.file in carol
    index = (root / "reports" / "index.html").read_text()
    assert "mask_inverted" in index and f'href="{report_name("bob")}#ex3"' in index
    attention = index[index.index('id="attention"'):index.index('id="students"')]  # what to look at first
    for kind, who in (("timeout", "carol"), ("policy", "mallory"), ("rejected", "dave"), ("ambiguous", "José Ñúñez")):
        group = attention[attention.index(f'id="attention-{kind}"'):]
        assert f'<a href="{report_name(who)}#ex' in group.split("</section>")[0], (kind, who)


def test_rerun_skips_unchanged_and_regrades_changed(cohort):
    root, _ = cohort
    args = ("batch", root / "subs", "-o", root / "gradebook.csv", "--exercises", "1,3", "--timeout", "5")
    again = run_grade(*args, timeout=120)  # without --report-dir: the report column stays
    assert again.returncode == 0 and "0 graded, 6 unchanged" in again.stdout, again.stdout + again.stderr
    assert _rows(root / "gradebook.csv")["bob"]["report"].endswith(report_name("bob"))
    (root / "subs" / "alice" / EX3.file).write_text((CORPUS / "03" / "no_scaling.py").read_text())
    changed = run_batch(submissions_dir=root / "subs", jobs=0, output=root / "gradebook.csv", exercises="1,3",
                        timeout=5, report_dir=root / "reports", progress=False)  # in this process, warm
    assert (changed.graded, changed.cached) == (1, 5)
    alice = _rows(root / "gradebook.csv")["alice"]
    assert alice["ex3_status"] == "failed" and alice["ex3_diagnoses"].split()[0] == "no_scaling"


def test_json_gradebook_and_usage_errors(cohort):
    root, _ = cohort
    cache = json.loads((root / "gradebook.cache.json").read_text())
    rows = [Row.from_dict(cache["rows"][name]) for name in sorted(cache["rows"])]
    doc = gradebook_doc(gradebook_json(rows, [1, 3]))
    assert doc["schema_version"] == 1 and doc["exercises"] == [1, 3]
    carol = next(r for r in doc["rows"] if r["submission"] == "carol")
    assert [(e["number"], e["status"]) for e in carol["exercises"]] == [(1, "failed"), (3, "missing")]
    assert carol["exercises"][0]["diagnoses"][0] == "timeout" and carol["total"] == carol["exercises"][0]["score"]
    assert "verdict" not in carol["exercises"][0]  # the gradebook stays small; reports hold the details
    for args, words in ((("-o", root / "gb.txt"), ".csv or .json"), (("--exercises", "99"), "unknown exercise"),
                        (("--exercises", "4-2"), "empty exercise range")):
        bad = grade_here("batch", root / "subs", *args)
        assert bad.returncode == 2 and words in bad.stderr and bad.stderr.count("\n") == 1, bad.stderr
    empty = grade_here("batch", root / "no-such-folder")
    assert empty.returncode == 2 and "no such folder" in empty.stderr


def _fake_grader(task):
    """A pool worker that dies for one task, as a grading process might if something went badly wrong."""
    if task["name"] == "boom":
        os._exit(7)
    return [{"number": 1, "slug": "self_attention", "status": "passed", "score": 1, "max_score": 1}]


def test_a_dying_grading_process_spoils_only_its_own_submission():
    tasks = [{"name": n, "numbers": [1]} for n in ("ok1", "boom", "ok2", "ok3")]
    got = {}
    run_pool(tasks, 2, lambda task, results: got.__setitem__(task["name"], results), worker=_fake_grader,
             initializer=None)
    assert sorted(got) == ["boom", "ok1", "ok2", "ok3"]
    assert all(got[n][0]["status"] == "passed" for n in ("ok1", "ok2", "ok3"))
    assert got["boom"][0]["status"] == "error" and "grading process failed" in got["boom"][0]["note"]


def test_submission_layouts(tmp_path):
    exercises = select_exercises("1,3")
    top = tmp_path / "subs" / "top"
    top.mkdir(parents=True)
    (top / EX1.file).write_text("x = 1\n")
    (top / "exercises").mkdir()
    (top / "exercises" / EX1.file).write_text("x = 2\n")  # the top-level file wins
    (top / "deep" / "deeper").mkdir(parents=True)
    (top / "deep" / "deeper" / EX3.file).write_text("x = 3\n")  # two folders down: not looked at
    big = tmp_path / "subs" / "big.zip"
    _zip(big, {EX1.file: "#" * (MAX_FILE_BYTES + 10)})
    (tmp_path / "subs" / "notes.txt").write_text("not a submission")
    (tmp_path / "subs" / "broken.zip").write_bytes(b"PK\x03\x04 not really a zip")
    assert [p.name for p in discover(tmp_path / "subs")] == ["big.zip", "broken.zip", "top"]
    sub = open_submission(top, "top", tmp_path / "scratch-top", exercises)
    assert sub.files[1].read_text() == "x = 1\n" and 3 not in sub.files
    sub = open_submission(big, "big", tmp_path / "scratch-big", exercises)
    assert 1 not in sub.files and "larger than 1 MB" in sub.rejected[1]
    sub = open_submission(tmp_path / "subs" / "broken.zip", "broken", tmp_path / "scratch-broken", exercises)
    assert sub.problem.startswith("not a readable zip") and not sub.files
    with pytest.raises(UsageError):
        select_exercises("1,nope")
    assert [e.number for e in select_exercises("1,3-4,self_attention")] == [1, 3, 4]


def test_near_misses_notebooks_and_one_student_paths(tmp_path):
    exercises = select_exercises("1-3")
    sub = tmp_path / "subs" / "eve"
    (sub / "work" / "week1" / "final").mkdir(parents=True)
    (sub / "01_Self_Attention (1).py").write_text("x = 1\n")  # case and a " (1)" copy
    (sub / "work" / "week1" / "final" / EX3.file).write_text("x = 3\n")  # three folders down
    (sub / "02 scaled dot product.ipynb").write_text("{}")  # spaces, and a notebook
    found = open_submission(sub, "eve", tmp_path / "scratch", exercises)
    assert found.files == {} and found.near == {1: "01_Self_Attention (1).py",
                                                 2: "02 scaled dot product.ipynb",
                                                 3: f"work/week1/final/{EX3.file}"}
    (sub / "02_scaled_dot_product.ipynb").write_text(_notebook("def f():\n    return 2\n"))
    (sub / "03_causal_attention.ipynb").write_text("not json")
    found = open_submission(sub, "eve", tmp_path / "scratch", exercises)
    notebook = read_source(found.files[2])  # graded as a notebook, by the reader `grade exercise` uses
    assert notebook.text == "# %matplotlib inline\n\n\ndef f():\n    return 2\n" and found.files[2].parent == tmp_path / "scratch"
    assert notebook.where(1) == "cell 2, line 1" and notebook.where(4) == "cell 3, line 1"  # Markdown counts too
    assert "not a readable notebook" in found.rejected[3]
    with pytest.raises(UsageError, match="looks like one submission"):  # `grade batch subs/eve`
        run_batch(submissions_dir=sub, exercises="1-3", progress=False)
    (tmp_path / "handout" / "exercises").mkdir(parents=True)
    (tmp_path / "handout" / "exercises" / EX1.file).write_text("x = 1\n")
    with pytest.raises(UsageError, match="holds exercises/01_self_attention.py"):
        run_batch(submissions_dir=tmp_path / "handout", progress=False)


def _zip_of_many(path, entries: int, claimed: int | None = None) -> None:
    """A zip whose central directory lists `entries` headers (no file data), claiming `claimed` in its end records."""
    name = b"a.py"
    header = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0, 0)
    directory = (header + name) * entries
    count = entries if claimed is None else claimed
    end64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, len(directory), 0)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, len(directory), 1)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    path.write_bytes(directory + end64 + locator + end)


@pytest.mark.parametrize("claimed", [None, 1], ids=["honest-count", "lying-count"])
def test_a_zip_with_700000_entries_is_refused_before_it_is_parsed(tmp_path, claimed):
    """Attack 10: the entry count comes from the end records and a capped walk, not from parsing every entry."""
    bomb = tmp_path / "bomb.zip"
    _zip_of_many(bomb, 700_000, claimed)
    assert bomb.stat().st_size > 30 << 20
    tracemalloc.start()
    try:
        sub = open_submission(bomb, "bomb", tmp_path / "scratch", select_exercises("1"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sub.problem == f"the archive has more than {MAX_ZIP_ENTRIES} entries" and not sub.files
    assert peak < 4 << 20, f"refusing the archive took {peak >> 20} MiB"  # zipfile's 700 000 ZipInfos take ~400


def test_a_planted_link_in_the_output_folders_is_replaced_not_followed(tmp_path):
    """Attack 6: links and folders planted where the grader writes must not redirect or cost any output."""
    subs = tmp_path / "subs"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / "notes.txt").write_text("no exercise file: scored as missing, nothing to run")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out, reports = tmp_path / "out", tmp_path / "out" / "reports"
    reports.mkdir(parents=True)
    os.symlink(victim, reports / report_name("alice"))  # what a worker with write access would plant
    os.symlink(victim, reports / "index.html")
    (out / "gradebook.cache.json").mkdir()  # the cache's name taken by a folder
    result = run_batch(submissions_dir=subs, jobs=0, output=out / "gradebook.json", report_dir=reports,
                       exercises="1", progress=False)
    assert victim.read_text() == "precious"
    for name in (report_name("alice"), "index.html"):
        assert not (reports / name).is_symlink() and "<html" in (reports / name).read_text()
    doc = gradebook_doc(out / "gradebook.json")
    assert [r["submission"] for r in doc["rows"]] == ["alice"] and doc["rows"][0]["report"]
    assert len(result.problems) == 1 and "gradebook.cache.json" in result.problems[0]
    assert not [p for p in reports.iterdir() if p.name.endswith(".tmp")]
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "linked-reports")
    with pytest.raises(UsageError, match="symbolic link"):
        run_batch(submissions_dir=subs, jobs=0, report_dir=tmp_path / "linked-reports", exercises="1", progress=False)
    open_reports = tmp_path / "open"
    open_reports.mkdir(mode=0o777)
    open_reports.chmod(0o777)
    with pytest.raises(UsageError, match="writable by every user"):
        run_batch(submissions_dir=subs, jobs=0, report_dir=open_reports, exercises="1", progress=False)


# The shard tests grade a small cohort three times (~12 s): .ci/run's gated session runs them beside the README's
# shard recipes (tests/test_shard_recipe.py).
needs_cohort = pytest.mark.skipif(not os.environ.get("ATTENTION_KIT_COHORT_TESTS"),
                                  reason="grades a cohort whole and in shards: .ci/run (ATTENTION_KIT_COHORT_TESTS=1)")


@pytest.fixture(scope="module")
def small_cohort(tmp_path_factory):
    """Four submissions of exercise 1 (right, skeleton, missing, broken zip) and their unsharded gradebook."""
    root = tmp_path_factory.mktemp("shards")
    subs = root / "subs"
    for name, text in (("ana", EX1.solution_path.read_text()), ("ben", EX1.skeleton_path.read_text()),
                       ("cy", None)):
        (subs / name).mkdir(parents=True)
        if text:
            (subs / name / EX1.file).write_text(text)
    (subs / "dee.zip").write_bytes(b"PK\x03\x04 broken")
    run_batch(submissions_dir=subs, jobs=0, output=root / "full.json", exercises="1", progress=False)
    return root


@needs_cohort
def test_shards_graded_apart_merge_into_the_unsharded_gradebook(small_cohort):
    root = small_cohort
    other = subprocess.Popen([*COMMAND, "batch", root / "subs", "--shard", "1/2", "-o", root / "part_1.json",
                              "--exercises", "1", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run_batch(submissions_dir=root / "subs", jobs=0, output=root / "part_2.json", exercises="1", progress=False,
              shard=(2, 2))  # meanwhile, the other shard here: a second machine
    _, err = other.communicate(timeout=300)
    assert other.returncode == 0, err
    parts = [gradebook_doc(root / f"part_{i}.json") for i in (1, 2)]
    names = [[r["submission"] for r in p["rows"]] for p in parts]
    assert names == [["ana", "ben", "cy"], ["dee"]] and all(p["shard"]["count"] == 2 for p in parts)
    merged = run_grade("merge", root / "part_2.json", root / "part_1.json", "-o", root / "merged.json")
    assert merged.returncode == 0, merged.stderr
    assert (root / "merged.json").read_text() == (root / "full.json").read_text()
    merge_gradebooks(parts=[root / f"part_{i}.json" for i in (1, 2)], output=root / "merged.csv")
    assert _rows(root / "merged.csv")["ana"]["ex1_status"] == "passed"


@needs_cohort
def test_merge_reports_missing_and_repeated_shards(small_cohort):
    root = small_cohort
    full = gradebook_doc(root / "full.json")
    for i, names in ((1, ["ana", "ben"]), (2, ["cy"]), (3, ["dee"])):
        part = {**full, "shard": {"index": i, "count": 3}, "rows": [r for r in full["rows"] if r["submission"] in names]}
        (root / f"p{i}.json").write_text(json.dumps(part))
    assert [r.submission for r in merge([root / f"p{i}.json" for i in (1, 2, 3)]).rows] == ["ana", "ben", "cy", "dee"]
    with pytest.raises(UsageError, match="missing shard 2/3"):
        merge([root / "p1.json", root / "p3.json"])
    with pytest.raises(UsageError, match="shard 1/3 given twice"):
        merge([root / "p1.json", root / "p1.json", root / "p2.json", root / "p3.json"])
    bad = run_grade("merge", root / "full.json", "-o", root / "x.json")
    assert bad.returncode == 2 and "whole (unsharded) run" in bad.stderr and bad.stderr.count("\n") == 1
    assert run_grade("batch", root / "subs", "--shard", "4/3", "-o", root / "p.json").returncode == 2


@needs_cohort
def test_merge_skips_the_batch_caches_a_glob_finds_and_says_what_else_is_not_a_part(small_cohort, tmp_path):
    """Issue 20: `grade merge part_*.json` also matched part_N.cache.json and refused with wrong advice."""
    root = small_cohort
    full = gradebook_doc(root / "full.json")
    for i, names in ((1, ["ana", "ben", "cy"]), (2, ["dee"])):
        part = {**full, "shard": {"index": i, "count": 2}, "rows": [r for r in full["rows"] if r["submission"] in names]}
        (tmp_path / f"part_{i}.json").write_text(json.dumps(part))
        (tmp_path / f"part_{i}.cache.json").write_bytes((root / "full.cache.json").read_bytes())  # a real cache
    glob = sorted(tmp_path.glob("part_*.json"))
    assert len(glob) == 4
    proc = grade_here("merge", *glob, "-o", tmp_path / "all.json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == f"grade: skipped 2 batch caches (not partial gradebooks): {glob[0]}, {glob[2]}\n"
    assert (tmp_path / "all.json").read_text() == (root / "full.json").read_text()
    (tmp_path / "all.csv").write_text("\ufeffsubmission,total\nana,3\n", encoding="utf-8")
    (tmp_path / "notes.json").write_text('{"schema_version": 1, "hello": []}')
    (tmp_path / "blob.json").write_bytes(b"\x89PNG\r\n")
    for name, says in (("all.csv", "is a CSV gradebook; merge reads the JSON parts"),
                       ("notes.json", "is not a gradebook of attention-kit"), ("blob.json", "is not JSON"),
                       ("part_1.cache.json", "only batch caches")):
        proc = grade_here("merge", tmp_path / name, "-o", tmp_path / "x.json")
        assert proc.returncode == 2 and says in proc.stderr and proc.stderr.count("\n") == 1, (name, proc.stderr)
        assert "--shard I/N -o part_I.json" in proc.stderr or name == "part_1.cache.json"


@needs_cohort
def test_a_report_that_fails_in_a_shard_never_costs_the_shard_its_data(small_cohort, tmp_path, monkeypatch):
    """The partial gradebook is written first and stays partial (it used to be rewritten without its shard)."""
    import grader.instructor.report as report

    root = small_cohort
    real = report.render_report

    def render(row, sources):
        if row.submission == "ana":
            raise ValueError("a template bug")
        return real(row, sources)

    monkeypatch.setattr(report, "render_report", render)
    for i in (1, 2):  # the batch cache of the unsharded run: nothing is graded again
        (tmp_path / f"part_{i}.cache.json").write_bytes((root / "full.cache.json").read_bytes())
    proc = grade_here("batch", root / "subs", "--shard", "1/2", "--exercises", "1", "-q", "-o", tmp_path / "part_1.json",
                      "--report-dir", tmp_path / "reports")
    assert proc.returncode == 0, proc.stderr
    part = gradebook_doc(tmp_path / "part_1.json")
    assert part.get("shard") == {"index": 1, "count": 2}
    assert "grade: warning: could not render the report of ana: ValueError" in proc.stderr
    assert {r["submission"]: bool(r["report"]) for r in part["rows"]} == {"ana": False, "ben": True, "cy": True}
    run_batch(submissions_dir=root / "subs", jobs=0, output=tmp_path / "part_2.json", exercises="1", progress=False,
              shard=(2, 2))
    merged = merge([tmp_path / "part_1.json", tmp_path / "part_2.json"])
    assert [(r.submission, r.total) for r in merged.rows] == [(r["submission"], r["total"])
                                                              for r in gradebook_doc(root / "full.json")["rows"]]


def test_a_name_with_a_newline_cannot_add_a_row_to_the_summary():
    """Red-team round 2 of issue 19: a folder named "mallory\\ncarol   24/24 ✓" printed a fake row."""
    from rich.console import Console

    from grader.instructor.gradebook import Row
    from grader.instructor.grading import ExerciseResult
    from grader.instructor.summary import summary_table

    row = Row("mallory\ncarol          24/24 ✓", "", [ExerciseResult(1, "self_attention", "failed", 3, 24, ["no_scaling"])])
    console = Console(width=80, record=True, force_terminal=False)
    console.print(summary_table([row], [1]))
    lines = [line for line in console.export_text().splitlines() if "carol" in line]
    assert len(lines) == 1 and "mallory" in lines[0] and "3/24" in lines[0], lines


def test_the_summary_ends_with_the_counts_and_where_the_files_went(tmp_path):
    from types import SimpleNamespace as NS

    from grader.instructor.summary import closing_lines, notes_line

    rows = [NS(digest="a", notes=["two candidates"]), NS(digest="b", notes=[]), NS(digest="", notes=[])]
    result = NS(rows=rows, graded=1, cached=1, elapsed_s=2.04, gradebook=tmp_path / "g.csv", reports=0, index=None)
    assert notes_line(rows) == ("1 submission has notes (ambiguous, refused or empty files): see the note column.")
    assert notes_line(rows[1:]) is None
    assert closing_lines(result, shard="1/2", report_dir=tmp_path) == [
        "\n2 submissions in shard 1/2: 1 graded, 1 unchanged since the last run, 1 in the roster without a "
        "submission, in 2.0 s.", f"gradebook:   {tmp_path / 'g.csv'}"]
