"""The instructor's gradebook: weights, overrides, notes. Fast: rows are built by hand or the files are missing,
so nothing is graded in a sandbox."""
import csv
import io
import json

import msgspec
import pytest

from grader.catalog import load_catalog
from grader.instructor import UsageError
from grader.instructor.batch import batch_rubric, run_batch
from grader.instructor.gradebook import CacheJSON, Row, gradebook_csv, gradebook_json
from grader.instructor.grading import ExerciseResult
from grader.instructor.merge import merge_gradebooks
from grader.instructor.report import render_report
from grader.instructor.rubric import Rubric, apply, load_rubric, parse_weights, read_overrides, read_rubric
from tests.conftest import grade_here, gradebook_doc, run_grade

EX1, EX3 = load_catalog().get(1), load_catalog().get(3)


def _row(name: str, ex1: tuple[int, int], ex3: tuple[int, int]) -> Row:
    return Row(name, "", [ExerciseResult(1, EX1.slug, "failed", *ex1, ["no_scaling"]),
                          ExerciseResult(3, EX3.slug, "passed" if ex3[0] == ex3[1] else "failed", *ex3)])


def _csv(text: str) -> dict[str, dict]:
    assert text.startswith("\ufeff")
    return {r["submission"]: r for r in csv.DictReader(io.StringIO(text[1:]))}


def test_weights_scale_each_exercise_and_totals_use_them():
    rows = [_row("ana", (8, 24), (31, 31)), _row("ben", (1, 3), (0, 31))]
    assert apply(Rubric(parse_weights("1=10,causal_attention=20")), rows, [1, 3]) == []
    got = _csv(gradebook_csv(rows, [1, 3]))
    ana, ben = got["ana"], got["ben"]
    assert (ana["ex1_score"], ana["ex1_max"], ana["ex1_points"], ana["ex1_max_points"]) == ("8", "24", "3.33", "10")
    assert (ana["ex3_points"], ana["total"], ana["max_total"]) == ("20", "23.33", "30")
    assert (ana["raw_total"], ana["raw_max_total"]) == ("39", "55")
    assert (ben["ex1_points"], ben["total"]) == ("3.33", "3.33")  # 1/3 of 10, half up
    doc = gradebook_doc(gradebook_json(rows, [1, 3], rubric=Rubric({1: 10, 3: 20})))
    assert doc["rubric"]["weights"] == {"1": 10, "3": 20} and "half up" in doc["rubric"]["rounding"]
    first = doc["rows"][0]
    assert (first["total"], first["max_total"], first["raw_total"], first["raw_max_total"]) == (23.33, 30, 39, 55)
    assert [(e["score"], e["points"], e["max_points"]) for e in first["exercises"]] == [(8, 3.33, 10), (31, 20, 20)]
    html = render_report(rows[0], {})
    assert "23.33</strong>" in html and "39 / 55 checks" in html and "3.33 / 10 points" in html


def test_without_weights_points_are_the_checks():
    rows = [_row("ana", (8, 24), (31, 31))]
    apply(None, rows, [1, 3])
    ana = _csv(gradebook_csv(rows, [1, 3]))["ana"]
    assert (ana["total"], ana["max_total"], ana["ex1_points"], ana["raw_total"]) == ("39", "55", "8", "39")


@pytest.mark.parametrize("spec, message", [
    ("1=ten", "'ten' is not a number"), ("1=nan", "not a finite number"), ("1=-5", "cannot be negative"),
    ("99=10", "unknown exercise '99'"), ("1:10", "EXERCISE=POINTS"), (",", "EXERCISE=POINTS")])
def test_bad_weights_are_one_line_usage_errors(spec, message):
    with pytest.raises(UsageError, match=message):
        parse_weights(spec)


def test_a_rubric_file_and_its_checks(tmp_path):
    rubric = tmp_path / "rubric.toml"
    rubric.write_text('[weights]\n1 = 10\ncausal_attention = 20.5\n')
    assert read_rubric(rubric) == {1: 10.0, 3: 20.5}
    assert load_rubric(weights="3=5", rubric=rubric).weights == {1: 10.0, 3: 5.0}  # --weights wins
    (tmp_path / "typo.toml").write_text('[weight]\n1 = 10\n')
    with pytest.raises(UsageError, match="unknown key 'weight'"):
        read_rubric(tmp_path / "typo.toml")
    (tmp_path / "bool.toml").write_text('[weights]\n1 = true\n')
    with pytest.raises(UsageError, match="not a number"):
        read_rubric(tmp_path / "bool.toml")
    with pytest.raises(UsageError, match="no weight for exercise 3"):
        Rubric({1: 10}).check([1, 3])
    with pytest.raises(UsageError, match="exercise 4, which this batch does not grade"):
        Rubric({1: 10, 3: 1, 4: 2}).check([1, 3])


def test_cli_refuses_bad_weights_before_grading(tmp_path):
    (tmp_path / "subs" / "ana").mkdir(parents=True)
    for args in (["--weights", "1=abc"], ["--exercises", "1,3", "--weights", "1=3"]):
        proc = run_grade("batch", tmp_path / "subs", "-o", tmp_path / "gb.csv", *args)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "gb.csv").exists()


OVERRIDES_TOML = '''
[[override]]
submission = "José Ñúñez"
exercise = 1
points = 9
comment = "the scaling was explained in the viva"

[[override]]
submission = "ben"
exercise = "causal_attention"
delta = -2.5
comment = "=HYPERLINK(\\"http://x\\") <b>late</b>"
'''


def test_overrides_from_toml_or_csv_with_comments_everywhere(tmp_path):
    (tmp_path / "o.toml").write_text(OVERRIDES_TOML)
    (tmp_path / "o.csv").write_text("\ufeffSubmission,exercise,points,delta,comment\n"
                                    "José Ñúñez,1,9,,the scaling was explained in the viva\n"
                                    'ben,3,,-2.5,"=HYPERLINK(""http://x"") <b>late</b>"\n', encoding="utf-8")
    for name in ("o.toml", "o.csv"):
        overrides = read_overrides(tmp_path / name)
        assert [(o.submission, o.exercise, o.points, o.delta) for o in overrides] == \
            [("José Ñúñez", 1, 9.0, None), ("ben", 3, None, -2.5)]
        nfd = "Jose\u0301 N\u0303u\u0301n\u0303ez"  # the same name as a Mac writes it
        rows = [_row(nfd, (8, 24), (31, 31)), _row("ben", (24, 24), (31, 31))]
        assert apply(Rubric({1: 10, 3: 20}, overrides), rows, [1, 3]) == []
        got = _csv(gradebook_csv(rows, [1, 3]))
        jose, ben = got[nfd], got["ben"]
        assert (jose["ex1_points"], jose["total"]) == ("9", "29")
        assert jose["overrides"] == "ex1: set to 9 (was 3.33): the scaling was explained in the viva"
        assert (ben["ex3_points"], ben["total"]) == ("17.5", "27.5")
        assert ben["overrides"].startswith("ex3: -2.5 (was 20): =HYPERLINK")  # not the cell's start: no formula
        doc = gradebook_doc(gradebook_json(rows, [1, 3], rubric=Rubric({1: 10, 3: 20}, overrides)))
        ex3 = next(r for r in doc["rows"] if r["submission"] == "ben")["exercises"][1]
        assert ex3["override"] == {"points": None, "delta": -2.5, "comment": '=HYPERLINK("http://x") <b>late</b>',
                                   "before": 20.0} and ex3["points"] == 17.5
        html = render_report(rows[1], {})
        assert "Points changed by hand: ex3: -2.5 (was 20): =HYPERLINK(&#34;http://x&#34;) &lt;b&gt;late&lt;/b&gt;" in html
        assert "<b>late" not in html


@pytest.mark.parametrize("text, message", [
    ("submission,exercise,comment\nana,1,x\n", "points or delta"),
    ("submission,exercise,points,delta\nana,1,3,1\n", "either points .* or delta"),
    ("submission,exercise,points\nana,99,3\n", "line 2: unknown exercise '99'"),
    ("submission,exercise,points\nana,1,lots\n", "line 2 points: 'lots' is not a number"),
    ("submission,exercise,points\nana,1,3\nana,self_attention,4\n", "line 3: ana exercise 1 is overridden twice"),
    ("submission,exercise,points,bonus\nana,1,3,1\n", "unknown column 'bonus'")])
def test_bad_override_files_are_usage_errors(tmp_path, text, message):
    (tmp_path / "o.csv").write_text(text)
    with pytest.raises(UsageError, match=message):
        read_overrides(tmp_path / "o.csv")


def test_an_override_for_nobody_is_reported_not_dropped(tmp_path):
    (tmp_path / "o.csv").write_text("submission,exercise,points\nzed,1,3\nana,4,2\nana,1,5\n")
    rows = [_row("ana", (8, 24), (31, 31))]
    unapplied = apply(Rubric({}, read_overrides(tmp_path / "o.csv")), rows, [1, 3])
    assert unapplied == [f"{tmp_path / 'o.csv'} line 2: no submission named 'zed'; override not applied",
                         f"{tmp_path / 'o.csv'} line 3: exercise 4 is not graded in this batch; override not applied"]
    assert rows[0].points == 5 + 31
    # in a shard, a name graded by another shard is not unknown
    assert apply(Rubric({}, read_overrides(tmp_path / "o.csv")), rows, [1, 3], elsewhere={"zed"})[1:] == []


def _missing_cohort(root):
    """Submissions whose files are all missing: run_batch grades nothing in a sandbox, yet writes every output."""
    for name in ("ana", "ben", "cy", "dee"):
        (root / "subs" / name).mkdir(parents=True)
    (root / "o.toml").write_text('[[override]]\nsubmission = "ben"\nexercise = 1\npoints = 7\ncomment = "oral exam"\n')


def test_overrides_survive_the_cache_and_merge(tmp_path):
    _missing_cohort(tmp_path)
    opts = dict(submissions_dir=tmp_path / "subs", jobs=0, exercises="1", progress=False,
                course=batch_rubric(exercises="1", weights="1=10", overrides=tmp_path / "o.toml"))
    first = run_batch(output=tmp_path / "gb.json", **opts)
    again = run_batch(output=tmp_path / "gb.json", **opts)
    assert (first.graded, again.graded, again.cached) == (4, 0, 4)
    cache = json.loads((tmp_path / "gb.cache.json").read_text(encoding="utf-8"))
    assert set(msgspec.convert(cache, CacheJSON, strict=True).rows) == {"ana", "ben", "cy", "dee"}, cache
    doc = gradebook_doc(tmp_path / "gb.json")
    ben = next(r for r in doc["rows"] if r["submission"] == "ben")
    assert (ben["total"], ben["max_total"], ben["overrides"]) == (7, 10, ["ex1: set to 7 (was 0): oral exam"])
    for i in (1, 2):
        run_batch(output=tmp_path / f"part_{i}.json", shard=(i, 2), **opts)
    merge_gradebooks(parts=[tmp_path / "part_1.json", tmp_path / "part_2.json"], output=tmp_path / "merged.json")
    assert (tmp_path / "merged.json").read_text() == (tmp_path / "gb.json").read_text()
    (tmp_path / "o2.csv").write_text("submission,exercise,delta,comment\nben,1,1,recount\n")
    merge_gradebooks(parts=[tmp_path / "part_1.json", tmp_path / "part_2.json"], output=tmp_path / "m.csv",
                     overrides=tmp_path / "o2.csv", weights="1=20")
    ben = _csv((tmp_path / "m.csv").read_text(encoding="utf-8"))["ben"]
    assert (ben["total"], ben["max_total"], ben["overrides"]) == ("1", "20", "ex1: +1 (was 0): recount")


def _zip(path, entries: dict, links: dict | None = None):
    import stat
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for name, text in entries.items():
            z.writestr(name, text)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)


def test_ambiguities_and_refusals_are_noted(tmp_path):
    from grader.instructor import select_exercises
    from grader.instructor.submissions import open_submission

    exercises = select_exercises("1,3")
    eve = tmp_path / "eve"
    (eve / "exercises").mkdir(parents=True)
    (eve / EX1.file).write_text("x = 1\n")
    (eve / "01_self_attention.ipynb").write_text("{}")  # a .py next to a notebook: the .py is graded
    (eve / "exercises" / EX3.file).write_text("x = 3\n")
    (eve / "old").mkdir()
    (eve / "old" / EX3.file).write_text("x = 0\n")  # the same file twice, one folder down
    (eve / "linked").symlink_to(tmp_path)  # a folder link: never followed, and said so
    sub = open_submission(eve, "eve", tmp_path / "scratch", exercises)
    assert sub.files[1].read_text() == "x = 1\n" and sub.files[3].read_text() == "x = 3\n"
    assert sub.notes == ["linked/ is a symbolic link to a folder; not looked into",
                         "ex1: 01_self_attention.py graded; also found 01_self_attention.ipynb, not graded",
                         "ex3: exercises/03_causal_attention.py graded; also found old/03_causal_attention.py, "
                         "not graded"]
    _zip(tmp_path / "z.zip", {EX1.file: "a = 1\n", f"../{EX3.file}": "b = 1\n"}, links={EX3.file: "/etc/passwd"})
    with __import__("zipfile").ZipFile(tmp_path / "z.zip", "a") as z:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Duplicate name": what a hand-made archive can hold
            z.writestr(EX1.file, "a = 2\n")
    sub = open_submission(tmp_path / "z.zip", "z", tmp_path / "scratch-z", exercises)
    assert sub.files[1].read_text() == "a = 2\n" and 3 not in sub.files
    assert sub.notes == [f"../{EX3.file} points outside the archive; refused",
                         f"{EX3.file} is a symbolic link in the archive; refused",
                         f"{EX1.file} is in the archive twice; the last copy was taken"]


def test_the_note_column_says_why(tmp_path):
    subs = tmp_path / "subs"
    (subs / "alice").mkdir(parents=True)
    (subs / "alice" / "01_Self_Attention (1).py").write_text("x = 1\n")
    _zip(subs / "alice.zip", {"README.md": "mine"})
    _zip(subs / "empty.zip", {})
    (subs / "ghost").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (subs / "bob").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (subs / "cy").mkdir()
    (subs / "cy" / EX1.file).write_bytes(b"#" * ((1 << 20) + 1))
    (subs / "dee").mkdir()
    (subs / "dee" / EX1.file).symlink_to(EX1.solution_path)
    run_batch(submissions_dir=subs, jobs=0, exercises="1", progress=False, output=tmp_path / "gb.csv")
    got = _csv((tmp_path / "gb.csv").read_text(encoding="utf-8"))
    assert sorted(got) == ["alice", "alice.zip", "bob", "cy", "dee", "empty", "ghost"]
    assert got["alice"]["note"].startswith("alice and alice.zip are both named 'alice': each is graded as its own")
    assert "did you mean 01_Self_Attention (1).py?" in got["alice"]["note"]
    assert got["alice.zip"]["note"].startswith("alice.zip and alice are both named 'alice'")
    assert got["empty"]["note"].startswith("the archive is empty; ex1: no 01_self_attention.py")
    assert got["ghost"]["note"].startswith("the folder is empty; ex1: no 01_self_attention.py")
    assert got["bob"]["problem"] == "bob is a symbolic link; only real folders and .zip files are graded"
    assert got["cy"]["note"] == "ex1: 01_self_attention.py is larger than 1 MB"
    assert got["dee"]["note"] == "ex1: 01_self_attention.py is a symbolic link; only regular files are graded"
    doc = gradebook_doc(gradebook_json(run_batch(submissions_dir=subs, jobs=0, exercises="1", progress=False).rows, [1]))
    empty = next(r for r in doc["rows"] if r["submission"] == "empty")
    assert empty["notes"][0] == "the archive is empty"


ROSTER = ("submission,id,email,name,canvas_id,section\n"
          "José Ñúñez,s001,jose@uni.example,\"Núñez, José\",101,A\n"
          "ben,s002,ben@uni.example,\"Bell, Ben\",,B\n"
          "Cy Young,s003,,\"Young, Cy\",103,A\n"
          "Dee,,dee@uni.example,\"=cmd|' /C calc'!A0\",,B\n"
          "Eve Absent,s005,eve@uni.example,\"Absent, Eve\",105,A\n")


def test_roster_columns_notes_and_canvas_export(tmp_path):
    from grader.instructor.roster import read_roster

    subs = tmp_path / "subs"
    for name in ("Jose\u0301 N\u0303u\u0301n\u0303ez", "ben", "cy_young", "dee", "zed"):
        (subs / name).mkdir(parents=True)
    (tmp_path / "roster.csv").write_text(ROSTER, encoding="utf-8")
    roster = read_roster(tmp_path / "roster.csv")
    result = run_batch(submissions_dir=subs, jobs=0, exercises="1", progress=False, output=tmp_path / "gb.csv",
                       roster=roster, canvas=tmp_path / "canvas.csv", assignment="Attention take-home",
                       course=batch_rubric(exercises="1", weights="1=10",
                                           overrides=_write(tmp_path / "o.csv", "submission,exercise,points\nben,1,6\n")))
    got = _csv((tmp_path / "gb.csv").read_text(encoding="utf-8"))
    assert list(next(iter(got.values())))[:6] == ["submission", "id", "email", "name", "total", "max_total"]
    assert got["ben"]["id"] == "s002" and got["ben"]["email"] == "ben@uni.example" and got["ben"]["total"] == "6"
    jose = got["Jose\u0301 N\u0303u\u0301n\u0303ez"]
    assert jose["id"] == "s001" and "roster" not in jose["note"]  # the same name, as a Mac writes it
    assert got["cy_young"]["id"] == "s003"
    assert "; matched the roster's 'Cy Young' ignoring case, accents and punctuation; " in got["cy_young"]["note"]
    assert got["dee"]["name"] == "'=cmd|' /C calc'!A0"  # a roster cell is escaped like any other
    assert got["zed"]["id"] == "" and "; not in the roster; " in got["zed"]["note"]
    eve = got["Eve Absent"]
    assert (eve["id"], eve["total"], eve["problem"]) == ("s005", "0", "in the roster, but no submission was found")
    assert result.problems == ["dee: no Canvas, SIS or institution ID in the roster; left out of canvas.csv",
                               "zed: no Canvas, SIS or institution ID in the roster; left out of canvas.csv"]
    lines = (tmp_path / "canvas.csv").read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["Student,ID,SIS User ID,SIS Login ID,Section,Attention take-home",
                         "    Points Possible,,,,,10"]
    assert lines[2:] == ['"Absent, Eve",105,s005,,A,0', '"Núñez, José",101,s001,,A,0', '"Bell, Ben",,s002,,B,6',
                         '"Young, Cy",103,s003,,A,0']


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_roster_and_canvas_usage_errors(tmp_path):
    from grader.instructor.roster import match, read_roster

    for text, message in (("name,id\nx,1\n", "names the columns: submission"),
                          ("submission,id\nann,1\nann,2\n", "'ann' is in the roster twice")):
        with pytest.raises(UsageError, match=message):
            read_roster(_write(tmp_path / "r.csv", text))
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    with pytest.raises(UsageError, match="--canvas needs --roster"):
        run_batch(submissions_dir=tmp_path / "subs", jobs=0, exercises="1", progress=False, canvas=tmp_path / "c.csv")
    roster = read_roster(_write(tmp_path / "r.csv", "submission,id\nAnn Lee,1\nann lee,2\n"))
    found, notes = match(["ann_lee"], roster)
    assert found == {} and notes["ann_lee"] == "not in the roster as written; it could be 'Ann Lee' or 'ann lee'"


def test_a_flat_lms_download_is_grouped_by_student(tmp_path):
    from grader.instructor import select_exercises
    from grader.instructor.submissions import flat_groups, open_flat

    dl = tmp_path / "download"
    dl.mkdir()
    for name, text in (("doejane_1234_5678_01_self_attention.py", "a = 1\n"),
                       ("doejane_LATE_1234_5678_03_causal_attention.py", "c = 0\n"),
                       ("doejane_LATE_1234_5678_03_causal_attention-2.py", "c = 2\n"),  # the latest resubmission
                       ("doejane_LATE_1234_5678_03_causal_attention-1.py", "c = 1\n"),
                       ("smithjohn_2222_5680_01_Self_Attention.py", "s = 1\n"),  # a near miss
                       ("smithjohn_3333_5681_01_self_attention.ipynb", "{}"),  # another John Smith
                       ("readme.py", "r = 1\n")):
        (dl / name).write_text(text)
    groups, strays = flat_groups(dl, taken={"doejane"})
    assert [g.name for g in groups] == ["doejane_1234", "smithjohn_2222", "smithjohn_3333"]
    assert [(s.name, s.why, s.row) for s in strays] == [
        ("readme.py", "readme.py is not named as an LMS download names its files "
                      "(lastfirst_userid_submissionid_file); not graded", True)]
    jane = open_flat(groups[0], dl, tmp_path / "s0", select_exercises("1,3"))
    assert jane.files[1].read_text() == "a = 1\n" and jane.files[3].read_text() == "c = 2\n"
    assert jane.notes == ["another submission is also named 'doejane'; this one is LMS user 1234",
                          "doejane_LATE_1234_5678_03_causal_attention-2.py graded as 03_causal_attention.py; also "
                          "found doejane_LATE_1234_5678_03_causal_attention.py, "
                          "doejane_LATE_1234_5678_03_causal_attention-1.py, not graded"]
    john = open_flat(groups[1], dl, tmp_path / "s1", select_exercises("1"))
    assert john.files == {} and john.near == {1: "01_Self_Attention.py"}
    for path in dl.glob("doejane_*"):  # the batch below grades nothing in a sandbox: fast
        path.unlink()
    result = run_batch(submissions_dir=dl, jobs=0, exercises="1", progress=False, output=tmp_path / "gb.csv")
    got = _csv((tmp_path / "gb.csv").read_text(encoding="utf-8"))
    assert sorted(got) == ["readme.py", "smithjohn_2222", "smithjohn_3333"]  # the stray has a row: never dropped
    assert got["smithjohn_3333"]["ex1_status"] == "rejected" and "not a readable notebook" in got["smithjohn_3333"]["note"]
    assert "did you mean 01_Self_Attention.py?" in got["smithjohn_2222"]["note"]
    assert got["readme.py"]["problem"] == strays[0].why and result.problems == []


def test_anonymize_gives_stable_pseudonyms_and_leaks_no_name(tmp_path):
    import os
    import stat

    from grader.instructor.anonymize import load_key, pseudonym

    key, path, created = load_key(tmp_path / "keys" / "review.key")
    assert created and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert load_key(path) == (key, path, False) and pseudonym(key, "Jose\u0301") == pseudonym(key, "José")
    os.chmod(path, 0o644)
    with pytest.raises(UsageError, match="only you can read"):
        load_key(path)
    os.chmod(path, 0o600)
    subs = tmp_path / "subs"
    (subs / "José Ñúñez").mkdir(parents=True)
    (subs / "José Ñúñez" / "01_Self_Attention (1).py").write_text("x = 1\n")  # a near miss, noted
    _zip(subs / "Zoë Quist.zip", {"zoë quist final/work/deeper/01_self_attention.py": "x = 1\n"})
    (subs / "smithjohn_4242_77_01_self_attention.ipynb").write_text("not json")  # an LMS download's file
    out = tmp_path / "out"
    run_batch(submissions_dir=subs, jobs=0, exercises="1", progress=False, output=out / "gb.json",
              report_dir=out / "reports", key=key)
    names = sorted(r["submission"] for r in gradebook_doc(out / "gb.json")["rows"])
    assert names == sorted(pseudonym(key, n) for n in ("José Ñúñez", "Zoë Quist", "smithjohn"))
    assert all(n.startswith("anon-") for n in names)
    written = {p.name: p.read_text(encoding="utf-8").lower() for p in out.rglob("*") if p.is_file()}
    assert len(written) == 6  # gradebook, cache, three reports, the cohort page
    for name, text in written.items():
        for secret in ("josé", "jose", "ñúñez", "zoë", "quist", "smithjohn", "4242"):
            assert secret not in name and secret not in text, (name, secret)
    assert any("did you mean" in text for text in written.values())  # the note is kept, its names are not
    again = run_batch(submissions_dir=subs, jobs=0, exercises="1", progress=False, output=out / "gb.json", key=key)
    assert again.cached == 3 and sorted(r.submission for r in again.rows) == names
    with pytest.raises(UsageError, match="blind review"):
        run_batch(submissions_dir=subs, jobs=0, exercises="1", progress=False, key=key, roster={})


def test_a_sharded_cohort_with_a_roster_merges_into_the_same_gradebook_and_canvas_file(tmp_path):
    from grader.instructor.roster import read_roster

    _missing_cohort(tmp_path)
    roster = read_roster(_write(tmp_path / "roster.csv", "submission,id,name\nana,s1,\"A, Ana\"\nben,s2,\"B, Ben\"\n"
                                                         "zoe,s9,\"Z, Zoe\"\n"))
    opts = dict(submissions_dir=tmp_path / "subs", jobs=0, exercises="1", progress=False, roster=roster)
    run_batch(output=tmp_path / "full.json", canvas=tmp_path / "full.csv", **opts)
    for i in (1, 2):
        run_batch(output=tmp_path / f"part_{i}.json", shard=(i, 2), **opts)
    with pytest.raises(UsageError, match="pass it to `grade merge`"):
        run_batch(output=tmp_path / "p.json", shard=(1, 2), canvas=tmp_path / "c.csv", **opts)
    merged = merge_gradebooks(parts=[tmp_path / "part_1.json", tmp_path / "part_2.json"],
                              output=tmp_path / "merged.json", canvas=tmp_path / "merged.csv")
    assert (tmp_path / "merged.json").read_text() == (tmp_path / "full.json").read_text()
    assert (tmp_path / "merged.csv").read_text() == (tmp_path / "full.csv").read_text()
    assert merged.unapplied == ["cy: no Canvas, SIS or institution ID in the roster; left out of merged.csv",
                                "dee: no Canvas, SIS or institution ID in the roster; left out of merged.csv"]
    zoe = next(r for r in gradebook_doc(tmp_path / "full.json")["rows"] if r["submission"] == "zoe")
    assert zoe["person"]["id"] == "s9" and zoe["problem"] == "in the roster, but no submission was found"


def _part(tmp_path, index: int, count: int, change=None):
    """A partial gradebook of two hand-built rows, written as part_INDEX.json (change: edits its parsed form)."""
    rows = [_row("ana", (8, 24), (31, 31)), _row("ben", (1, 3), (0, 31))]
    doc = gradebook_doc(gradebook_json(rows, [1, 3], (index, count)))
    if change:
        change(doc)
    path = tmp_path / f"part_{index}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("change, says", [
    (lambda d: d["rows"][0]["exercises"][0].update(score="8"), "rows[0].exercises[0].score: must be int, not str"),
    (lambda d: d["rows"][1]["exercises"][1].update(status="maybe"),
     "rows[1].exercises[1].status: 'maybe' is not one of passed, failed, not_started, missing, rejected, error"),
    (lambda d: d["rows"][0].update(surprise=1), "rows[0].surprise: unknown key (known: submission, person, total,"),
    (lambda d: d["rows"][1].pop("exercises"), "rows[1].exercises: missing"),
    (lambda d: d["shard"].update(count="2"), "shard.count: must be int, not str"),
    (lambda d: d["rubric"]["overrides"].append({"submission": "ana"}), "rubric.overrides[0].exercise: missing"),
])
def test_a_malformed_part_is_one_line_naming_the_file_and_the_key(tmp_path, change, says):
    part = _part(tmp_path, 1, 1, change)
    with pytest.raises(UsageError) as err:
        merge_gradebooks(parts=[part], output=tmp_path / "merged.json")
    assert str(err.value).startswith(f"{part}: {says}") and "\n" not in str(err.value), str(err.value)
    proc = grade_here("merge", part, "-o", tmp_path / "merged.json")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr


def test_hand_built_shards_merge_into_the_whole_gradebook(tmp_path):
    from grader.instructor.gradebook import in_shard

    names = ["ana", "ben", "cy", "José Ñúñez", "=sum(1)"]
    rows = [_row(name, (i, 24), (31 - i, 31)) for i, name in enumerate(names)]
    rows[1].person, rows[2].notes = {"id": "7", "email": "b@x", "name": "Ben"}, ["two files"]
    course = Rubric({1: 10, 3: 20.5})
    apply(course, rows, [1, 3])
    whole = gradebook_json(rows, [1, 3], rubric=course)
    parts = []
    for i in (1, 2, 3):
        mine = [r for r in rows if in_shard(r.submission, (i, 3))]
        parts.append(tmp_path / f"part_{i}.json")
        text = gradebook_json(mine, [1, 3], (i, 3), course, apply(course, mine, [1, 3]))
        parts[-1].write_text(text, encoding="utf-8")
        assert gradebook_doc(parts[-1])["shard"] == {"index": i, "count": 3}
    merge_gradebooks(parts=parts, output=tmp_path / "merged.json")
    merged = gradebook_doc(tmp_path / "merged.json")
    assert [r["submission"] for r in merged["rows"]] == sorted(names)
    assert merged["rows"] == json.loads(whole)["rows"] and "shard" not in merged


def test_the_cache_keeps_what_has_its_shape_and_says_what_it_dropped():
    from grader.instructor.gradebook import CacheEntry, cache_text, load_cache

    good = _row("ana", (8, 24), (31, 31))
    good.digest = "d1"
    good.exercises[0].verdict = {"largest_difference": float("nan")}  # json writes NaN; the cache must read it back
    text = json.loads(cache_text([good], {}))
    text["rows"]["ben"] = {**text["rows"]["ana"], "submission": "ben", "total": "8"}
    problems = []
    entries = load_cache(json.dumps(text).encode(), "gb.cache.json", problems)
    assert list(entries) == ["ana"] and isinstance(entries["ana"], CacheEntry)
    assert entries["ana"].row().exercises[1] == good.exercises[1] and entries["ana"].row().total == good.total
    assert problems == ["gb.cache.json: rows['ben'].total: must be int, not str; graded again"]
    assert cache_text([], entries) == cache_text([good], {})  # kept as it was
    for data, said in ((b"{not json", "gb.cache.json is not JSON"), (b'{"schema": 99, "rows": {}}', None),
                       (b'{"schema": 1, "rows": []}', "gb.cache.json: rows: must be object, not array")):
        problems = []
        assert load_cache(data, "gb.cache.json", problems) == {}
        assert problems == ([] if said is None else [f"{said}; every submission is graded again"]), problems


def _zip_named(path, names: list[str]) -> None:
    """A zip whose entries carry exactly these names, even ones zipfile would not write ("", "\\0")."""
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for name in names:
            info = zipfile.ZipInfo("placeholder")
            info.filename = name
            z.writestr(info, "x = 1\n")


@pytest.mark.parametrize("bad", ["", "\0", f"{EX1.file}\0.txt", "mallory/\0"],
                         ids=["empty", "nul", "nul-suffix", "folder-nul"])
def test_a_zip_entry_with_an_empty_or_nul_name_rejects_only_its_own_submission(tmp_path, bad):
    """Red team: an entry named "" or "\\0" (zipfile cuts names at NUL) was an IndexError that ended the whole
    batch and `grade similarity` with no gradebook; now it is that candidate's rejected row."""
    from grader.instructor.similarity import similarity_report

    subs = tmp_path / "subs"
    (subs / "ana").mkdir(parents=True)
    (subs / "ana" / "notes.txt").write_text("nothing to run")
    _zip_named(subs / "mallory.zip", [f"mallory/{EX1.file}", bad])
    run_batch(submissions_dir=subs, jobs=0, exercises="1", progress=False, output=tmp_path / "gb.csv")
    got = _csv((tmp_path / "gb.csv").read_text(encoding="utf-8"))
    assert sorted(got) == ["ana", "mallory"]
    assert got["mallory"]["problem"] == ("not a readable zip archive (ValueError: an entry has an empty name "
                                         "or one holding a NUL character)")
    assert got["mallory"]["ex1_status"] == "rejected" and got["ana"]["ex1_status"] == "missing"
    report = similarity_report(submissions_dir=subs, exercises="1", jobs=1)
    assert report.skipped == [f"mallory: {got['mallory']['problem']}"]


def test_a_submission_that_cannot_be_read_at_all_is_its_own_row(tmp_path, monkeypatch):
    """Whatever reading one submission raises is that submission's problem, never the batch's."""
    import grader.instructor.submissions as submissions

    subs = tmp_path / "subs"
    for name in ("ana", "ben"):
        (subs / name).mkdir(parents=True)
    real = submissions._folder_entries

    def entries(root, depth=submissions.MAX_DEPTH):
        if root.name == "ben":
            raise IndexError("string index out of range")
        return real(root, depth)

    monkeypatch.setattr(submissions, "_folder_entries", entries)
    run_batch(submissions_dir=subs, jobs=0, exercises="1", progress=False, output=tmp_path / "gb.csv")
    got = _csv((tmp_path / "gb.csv").read_text(encoding="utf-8"))
    assert got["ben"]["problem"] == "could not be read (IndexError: string index out of range)"
    assert got["ben"]["ex1_status"] == "rejected" and got["ana"]["ex1_status"] == "missing"


def test_names_a_submission_controls_are_shown_escaped_in_every_output(tmp_path):
    """Red team: a folder named b"bad\\xffname" ended the batch with UnicodeEncodeError after grading everything;
    ESC from a folder or an entry name landed raw in the CSV. Names are escaped where they are read, so
    that "\\x1b[32mok\\x1b[0m" shows what it is and can never pass for (or overwrite) the row of "ok"."""
    import os

    from grader.instructor.summary import summary_table
    from rich.console import Console

    subs = tmp_path / "subs"
    subs.mkdir()
    os.mkdir(os.fsencode(subs) + b"/bad\xffname")
    os.mkdir(os.fsencode(subs) + b"/bad\xffname/\xfe")
    (subs / os.fsdecode(b"bad\xffname/\xfe") / "01_Self_Attention (1).py").write_text("x = 1\n")
    (subs / "\x1b[32mok\x1b[0m").mkdir()
    (subs / "ok").mkdir()
    (subs / "\u202eevil").mkdir()
    _zip(subs / "eve.zip", {f"eve/../../\x1b[2Jescape.py": "x = 1\n", "eve/\x07bell/readme.md": "hi"})
    escaped = {"bad\\xffname", "\\x1b[32mok\\x1b[0m", "ok", "\\u202eevil", "eve"}
    result = run_batch(submissions_dir=subs, jobs=0, exercises="1", progress=False, output=tmp_path / "gb.csv",
                       report_dir=tmp_path / "reports")
    raw = (tmp_path / "gb.csv").read_bytes().decode("utf-8")  # it encodes, and holds no control character
    assert not [c for c in raw if c < " " and c not in "\n" or "\x7f" <= c <= "\x9f" or c == "\u202e"]
    got = _csv(raw)
    assert set(got) == escaped
    assert got["eve"]["note"].startswith("eve/../../\\x1b[2Jescape.py points outside the archive; refused")
    assert "did you mean \\xfe/01_Self_Attention (1).py?" in got["bad\\xffname"]["note"]
    doc = gradebook_doc(gradebook_json(result.rows, [1]))
    assert {r["submission"] for r in doc["rows"]} == escaped
    assert len(result.reports) == 5 and (tmp_path / "reports" / "index.html").is_file()
    out = Console(file=io.StringIO(), width=80, color_system=None)
    out.print(summary_table(result.rows, [1]))
    assert "\x1b" not in out.file.getvalue() and "\\x1b[32mok" in out.file.getvalue()


def test_the_csv_and_json_gradebooks_clean_what_a_submission_wrote():
    """Notes and problems reach the gradebook from many places: each cell is cleaned, formulas still neutralised."""
    row = _row("ana\x1b[2J", (1, 24), (0, 31))
    row.notes = ["eve/\x1b]0;pwned\x07x.py points outside the archive; refused"]
    row.problem = "=HYPERLINK(\"http://x\")\x1b[31m bad \udcff"
    row.exercises[0].note = "said \x1b[1mloud\x9b2J\u202e"
    got = _csv(gradebook_csv([row], [1, 3]))["ana"]
    assert got["note"] == "eve/x.py points outside the archive; refused; ex1: said loud"
    assert got["problem"] == "'=HYPERLINK(\"http://x\") bad \\xff"
    doc = gradebook_doc(gradebook_json([row], [1, 3]))
    r = doc["rows"][0]
    assert (r["submission"], r["problem"], r["exercises"][0]["note"]) == \
        ("ana", "=HYPERLINK(\"http://x\") bad \\xff", "said loud")
    assert r["notes"] == ["eve/x.py points outside the archive; refused", "ex1: said loud"]


def test_files_of_a_flat_download_that_are_not_understood_are_rows_or_warnings_never_dropped(tmp_path):
    """Red team: _1234_5678_01_self_attention.py (no name part) and doejane__5678_... (no user id) vanished."""
    dl = tmp_path / "download"
    dl.mkdir()
    for name in ("_1234_5678_01_self_attention.py", "doejane__5678_01_self_attention.py",
                 "smithbob_111_222_01_Self_Attention.py", "roster.txt", ".DS_Store"):
        (dl / name).write_text("x = 1\n")
    result = run_batch(submissions_dir=dl, jobs=0, exercises="1", progress=False, output=tmp_path / "gb.csv")
    got = _csv((tmp_path / "gb.csv").read_text(encoding="utf-8"))
    assert sorted(got) == ["_1234_5678_01_self_attention.py", "doejane__5678_01_self_attention.py", "smithbob"]
    for name in ("_1234_5678_01_self_attention.py", "doejane__5678_01_self_attention.py"):
        assert got[name]["problem"] == (f"{name} is not named as an LMS download names its files "
                                        f"(lastfirst_userid_submissionid_file); not graded")
        assert got[name]["ex1_status"] == "rejected"
    assert result.problems == ["roster.txt is not a folder, a .zip or an exercise file; not graded"]
    (dl / "smithbob_111_222_01_Self_Attention.py").unlink()
    (dl / "_1234_5678_01_self_attention.py").rename(dl / "_1234_5678_01_self_attention.py.zip")
    (dl / "_1234_5678_01_self_attention.py").mkdir()  # a folder of that name: the stray's row keeps apart
    run_batch(submissions_dir=dl, jobs=0, exercises="1", progress=False, output=tmp_path / "gb2.csv")
    got = _csv((tmp_path / "gb2.csv").read_text(encoding="utf-8"))
    assert len(got) == 3 and "doejane__5678_01_self_attention.py" in got
