"""A pack is checked at load, and its own code's errors are its own (issue 23).

Every info.toml key is checked against what it names: forbidden names resolve to real attributes (a typo would
silently lift the ban), entry/signature/config/sweep/probe against the reference solution's entry point (read
with ast), topics exist. An error raised in a pack's checks/*.py is reported with its file and line, exit 2,
never as the kit's internal error; a shared checks/helpers.py is part of the pack when an exercise module
imports it. docs/pack-authors.md documents every key the loader accepts.
"""
import re
import shutil

import pytest

from grader.catalog import (CATEGORIES, DIMS, FEATURES, KINDS, LIMITS, ROLES, TOP_KEYS, TYPES, CatalogError,
                            check_forbidden, load_catalog, read_catalog)
from grader.pack import Pack, PackCodeError
from tests.conftest import ROOT, grade_here, run_grade

ALIBI = ROOT / "examples" / "alibi-pack"
GUIDE = ROOT / "docs" / "pack-authors.md"

SDPA_ALIBI = '''import torch
import torch.nn.functional as F


def alibi_attention(query, key, value):
    B, H, T, d = query.shape
    pos = torch.arange(T, device=query.device)
    dist = (pos[:, None] - pos[None, :]).to(query.dtype)
    slopes = 2.0 ** (-8.0 * torch.arange(1, H + 1, device=query.device, dtype=query.dtype) / H)
    future = torch.ones(T, T, dtype=torch.bool, device=query.device).triu(1)
    bias = (-slopes.view(H, 1, 1) * dist).masked_fill(future, float("-inf"))
    return F.scaled_dot_product_attention(query, key, value, attn_mask=bias)
'''


def copy_pack(src, tmp_path, name="pack") -> Pack:
    root = tmp_path / name
    shutil.copytree(src, root)
    return Pack.at(root)


def edit(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def kit_copy(tmp_path) -> Pack:
    root = tmp_path / "kit"
    for name in ("exercises", "solutions"):
        shutil.copytree(ROOT / name, root / name)
    shutil.copytree(ROOT / "grader" / "checks", root / "checks")
    return Pack.at(root)


def refused(pack: Pack, key: str) -> str:
    import torch  # noqa: F401 - forbidden names resolve at load once their module is imported

    with pytest.raises(CatalogError) as err:
        read_catalog(pack).check_forbidden()  # resolved by read_catalog already when the module is imported
    text = str(err.value)
    assert text.startswith(str(pack.info)) and re.search(rf"(^|: ){re.escape(key)}: ", text) and "\n" not in text, text
    return text


# -- forbidden ----------------------------------------------------------------------------------------------
def test_the_kits_forbidden_names_resolve():
    import torch  # noqa: F401

    load_catalog().check_forbidden()
    load_catalog(ALIBI).check_forbidden()


def test_a_misspelt_ban_is_refused_at_load_naming_file_exercise_and_key(tmp_path):
    pack = copy_pack(ALIBI, tmp_path)
    edit(pack.info, "scaled_dot_product_attention", "scaled_dot_product_attentoin")
    text = refused(pack, "forbidden")
    assert text.endswith("exercise 13 (alibi): forbidden: torch.nn.functional has no attribute scaled_dot_product_attentoin")


@pytest.mark.parametrize("name, says", [("torchh.nn.Linear", "no module named torchh"),
                                        ("torch.nn.MultiheadAtention", "torch.nn has no attribute MultiheadAtention"),
                                        ("torch nn", "is not a dotted name")])
def test_forbidden_names_that_do_not_resolve(tmp_path, name, says):
    pack = copy_pack(ALIBI, tmp_path)
    edit(pack.info, '"torch.nn.MultiheadAttention"', f'"{name}"')
    assert says in refused(pack, "forbidden")


def test_the_typo_is_refused_when_grading_and_the_right_spelling_still_bans(tmp_path):
    """The SDPA submission that passed 40/40 under a misspelt ban: exit 2 naming the typo; spelt right, refused."""
    sub = tmp_path / "13_alibi.py"
    sub.write_text(SDPA_ALIBI, encoding="utf-8")
    typo = copy_pack(ALIBI, tmp_path, "typo")
    edit(typo.info, "scaled_dot_product_attention", "scaled_dot_product_attentoin")
    # a fresh process: torch is not imported when the catalog loads, so the grade resolves the names itself
    proc = run_grade("exercise", "13", sub, "--pack", typo.root, "--json", "--allow-weak-sandbox")
    assert proc.returncode == 2 and proc.stdout == "", (proc.stdout, proc.stderr)
    assert proc.stderr.strip().splitlines() == [
        f"grade: {typo.info}: exercise 13 (alibi): forbidden: torch.nn.functional has no attribute "
        "scaled_dot_product_attentoin"]
    proc = grade_here("exercise", "13", sub, "--pack", ALIBI, "--allow-weak-sandbox")
    assert proc.returncode == 1 and "(forbidden_api)" in proc.stdout, proc.stdout
    assert "torch.nn.functional.scaled_dot_product_attention is not" in proc.stdout, proc.stdout


def test_a_batch_with_a_misspelt_ban_grades_nobody_and_exits_2(tmp_path):
    """The names are resolved in a pool process (which imports torch anyway), before any submission is given out."""
    typo = copy_pack(ALIBI, tmp_path, "typo_batch")
    edit(typo.info, "scaled_dot_product_attention", "scaled_dot_product_attentoin")
    (tmp_path / "subs" / "ana").mkdir(parents=True)
    (tmp_path / "subs" / "ana" / "13_alibi.py").write_text(SDPA_ALIBI, encoding="utf-8")
    proc = run_grade("batch", tmp_path / "subs", "--pack", typo.root, "-o", tmp_path / "grades.csv", "--quiet")
    assert proc.returncode == 2 and not (tmp_path / "grades.csv").exists(), (proc.stdout, proc.stderr)
    assert "forbidden: torch.nn.functional has no attribute scaled_dot_product_attentoin" in proc.stderr


def test_a_grade_resolves_the_names_before_any_check_runs(tmp_path):
    from grader.runner import grade

    pack = copy_pack(ALIBI, tmp_path)
    ex = load_catalog(pack).exercises[0]
    object.__setattr__(ex, "forbidden", ("torch.nn.functional.scaled_dot_product_attentoin",))
    with pytest.raises(CatalogError, match="forbidden: torch.nn.functional has no attribute"):
        grade(exercise=ex, path=ex.solution_path, warm=True, allow_weak_sandbox=True)
    with pytest.raises(CatalogError):
        check_forbidden(ex)  # refused every time, never remembered as checked


# -- entry, signature, config, sweep, probe, topics -----------------------------------------------------------
@pytest.mark.parametrize("old, new, key, says", [
    ('sweep = [{ qkv_bias = true }, { d_in = 7', 'sweep = [{ qkv_biass = true }, { d_in = 7', "sweep[0].qkv_biass",
     "SelfAttention() takes no argument 'qkv_biass'"),
    ('probe = { d_in = 5, d_out = 5, context_length = 6', 'probe = { d_in = 5, d_out = 5, context_len = 6',
     "probe.context_len", "CausalAttention() takes no argument"),
    ('config = { d_in = 5, d_out = 7 }', 'config = { d_in = 5, d_out = 7, bias = true }', "config.bias",
     "takes no argument 'bias'"),
    ('entry = "SelfAttention"', 'entry = "SelfAtention"', "entry", "defines no 'SelfAtention'"),
    ('signature = ["d_in", "d_out", "qkv_bias"]', 'signature = ["d_in", "d_out", "bias"]', "signature", "takes ['d_in'"),
    ('topics = ["qkv", "self_attention"', 'topics = ["qkv", "self_atention"', "topics", "no explainer topic 'self_atention'"),
    ('probe = { d_in = 5, d_out = 10, context_length = 6, dropout = 0.5, num_heads = 2 }',
     'probe = { d_in = 5, d_out = 8, context_length = 6, dropout = 0.5, num_heads = 2 }', "probe", "/ heads >= 5"),
])
def test_keys_are_checked_against_the_reference_solution(kit_copy, old, new, key, says):
    edit(kit_copy.info, old, new)
    assert says in refused(kit_copy, key)


def test_config_gives_every_argument_without_a_default(kit_copy):
    for folder in (kit_copy.solutions, kit_copy.exercises):
        edit(folder / "01_self_attention.py", "qkv_bias=False", "qkv_bias")
    assert "SelfAttention() needs qkv_bias, which config does not give" in refused(kit_copy, "config")


@pytest.mark.parametrize("old, new, key, says", [
    ('config = { L = 5, S = 7', 'config = { L = 5, T = 7', "config", "need config L, S, d_k and d_v (missing: S)"),
    ('dims = { input = "d_in", output = "d_out" }\nsweep = [{ qkv_bias', 'dims = { output = "d_out" }\nsweep = [{ qkv_bias',
     "dims", "a module exercise needs dims.input"),
    ('dims = { input = "d_in", output = "d_out", context = "context_length", dropout = "dropout" }',
     'dims = { input = "d_in", output = "d_out", dropout = "dropout" }', "features", "'causal' needs dims.context"),
])
def test_kinds_and_features_get_what_their_suites_need(kit_copy, old, new, key, says):
    edit(kit_copy.info, old, new)
    assert says in refused(kit_copy, key)


def test_a_generic_module_feature_on_a_function_is_refused(tmp_path):
    pack = copy_pack(ALIBI, tmp_path)
    edit(pack.info, "config = { B = 2", 'features = ["causal"]\nconfig = { B = 2')
    assert "only for kind \"module\"" in refused(pack, "features")


def test_a_custom_kind_needs_a_module_with_diagnose(tmp_path):
    from grader.devcheck import metadata_problems

    pack = copy_pack(ALIBI, tmp_path)
    edit(pack.checks / "ex13_alibi.py", "def diagnose(", "def diagnose_later(")
    assert metadata_problems(pack)[1] == [f"{pack.checks / 'ex13_alibi.py'}: a custom_function exercise's module "
                                          "needs diagnose(ex, kit, verdict): the generic rules cannot call it"]
    edit(pack.info, 'module = "ex13_alibi"\n', "")
    assert "needs its own module" in refused(pack, "module")


def test_sweep_is_for_module_exercises_only(tmp_path):
    pack = copy_pack(ALIBI, tmp_path)
    edit(pack.info, "config = { B = 2", "sweep = [{ B = 1 }]\nconfig = { B = 2")
    assert "only module exercises" in refused(pack, "sweep")


def test_an_entry_the_skeleton_lacks_is_refused(tmp_path):
    pack = copy_pack(ALIBI, tmp_path)
    edit(pack.exercises / "13_alibi.py", "def alibi_attention(", "def alibi(")
    assert "13_alibi.py defines no 'alibi_attention'" in refused(pack, "entry")


# -- the pack's own code --------------------------------------------------------------------------------------
def line_of(path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


def test_an_error_in_a_packs_check_is_the_packs_with_file_and_line(tmp_path):
    pack = copy_pack(ALIBI, tmp_path)
    module = pack.checks / "ex13_alibi.py"
    edit(module, "    args = qkv(kit, ex.config)\n", "    args = qkv(kit, ex.confg)\n")
    line = line_of(module, "ex.confg")
    sol = pack.solutions / "13_alibi.py"
    proc = grade_here("exercise", "13", sol, "--pack", pack.root, "--allow-weak-sandbox")
    assert proc.returncode == 2 and proc.stdout == "", (proc.stdout, proc.stderr)
    err = proc.stderr.strip()
    assert err.count("\n") == 0 and "internal grader error" not in err and "please report" not in err, err
    assert err.startswith(f"grade: {module}:{line} (in test_alibi_matches_reference): AttributeError:"), err


def test_an_assert_in_a_packs_check_says_to_use_expect(tmp_path):
    from grader.runner import grade

    pack = copy_pack(ALIBI, tmp_path)
    module = pack.checks / "ex13_alibi.py"
    edit(module, "    compare(got[0], want[0], \"output\")\n", "    assert got[0].sum() > 1e9\n")
    ex = load_catalog(pack).exercises[0]
    with pytest.raises(PackCodeError, match=rf"ex13_alibi.py:{line_of(module, 'assert got')} .*AssertionError.*expect"):
        grade(exercise=ex, path=ex.solution_path, warm=True, allow_weak_sandbox=True)


def test_an_error_in_a_packs_diagnose_is_the_packs(tmp_path):
    from grader.runner import grade

    pack = copy_pack(ALIBI, tmp_path)
    module = pack.checks / "ex13_alibi.py"
    edit(module, "    args = qkv(kit, c, salt=20)\n", "    args = qkv(kit, c, salt=20)\n    c['nope']\n")
    ex = load_catalog(pack).exercises[0]
    with pytest.raises(PackCodeError) as err:
        grade(exercise=ex, path=pack.corpus / "13" / "bias_sign.py", warm=True, allow_weak_sandbox=True)
    assert f"ex13_alibi.py:{line_of(module, 'nope')} (in diagnose): KeyError: 'nope'" in str(err.value)


def test_a_pack_module_that_does_not_import_names_its_line(tmp_path):
    from grader.devcheck import metadata_problems

    pack = copy_pack(ALIBI, tmp_path)
    module = pack.checks / "ex13_alibi.py"
    edit(module, "import math\n", "import math\nsyntax error here\n")
    line = line_of(module, "syntax error here")
    _, problems = metadata_problems(pack)
    assert problems == [f"ex13_alibi.py does not import: {module}:{line}: SyntaxError: invalid syntax (an error in "
                        "the pack's own code)"], problems
    proc = grade_here("exercise", "13", pack.solutions / "13_alibi.py", "--pack", pack.root, "--allow-weak-sandbox")
    assert proc.returncode == 2 and f"{module}:{line}: SyntaxError" in proc.stderr, proc.stderr


def test_the_kits_own_check_errors_stay_internal(tmp_path):
    from grader.pack import pack_fault

    try:
        raise ValueError("x")
    except ValueError as exc:
        assert pack_fault(exc, Pack.kit().checks) is None


# -- shared helpers -------------------------------------------------------------------------------------------
def test_a_shared_helper_imported_by_an_exercise_module_is_allowed(tmp_path):
    from grader.devcheck import metadata_problems
    from grader.runner import grade

    pack = copy_pack(ALIBI, tmp_path)
    module = pack.checks / "ex13_alibi.py"
    text = module.read_text(encoding="utf-8")
    start, end = text.index("def qkv("), text.index("@check(\"numerics\")")
    (pack.checks / "helpers.py").write_text(f'"""Shared by the pack\'s exercise modules."""\n\n\n{text[start:end]}',
                                            encoding="utf-8")
    module.write_text(text[:start] + "from .helpers import qkv\n\n\n" + text[end:], encoding="utf-8")
    assert metadata_problems(pack)[1] == []
    ex = load_catalog(pack).exercises[0]
    assert grade(exercise=ex, path=ex.solution_path, warm=True, allow_weak_sandbox=True).passed
    (pack.checks / "unused.py").write_text("x = 1\n", encoding="utf-8")
    assert [p.split(": ", 1)[0] for p in metadata_problems(pack)[1]] == [str(pack.checks / "unused.py")]


# -- the guide ------------------------------------------------------------------------------------------------
def documented(marker: str) -> set[str]:
    """The first cell of every table row between the guide's <!-- marker --> and <!-- /marker -->, as written
    in code."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \|", section, flags=re.M))


def test_the_guide_documents_every_key_the_loader_accepts():
    accepted = (set(TOP_KEYS) | set(TYPES) | {f"roles.{r}" for r in ROLES} | {f"dims.{d}" for d in DIMS}
                | {f"limits.{x}" for x in LIMITS} | {f"points.{c}" for c in CATEGORIES}
                | {f'features = "{f}"' for f in FEATURES} | {f'kind = "{k}"' for k in KINDS})
    keys = documented("keys")
    assert accepted - keys == set(), f"accepted by grader/catalog.py, not in {GUIDE.name}"
    assert keys - accepted == set(), f"in {GUIDE.name}, not accepted by grader/catalog.py"


def test_the_readme_links_the_guide():
    assert "(docs/pack-authors.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


# -- point categories ---------------------------------------------------------------------------------------
def test_a_pack_declares_its_own_point_category(tmp_path):
    """A key of [points] that is not one of the kit's categories is the pack's own: its checks may use it and
    are worth what it says; a check naming a category nobody declared is the pack's error (exit 2)."""
    from grader.runner import max_score

    pack = copy_pack(ALIBI, tmp_path)
    edit(pack.info, "device = 1\n", "device = 1\nslopes = 5\n")
    edit(pack.checks / "ex13_alibi.py", '@check("numerics")', '@check("slopes")')
    catalog = read_catalog(pack)
    assert catalog.categories[-1] == "slopes"
    before = max_score(load_catalog(ALIBI).get(13))
    assert max_score(catalog.get(13)) == before - 2 + 5
    from grader.devcheck import metadata_problems

    assert metadata_problems(pack)[1] == []

    undeclared = copy_pack(ALIBI, tmp_path, name="undeclared")  # a pack of its own: nothing of it loaded yet
    edit(undeclared.checks / "ex13_alibi.py", '@check("numerics")', '@check("slopes")')
    proc = grade_here("exercise", "13", undeclared.solutions / "13_alibi.py", "--pack", undeclared.root)
    assert proc.returncode == 2 and "@check('slopes'): no such category" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{undeclared.checks / 'ex13_alibi.py'}:" in proc.stderr  # the pack's own file and line, not the kit's


@pytest.mark.parametrize("points, message", [('"Window" = 1', "a category of its own is a lower-case name"),
                                             ("masking = -1", "not a whole number of points"),
                                             ('masking = "2"', "not a whole number of points")])
def test_bad_point_categories_are_refused_at_load(tmp_path, points, message):
    pack = copy_pack(ALIBI, tmp_path)
    edit(pack.info, "masking = 2\n", points + "\n")
    with pytest.raises(CatalogError, match=message):
        read_catalog(pack)


def test_the_guide_lists_every_failure_code_and_diagnosis_id():
    """A pack author uses these names without reading the kit: the guide's tables are the kit's lists."""
    from grader.diagnosis.diagnoses import texts
    from grader.failures import CODES

    assert documented("codes") == set(CODES)
    assert documented("diagnoses") == set(texts())


def test_the_guide_sends_no_one_to_the_source():
    """The guide and the example pack's docstrings name no module of the kit to read (imports are fine)."""
    for path in (GUIDE, ALIBI / "checks" / "ex13_alibi.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\b(see|documents|listed in|read) `?grader/", text), path


@pytest.mark.parametrize("line, says", [("MISTAKES = ['slopes_reversed']", "MISTAKES: must be a dict"),
                                        ("ALIASES = {'a': 3}", "ALIASES: must be a dict from names to strings"),
                                        ("EXCLUSIVE = 'ab'", "EXCLUSIVE: must be a list of sets"),
                                        ("DIAGNOSES = {'x': {'title': 't'}}", "DIAGNOSES: must be a dict"),
                                        ("diagnose = 3", "diagnose: must be a function")])
def test_an_exercise_modules_names_are_checked_when_it_loads(tmp_path, line, says):
    """The core reads an exercise module through one typed ExerciseModule, built once; a name of the wrong shape
    is the pack's error naming the file and the name."""
    from grader.pack import exercise_module

    pack = copy_pack(ALIBI, tmp_path, name=f"pack_{abs(hash(line))}")  # a module name of its own: loaded afresh
    module = pack.checks / "ex13_alibi.py"
    module.write_text(module.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    with pytest.raises(PackCodeError, match=re.escape(f"ex13_alibi.py: {says}")):
        exercise_module(read_catalog(pack).get(13))


def test_a_malformed_exercise_module_stops_the_grade_with_exit_2(tmp_path):
    pack = copy_pack(ALIBI, tmp_path)
    module = pack.checks / "ex13_alibi.py"
    module.write_text(module.read_text(encoding="utf-8") + "\nALIASES = {'a': 3}\n", encoding="utf-8")
    proc = grade_here("exercise", "13", pack.solutions / "13_alibi.py", "--pack", pack.root)
    assert proc.returncode == 2 and "ex13_alibi.py: ALIASES: must be a dict" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
