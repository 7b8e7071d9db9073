"""grade batch: folders and zips, a gradebook, reports, a cache, and submissions that cannot hurt each other."""
import csv
import json
import os
import stat
import zipfile

import pytest

from grader.catalog import load_catalog
from grader.instructor import UsageError, select_exercises
from grader.instructor.batch import Row, gradebook_json, run_pool
from grader.instructor.submissions import MAX_FILE_BYTES, discover, open_submission
from tests.conftest import CORPUS, run_grade

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
    proc = run_grade("batch", subs, "--jobs", "2", "-o", root / "gradebook.csv", "--report-dir", root / "reports",
                     "--exercises", "1,3", "--timeout", "6", timeout=300)
    return root, proc


def _rows(path):
    with open(path, newline="") as f:
        return {r["submission"]: r for r in csv.DictReader(f)}


def test_batch_runs_and_writes_one_row_per_submission(cohort):
    root, proc = cohort
    assert proc.returncode == 0, proc.stderr
    rows = _rows(root / "gradebook.csv")
    assert sorted(rows) == ["alice", "bob", "carol", "dave", "mallory"]
    assert list(rows["alice"])[:7] == ["submission", "total", "max_total", "ex1_status", "ex1_score", "ex1_max",
                                       "ex1_diagnoses"]
    assert "5/5" in proc.stderr  # the progress bar: submissions done / all
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


def test_archive_entries_never_land_outside(cohort):
    root, _ = cohort
    for folder in (root, root.parent, root.parent.parent):
        assert not (folder / EX3.file).exists()


def test_one_report_per_submission_self_contained_and_escaped(cohort):
    root, _ = cohort
    reports = sorted(p.name for p in (root / "reports").glob("*.html"))
    assert reports == ["alice.html", "bob.html", "carol.html", "dave.html", "mallory.html"]
    bob = (root / "reports" / "bob.html").read_text()
    assert "<script" not in bob and "&lt;script&gt;" in bob
    assert "mask_inverted" in bob and "<svg" in bob
    assert 'src="http' not in bob and "<link" not in bob
    carol = (root / "reports" / "carol.html").read_text()
    assert "missing" in carol and EX3.file in carol


def test_rerun_skips_unchanged_and_regrades_changed(cohort):
    root, _ = cohort
    args = ("batch", root / "subs", "-o", root / "gradebook.csv", "--report-dir", root / "reports",
            "--exercises", "1,3", "--timeout", "6")
    again = run_grade(*args, timeout=120)
    assert again.returncode == 0 and "0 graded, 5 unchanged" in again.stdout, again.stdout + again.stderr
    (root / "subs" / "alice" / EX3.file).write_text((CORPUS / "03" / "no_scaling.py").read_text())
    changed = run_grade(*args, "-q", timeout=200)
    assert changed.returncode == 0 and "1 graded, 4 unchanged" in changed.stdout, changed.stdout + changed.stderr
    alice = _rows(root / "gradebook.csv")["alice"]
    assert alice["ex3_status"] == "failed" and alice["ex3_diagnoses"].split()[0] == "no_scaling"


def test_json_gradebook_and_usage_errors(cohort):
    root, _ = cohort
    cache = json.loads((root / "gradebook.cache.json").read_text())
    rows = [Row.from_dict(cache["rows"][name]) for name in sorted(cache["rows"])]
    doc = json.loads(gradebook_json(rows, [1, 3]))
    assert doc["schema_version"] == 1 and doc["exercises"] == [1, 3]
    carol = next(r for r in doc["rows"] if r["submission"] == "carol")
    assert [(e["number"], e["status"]) for e in carol["exercises"]] == [(1, "failed"), (3, "missing")]
    assert carol["exercises"][0]["diagnoses"][0] == "timeout" and carol["total"] == carol["exercises"][0]["score"]
    assert "verdict" not in carol["exercises"][0]  # the gradebook stays small; reports hold the details
    for args, words in ((("-o", root / "gb.txt"), ".csv or .json"), (("--exercises", "99"), "unknown exercise"),
                        (("--exercises", "4-2"), "empty exercise range")):
        bad = run_grade("batch", root / "subs", *args)
        assert bad.returncode == 2 and words in bad.stderr and bad.stderr.count("\n") == 1, bad.stderr
    empty = run_grade("batch", root / "no-such-folder")
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
