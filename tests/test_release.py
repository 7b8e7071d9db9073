"""grade release: the handout holds skeletons, a README and metadata, and nothing that gives answers away."""
import tomllib
from pathlib import Path

import pytest

from grader.catalog import PACKAGE_DIR, load_catalog
from tests.conftest import grade_here, run_grade

EXERCISES = load_catalog().exercises


def _lines(path: Path) -> set[str]:
    return {line.strip() for line in path.read_text(encoding="utf-8").splitlines()}


def distinctive_lines() -> dict[str, set[str]]:
    """Lines of every reference solution and hidden suite that no skeleton contains."""
    given = set().union(*(_lines(ex.skeleton_path) for ex in EXERCISES))
    secret = {ex.solution_path.name: _lines(ex.solution_path) for ex in EXERCISES}
    secret |= {f"suites/{p.name}": _lines(p) for p in sorted((PACKAGE_DIR / "suites").glob("*.py"))}
    return {name: {line for line in lines - given if len(line) >= 16 and not line.startswith("#")}
            for name, lines in secret.items()}


def leaks(tree: Path) -> list[str]:
    """Which solutions or suites have a distinctive line somewhere in tree (any file, any name)."""
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in tree.rglob("*") if p.is_file())
    found = {line.strip() for line in text.splitlines()}
    return sorted(name for name, lines in distinctive_lines().items() if lines & found)


WHEEL = "wheels/attention_kit-0.1.0-py3-none-any.whl"
URL_SPEC = "attention-kit @ git+https://example.org/course/attention-kit.git@v0.1.0"


def test_learners_handout_has_what_learners_need(tmp_path):
    out = tmp_path / "handout"
    proc = run_grade("release", out)
    assert proc.returncode == 0, proc.stderr
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == sorted(["README.md", ".attention-kit.json", "exercises/info.toml", WHEEL,
                            *(f"exercises/{ex.file}" for ex in EXERCISES)])
    for ex in EXERCISES:
        assert (out / "exercises" / ex.file).read_bytes() == ex.skeleton_path.read_bytes()
    meta = tomllib.loads((out / "exercises" / "info.toml").read_text())
    assert [e["number"] for e in meta["exercise"]] == [ex.number for ex in EXERCISES]
    readme = (out / "README.md").read_text()
    for ex in EXERCISES:
        assert f"exercises/{ex.file}" in readme and ex.contract.split(" with ")[0] in readme
    assert f"pip install ./{WHEEL}" in readme and "grade exercise" in readme
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in readme
    assert "pip install attention-kit\n" not in readme and "pip install torch  " not in readme
    assert "hints" in meta["exercise"][4] and "sweep" in meta["exercise"][0]  # learners keep their hints
    graded = grade_here("exercise", "1", "--json", cwd=out)  # the handout is a workspace: no path needed
    assert graded.returncode == 1 and '"not_started"' in graded.stdout


def test_nothing_leaks_into_the_handout(tmp_path):
    out = tmp_path / "handout"
    assert run_grade("release", out, "--kit-spec", URL_SPEC).returncode == 0
    assert f"pip install {URL_SPEC}" in (out / "README.md").read_text()
    assert leaks(out) == []
    assert all(lines for lines in distinctive_lines().values())  # every solution and suite has lines to look for


def test_the_leak_check_finds_a_planted_solution_and_suite(tmp_path):
    out = tmp_path / "handout"
    assert run_grade("release", out, "--kit-spec", URL_SPEC).returncode == 0
    (out / "notes.txt").write_text(EXERCISES[2].solution_path.read_text())
    (out / "exercises" / "helpers.py").write_text((PACKAGE_DIR / "suites" / "test_masking.py").read_text())
    assert {EXERCISES[2].solution_path.name, "suites/test_masking.py"} <= set(leaks(out))


def test_candidates_get_a_take_home_without_the_grader(tmp_path):
    out = tmp_path / "take-home"
    proc = grade_here("release", out, "--audience", "candidates", "--exercises", "2,4")
    assert proc.returncode == 0, proc.stderr
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == ["README.md", "exercises/02_scaled_dot_product.py", "exercises/04_multihead_attention.py",
                     "exercises/info.toml"]
    meta = tomllib.loads((out / "exercises" / "info.toml").read_text())
    assert [e["number"] for e in meta["exercise"]] == [2, 4] and meta["allowed_imports"]
    full = {e.number: e for e in EXERCISES}
    for table in meta["exercise"]:  # what the task is, and nothing about how it is tested or solved
        assert set(table) <= {"number", "slug", "title", "file", "kind", "entry", "signature", "contract", "forbidden"}
        assert table["contract"] == full[table["number"]].contract and table["entry"] == full[table["number"]].entry
    text = (out / "exercises" / "info.toml").read_text()
    for word in ("hints", "sweep", "probe", "config", "limits", "points"):
        assert word not in text, word
    assert not any(hint in text for ex in EXERCISES for hint in ex.hints)
    readme = (out / "README.md").read_text()
    assert "attention-kit" not in readme and "wheels/" not in readme and "grade hint" not in readme
    assert "01_self_attention" not in readme and "exercises/04_multihead_attention.py" in readme
    assert leaks(out) == []


def test_candidates_handout_says_how_to_set_up_what_counts_and_the_teams_rules(tmp_path):
    import platform

    from grader.instructor.grading import max_points
    from grader.instructor.kitwheel import built_torch

    notes = tmp_path / "policy.md"
    notes.write_text("# Tools and AI\n\nDocumentation and search engines are fine. **No AI assistants.**\n\n"
                     "```bash\n# keep this comment\n```\n", encoding="utf-8")
    out = tmp_path / "take-home"
    proc = grade_here("release", out, "--audience", "candidates", "--exercises", "2,4", "--time-limit", "2h30m",
                      "--notes", notes)
    assert proc.returncode == 0, proc.stderr
    readme = (out / "README.md").read_text()
    setup = readme.split("## Setup", 1)[1].split("\n## ", 1)[0]
    commands = setup.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert commands == ["python3 -m venv .venv && . .venv/bin/activate",
                        f"pip install torch=={built_torch()} --index-url https://download.pytorch.org/whl/cpu"]
    assert f"graded with Python {platform.python_version()}" in " ".join(setup.split())
    rows = {line.split("|")[1].strip(): line.split("|")[4].strip() for line in readme.splitlines()
            if line.startswith("| ") and "exercises/" in line}
    assert rows == {"2": str(max_points(2)), "4": str(max_points(4))}
    assert f"{max_points(2) + max_points(4)} points in all" in readme
    assert readme.index("**Time limit: 2 hours 30 minutes.**") < readme.index("## Setup")
    team = readme.split("## From the hiring team", 1)[1].split("\n## ", 1)[0]
    assert "### Tools and AI" in team and "**No AI assistants.**" in team and "# keep this comment" in team
    for args, says in ((("--time-limit", "soon"), "--time-limit takes a duration"),
                       (("--time-limit", "0m"), "between one minute and 60 days"),
                       (("--notes", tmp_path / "absent.md"), "cannot read --notes"),
                       (("--notes", tmp_path), "is a directory")):
        bad = grade_here("release", tmp_path / "other", "--audience", "candidates", *args)
        assert bad.returncode == 2 and says in bad.stderr and bad.stderr.count("\n") == 1, (args, bad.stderr)
    (tmp_path / "blob.md").write_bytes(b"\xff\xfe\x00binary")
    bad = grade_here("release", tmp_path / "other", "--audience", "candidates", "--notes", tmp_path / "blob.md")
    assert bad.returncode == 2 and "is not UTF-8 text" in bad.stderr


def test_release_refuses_a_folder_with_files(tmp_path):
    (tmp_path / "mine.txt").write_text("keep me")
    proc = run_grade("release", tmp_path)
    assert proc.returncode == 2 and "not empty" in proc.stderr and proc.stderr.count("\n") == 1
    assert (tmp_path / "mine.txt").read_text() == "keep me" and not (tmp_path / "README.md").exists()


def test_a_kit_spec_that_cannot_install_is_refused(tmp_path):
    from grader.instructor import UsageError
    from grader.instructor.kitwheel import check_kit_spec
    from grader.instructor.release import release

    for spec in ("attention-kit==0.1.0", "attention-kit", "attention_kit>=0.1", "numpy", ""):
        with pytest.raises(UsageError):
            check_kit_spec(spec)
    proc = run_grade("release", tmp_path / "h", "--kit-spec", "attention-kit==0.1.0")
    assert proc.returncode == 2 and "not published on PyPI" in proc.stderr and proc.stderr.count("\n") == 1
    assert not (tmp_path / "h").exists()
    for i, spec in enumerate((URL_SPEC, "https://example.org/attention_kit-0.1.0-py3-none-any.whl",
                              "git+https://example.org/course/attention-kit.git",
                              "attention-kit==0.1.0 --index-url https://pypi.example.org/simple")):
        release(directory=tmp_path / str(i), kit_spec=spec)
        assert f"pip install {spec}" in (tmp_path / str(i) / "README.md").read_text()
    with pytest.raises(UsageError, match="no grader"):
        release(directory=tmp_path / "c", audience="candidates", kit_spec=URL_SPEC)


def test_a_learners_handout_made_from_a_pack_carries_and_grades_the_pack(tmp_path):
    """Its grader needs the pack's references and checks: they travel with it (pack/, relative), the handout's
    workspace names the pack, and `grade exercise 13` inside the handout grades the pack's exercise, wherever the
    handout is moved to."""
    alibi = Path(__file__).resolve().parents[1] / "examples" / "alibi-pack"
    out = tmp_path / "handout"
    proc = grade_here("release", out, "--pack", alibi, "--kit-spec", URL_SPEC)
    assert proc.returncode == 0, proc.stderr
    assert (out / "pack" / "solutions" / "13_alibi.py").is_file() and (out / "pack" / "checks" / "ex13_alibi.py").is_file()
    assert not (out / "pack" / "corpus").exists()
    moved = tmp_path / "elsewhere"
    out.rename(moved)
    graded = grade_here("exercise", "13", "--json", cwd=moved, env={"ATTENTION_KIT_PACK": None})
    assert graded.returncode == 1 and '"not_started"' in graded.stdout and '"slug": "alibi"' in graded.stdout, \
        graded.stdout + graded.stderr
