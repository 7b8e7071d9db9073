"""Every skeleton fails as "not started", every solution passes (in-process, one warm fork server);
info.toml is validated at load time; the README's table and the skeletons agree with info.toml."""
import ast
import re
import shutil
from functools import cache

import pytest

from grader.catalog import CatalogError, load_catalog, read_catalog
from grader.devcheck import readme_table
from grader.pack import Pack
from grader.runner import grade, max_score
from grader.sandbox import Limits
from tests.conftest import ROOT, grade_json

EXERCISES = load_catalog().exercises


@cache
def verdict(path):
    ex = next(e for e in EXERCISES if path in (e.skeleton_path, e.solution_path))
    return grade(exercise=ex, path=path, limits=Limits(time_s=20), warm=True)


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.slug)
def test_solution_passes(ex):
    v = verdict(ex.solution_path)
    assert v.passed, [(t.name, t.message) for t in v.failures()]
    assert v.score == v.max_score > 0 and v.diagnoses == []
    assert {"policy", "api", "numerics", "device"} <= {t.category for t in v.tests}
    assert all(t.code == "" for t in v.tests)


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.slug)
def test_max_score_is_counted_without_grading(ex):
    """What Classroom and missing files are worth comes from collecting the checks; it must equal a grade's."""
    assert max_score(ex) == verdict(ex.solution_path).max_score == verdict(ex.skeleton_path).max_score > 0


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.slug)
def test_skeleton_fails_as_not_started(ex):
    v = verdict(ex.skeleton_path)
    assert not v.passed and v.state == "not_started"
    assert v.score == 0 < v.max_score  # an untouched file earns nothing, whatever it runs
    assert [d.id for d in v.diagnoses] == ["not_started"]  # a fix-the-bug skeleton too: finding the bug is the exercise
    if not any(t.code == "not_implemented" for t in v.tests):  # a fix-the-bug skeleton runs: its tests fail
        assert v.failures() and v.localization is None


def test_cli_smoke_json_has_codes():
    """The CLI's JSON keeps schema 1 and gains a failure code per test (in this process: test_adversarial's CLI
    jobs check the one JSON line of a real `grade` process)."""
    ex = EXERCISES[0]
    code, doc = grade_json("exercise", ex.slug, ex.skeleton_path, here=True)
    assert code == 1 and doc["schema_version"] == 1 and doc["state"] == "not_started"
    assert {t["code"] for t in doc["tests"] if t["status"] != "passed"} <= {"not_implemented", "import_failed"}
    assert all(t["code"] == "" for t in doc["tests"] if t["status"] == "passed")
    assert doc["score"] == 0 < doc["max_score"]


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.slug)
def test_skeleton_has_todos_and_the_contract_head(ex):
    """The skeleton's docstring states the contract's call as info.toml does, and the code defines it so."""
    text = ex.skeleton_path.read_text(encoding="utf-8")
    assert "# TODO" in text and ex.entry in text
    head = ex.contract[: ex.contract.index(")") + 1]  # e.g. "CausalAttention(d_in, d_out, ..., qkv_bias=False)"
    doc = " ".join((ast.get_docstring(ast.parse(text)) or "").split())
    assert head in doc, f"the docstring should state {head!r} as info.toml's contract does"
    tree = ast.parse(text)
    defs = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    fn = defs[ex.entry] if ex.kind.endswith("function") else next(
        n for n in defs[ex.entry].body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    names = [a.arg for a in fn.args.args if a.arg != "self"]
    assert names == list(ex.signature)


def test_readme_table_is_generated_from_info_toml():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_table(load_catalog()) in readme, "run `grade dev readme-table` and paste it into README.md"


def test_metadata_is_complete():
    cat = load_catalog()
    numbers = [e.number for e in cat.exercises]
    assert numbers == sorted(numbers) == list(range(1, len(numbers) + 1))
    for ex in cat.exercises:
        assert len(ex.hints) >= 3 and ex.topics and ex.forbidden and ex.brief
        assert ex.skeleton_path.name == ex.solution_path.name
    assert set(cat.points) == {"api", "shape", "numerics", "masking", "dropout", "device", "policy"}


# -- validation at load time ---------------------------------------------------------------------------------
@pytest.fixture
def pack_copy(tmp_path):
    """A copy of the kit as a pack; edit(old, new) rewrites its info.toml."""
    root = tmp_path / "pack"
    for name in ("exercises", "solutions"):
        shutil.copytree(ROOT / name, root / name)
    shutil.copytree(ROOT / "grader" / "checks", root / "checks")
    pack = Pack.at(root)

    def edit(old: str, new: str) -> Pack:
        text = pack.info.read_text(encoding="utf-8")
        assert old in text
        pack.info.write_text(text.replace(old, new, 1), encoding="utf-8")
        return pack

    return pack, edit


def test_a_copy_of_the_kit_is_a_valid_pack(pack_copy):
    pack, _ = pack_copy
    assert len(read_catalog(pack).exercises) == len(EXERCISES)


@pytest.mark.parametrize("old, new, key", [
    ('features = ["causal", "dropout"]', 'features = ["casual", "dropout"]', "features"),
    ('kind = "module"', 'kinds = "module"', "kinds"),
    ("format_version = 2", "format_version = 1", "format_version"),
    ('file = "03_causal_attention.py"', 'file = "03_missing.py"', "file"),
    ('module = "ex08_kv_cache"', 'module = "ex08_kv_cachee"', "module"),
    ('dims = { input = "d_in", output = "d_out", context', 'dims = { input = "d_in", output = "d_outt", context', "dims.output"),
    ("[points]\napi = 1", "[points]\napi = 1\nspeed = -1", "points.speed"),
    ('level = "medium"', 'level = "tricky"', "level"),
])
def test_bad_metadata_is_refused_naming_file_and_key(pack_copy, old, new, key):
    pack, edit = pack_copy
    with pytest.raises(CatalogError) as err:
        read_catalog(edit(old, new))
    text = str(err.value)
    assert str(pack.info) in text and re.search(rf"\b{re.escape(key)}\b", text), text
    assert "\n" not in text


def test_kit_metadata_files_and_modules_pass_dev_check():
    """`grade dev check` without grading: valid metadata, hints, topics, no stray file, modules that load."""
    from grader.devcheck import metadata_problems

    catalog, problems = metadata_problems(Pack.kit())
    assert catalog is not None and problems == []


def test_dev_check_reports_stray_files(pack_copy):
    from grader.devcheck import metadata_problems

    pack, _ = pack_copy
    (pack.exercises / "99_extra.py").write_text("x = 1\n", encoding="utf-8")
    (pack.solutions / "98_orphan.py").write_text("x = 1\n", encoding="utf-8")
    (pack.checks / "ex97_nobody.py").write_text("x = 1\n", encoding="utf-8")
    _, problems = metadata_problems(pack)
    assert len(problems) == 3 and all(p.count("\n") == 0 for p in problems), problems
    assert [p.split(":")[0].rsplit("/", 1)[-1] for p in problems] == ["99_extra.py", "98_orphan.py", "ex97_nobody.py"]
