"""The example pack (examples/alibi-pack): a 13th exercise with no change to the core.

Everything here uses only the pack's folder: it is graded, diagnosed and linted like the kit.
"""
import os

from grader.catalog import load_catalog
from grader.devcheck import check, readme_table
from grader.pack import Pack
from tests.conftest import ROOT, grade_here, run_grade

PACK = ROOT / "examples" / "alibi-pack"


def test_pack_is_linted_graded_and_diagnosed():
    """`grade dev check --pack`, in-process: skeleton not started, solution passes, each corpus file gets its label."""
    assert check(Pack.at(PACK)) == []


def test_pack_catalog_is_its_own():
    cat = load_catalog(PACK)
    assert [ex.number for ex in cat.exercises] == [13]
    ex = cat.exercises[0]
    assert ex.solution_path == PACK / "solutions" / "13_alibi.py" and ex.module_path == PACK / "checks" / "ex13_alibi.py"
    assert "| 13 | `alibi` |" in readme_table(cat)


def test_grade_list_with_pack_and_environment_variable():
    proc = run_grade("list", "--pack", PACK)
    assert proc.returncode == 0 and "alibi" in proc.stdout and "self_attention" not in proc.stdout
    proc = run_grade("list", env={**os.environ, "ATTENTION_KIT_PACK": str(PACK)})
    assert proc.returncode == 0 and "alibi" in proc.stdout


def test_a_folder_that_is_not_a_pack_is_a_usage_error(tmp_path):
    proc = run_grade("list", "--pack", tmp_path)
    assert proc.returncode == 2 and "info.toml" in proc.stderr and "Traceback" not in proc.stderr


def test_pack_max_score_is_counted_from_its_own_checks():
    from grader.runner import grade, max_score

    ex = load_catalog(PACK).exercises[0]
    verdict = grade(exercise=ex, path=ex.solution_path, warm=True)
    assert verdict.passed and max_score(ex) == verdict.max_score > 0


def test_every_command_that_reads_exercises_takes_the_pack():
    """--pack (and ATTENTION_KIT_PACK) on each command that looks an exercise up; exercise 13 is the pack's only."""
    pack = ROOT / "examples" / "alibi-pack"
    for args in (["hint", "13"], ["solution", "13", "--force"], ["explain", "13", "--no-pager"], ["reset", "13", "--yes"],
                 ["similarity", str(ROOT / "examples"), "--exercises", "13"]):
        proc = grade_here(*args, "--pack", pack, cwd=ROOT)
        assert "unknown exercise" not in proc.stderr and "No such option" not in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr, (args, proc.stderr)


def test_a_workspace_made_from_a_pack_keeps_using_it(tmp_path):
    pack = ROOT / "examples" / "alibi-pack"
    ws = tmp_path / "ws"
    assert run_grade("init", ws, "--pack", pack).returncode == 0
    assert (ws / "exercises" / "13_alibi.py").is_file() and not (ws / "exercises" / "01_self_attention.py").exists()
    env = {k: v for k, v in os.environ.items() if k != "ATTENTION_KIT_PACK"}
    listed = run_grade("list", cwd=ws, env=env)
    assert listed.returncode == 0 and "alibi" in listed.stdout and "self_attention" not in listed.stdout
    hint = run_grade("hint", cwd=ws, env=env)  # the current exercise is the pack's
    assert hint.returncode == 0 and "exercise 13" in hint.stdout, hint.stdout + hint.stderr


def test_hint_levels_outside_a_workspace_are_kept_per_pack_and_slug(tmp_path, monkeypatch):
    import shutil

    from grader import workspace

    monkeypatch.setattr(workspace, "cache_dir", lambda: tmp_path / "cache")
    copy = tmp_path / "copy"
    for name in ("exercises", "solutions"):
        shutil.copytree(ROOT / name, copy / name)
    shutil.copytree(ROOT / "grader" / "checks", copy / "checks")
    kit_1, copy_1 = load_catalog().get(1), load_catalog(Pack.at(copy).root).get(1)
    workspace.Hints(None).mark(kit_1, 2)
    hints = workspace.Hints(None)
    assert hints.seen(kit_1) == 2 and hints.seen(copy_1) == 0  # same number, another pack


def test_the_second_example_pack_is_valid_and_uses_what_a_pack_may_declare():
    """examples/window-pack (written from the guide alone): a module exercise with `causal` on a sliding window
    and a point category of its own; .ci/run grades its corpus (`grade dev check --pack examples/window-pack`)."""
    from grader.devcheck import metadata_problems

    window = Pack.at(ROOT / "examples" / "window-pack")
    catalog, problems = metadata_problems(window)
    assert problems == [] and "window" in catalog.categories
    assert catalog.get(1).has("causal") and catalog.get(1).kind == "module"


def test_hint_after_a_pack_mistake_names_it_and_suggests_the_same_pack(tmp_path, monkeypatch):
    """`grade hint` after a grade named one of the pack's own mistakes: its text comes from the pack's DIAGNOSES
    (not a KeyError, exit 3), and the follow-up command keeps `--pack`, else it would show the kit's exercise."""
    from grader import workspace

    monkeypatch.setenv("ATTENTION_KIT_CACHE_DIR", str(tmp_path / "cache" / "attention-kit"))
    ex = load_catalog(Pack.at(PACK).root).exercises[-1]
    workspace.Hints(None).note(ex, "alibi_bias_sign")  # as `grade exercise` records a named mistake
    env = {**os.environ, "ATTENTION_KIT_CACHE_DIR": str(tmp_path / "cache" / "attention-kit")}
    shown = run_grade("hint", ex.number, "--pack", PACK, cwd=tmp_path, env=env)
    assert shown.returncode == 0 and "(alibi_bias_sign)" in shown.stdout, shown.stderr
    assert f"grade hint {ex.number} --pack {PACK}" in " ".join(shown.stdout.split())
