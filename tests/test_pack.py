"""The example pack (examples/alibi-pack): a 13th exercise with no change to the core.

Everything here uses only the pack's folder: it is graded, diagnosed and linted like the kit.
"""
import os

from grader.catalog import load_catalog
from grader.devcheck import check, readme_table
from grader.pack import Pack
from tests.conftest import ROOT, run_grade

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
