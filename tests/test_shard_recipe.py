"""The README's shard recipes, run exactly as written (issue 20): a Slurm job array, a GitHub Actions matrix and
the one-line recipe of the instructors' section, each merged into the gradebook of an unsharded run.

Twenty-odd `grade` processes, each importing torch: .ci/run sets ATTENTION_KIT_COHORT_TESTS=1.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from grader.catalog import load_catalog
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(not os.environ.get("ATTENTION_KIT_COHORT_TESTS"),
                                reason="runs the README's recipes with about twenty `grade` processes: "
                                       ".ci/run sets ATTENTION_KIT_COHORT_TESTS=1")

ENV = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def _blocks(language: str) -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("**Beyond one machine.**"):readme.index("## Architecture")]
    return re.findall(rf"```{language}\n(.*?)```", section, re.S)


def _shell(command: str, cwd: Path, **env) -> None:
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env={**ENV, **env}, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, (command, proc.stdout, proc.stderr)


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    """Five submissions of exercises 1 and 2 (right, buggy, skeleton, missing) and the unsharded gradebook."""
    root = tmp_path_factory.mktemp("recipe")
    ex1, ex2 = load_catalog().get(1), load_catalog().get(2)
    files = {"ana": {ex1.file: ex1.solution_path, ex2.file: ex2.solution_path},
             "ben": {ex1.file: ROOT / "tests" / "corpus" / "01" / "no_scaling.py"},
             "cy": {ex2.file: ex2.skeleton_path}, "dee": {}, "José": {ex1.file: ex1.solution_path}}
    for name, given in files.items():
        (root / "subs" / name).mkdir(parents=True)
        for file, source in given.items():
            shutil.copy(source, root / "subs" / name / file)
    _shell("grade batch subs/ -q -o full.csv", root)
    return root


def _clean_copy(cohort: Path, name: str) -> Path:
    where = cohort / name
    where.mkdir()
    shutil.copytree(cohort / "subs", where / "subs")
    return where


def test_the_slurm_job_array_as_written(cohort):
    (array, merge), = [re.findall(r"--wrap '([^']*)'", block) for block in _blocks("bash") if "sbatch" in block]
    first, last = map(int, re.search(r"--array=(\d+)-(\d+)", _blocks("bash")[0]).groups())
    here = _clean_copy(cohort, "slurm")
    for task in range(first, last + 1):  # the array's tasks, one after another
        _shell(array, here, SLURM_ARRAY_TASK_ID=str(task))
    assert len(list((here / "out").glob("part_*.cache.json"))) == last  # what the merge's glob also finds
    _shell(merge, here)
    assert (here / "out" / "gradebook.csv").read_bytes() == (cohort / "full.csv").read_bytes()


def test_the_github_actions_matrix_as_written(cohort):
    (block,) = [b for b in _blocks("yaml") if "matrix" in b]
    jobs = yaml.safe_load(block)["jobs"]
    grade = [s["run"] for s in jobs["grade"]["steps"] if "grade batch" in s.get("run", "")]
    merge = [s["run"] for s in jobs["merge"]["steps"] if "grade merge" in s.get("run", "")]
    assert len(grade) == len(merge) == 1
    merged = cohort / "actions"
    merged.mkdir()
    for shard in jobs["grade"]["strategy"]["matrix"]["shard"]:  # one runner each; the artifact is the part
        runner = _clean_copy(cohort, f"runner-{shard}")
        _shell(grade[0].replace("${{ matrix.shard }}", str(shard)), runner)
        shutil.copy(runner / f"part_{shard}.json", merged)
    shutil.copytree(cohort / "subs", merged / "subs")
    _shell(merge[0], merged)
    assert (merged / "gradebook.csv").read_bytes() == (cohort / "full.csv").read_bytes()


def test_the_instructors_one_line_recipe_as_written(cohort):
    (line,) = [line.split("#")[0].strip() for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("grade batch subs/ --shard 2/8")]
    here = _clean_copy(cohort, "one-line")
    for i in [1, *range(3, 9)]:  # the other seven machines already wrote their parts here
        _shell(f"grade batch subs/ --shard {i}/8 -q -o part_{i}.json", here)
    _shell(line, here)  # grades shard 2 (writing part_2.cache.json beside the parts), then merges part_*.json
    assert (here / "gradebook.csv").read_bytes() == (cohort / "full.csv").read_bytes()
