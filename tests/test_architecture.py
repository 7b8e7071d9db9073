"""The README's architecture tree is the tree: every module of grader/ is named there, and nothing named is gone.

Top-level modules and those of the packages listed file by file (sandbox/, instructor/) must each have a line;
the other packages (suites/, checks/, diagnosis/, explain/) are described as a whole and need their folder's line.
"""
import re

from tests.conftest import ROOT

LISTED_BY_FILE = ("grader", "grader/sandbox", "grader/instructor")


def tree_block() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Architecture\n", 1)[1]
    return section.split("```", 2)[1]


def named_in_tree() -> set[str]:
    """Paths the tree names, from its indentation (two spaces per level)."""
    names, stack = set(), []
    for line in tree_block().splitlines():
        m = re.match(r"( *)(\S+)", line)
        if not m or not re.fullmatch(r"\w+(\.py|/)", m.group(2)):
            continue
        depth = len(m.group(1)) // 2
        stack[depth:] = [m.group(2).rstrip("/")]
        names.add("/".join(stack))
    return names


def modules() -> set[str]:
    found = set()
    for folder in LISTED_BY_FILE:
        for path in (ROOT / folder).glob("*.py"):
            if path.name not in ("__init__.py", "__main__.py"):
                found.add(str(path.relative_to(ROOT)))
    for path in (ROOT / "grader").iterdir():
        if path.is_dir() and (path / "__init__.py").exists() or path.name == "checks":
            found.add(str(path.relative_to(ROOT)))
    return found


def test_every_module_is_in_the_readme_tree():
    missing = sorted(modules() - named_in_tree())
    assert not missing, f"add these to the README's architecture tree: {missing}"


def test_everything_the_tree_names_exists():
    gone = sorted(n for n in named_in_tree() if n.startswith("grader/") and not (ROOT / n).exists())
    assert not gone, f"the README's architecture tree names what is not there: {gone}"


def test_the_tree_reader_sees_a_missing_line():
    assert "grader/instructor/merge.py" in named_in_tree()
    assert "grader/sandbox/zygote.py" in named_in_tree() and "grader/sandbox" in named_in_tree()
    assert "grader/no_such.py" not in named_in_tree()


def test_the_fast_subset_names_real_modules():
    from tests.conftest import FAST_MODULES

    missing = [m for m in FAST_MODULES if not (ROOT / "tests" / f"{m}.py").is_file()]
    assert not missing, f"tests/conftest.py FAST_MODULES names no such test file: {missing}"
    localization = [p.stem for p in (ROOT / "tests").glob("test_localize*.py") if p.stem not in FAST_MODULES]
    assert not localization, f"the localization rules' tests belong in the edit loop's subset: {localization}"


def test_each_pytest_hook_is_defined_once_in_the_tests_conftest():
    """A second definition of a hook silently replaces the first (the fast subset was lost that way once)."""
    import collections
    import re

    text = (ROOT / "tests" / "conftest.py").read_text(encoding="utf-8")
    counts = collections.Counter(re.findall(r"^def (pytest_\w+)\(", text, flags=re.M))
    assert not [hook for hook, n in counts.items() if n > 1], counts



def gated_files(ci: str) -> list[str]:
    """Test files with a test skipped unless an ATTENTION_KIT_* variable is set, where .ci/run names neither the
    file nor (but for the public sources, given by the machine) the variable set to 1."""
    missing = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        reasons = re.findall(r"reason=[^)]*", path.read_text(encoding="utf-8"), flags=re.S)
        gates = {g for r in reasons for g in re.findall(r"ATTENTION_KIT_[A-Z_]+", r)} - {"ATTENTION_KIT_PUBLIC_SOURCES"}
        if gates and (f"tests/{path.name}" not in ci or any(f"{g}=1" not in ci for g in gates)):
            missing.append(path.name)
    return missing


def test_every_gated_test_file_runs_in_ci():
    """A slow test behind a variable runs only where .ci/run names its file and sets the variable (with -m gated):
    one it forgot would never run anywhere."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert gated_files(ci) == []
    assert "test_install.py" in gated_files(ci.replace("tests/test_install.py", ""))  # the check can fire
    assert "test_watch.py" in gated_files(ci.replace("ATTENTION_KIT_WATCH_TESTS=1", ""))
    assert "-m gated" in ci


def test_the_work_units_split_the_attacks_in_two_and_keep_each_corpus_exercise_whole():
    """xdist runs a unit on one worker: the attacks' two halves can then be graded side by side."""
    from tests.conftest import work_unit
    from tests.test_adversarial import JOBS_LIST

    units = {work_unit(f"tests/test_adversarial.py::test_attack[{name}@{mode}]") for name, mode in JOBS_LIST}
    assert units == {"test_adversarial-0", "test_adversarial-1"}
    assert work_unit("tests/test_adversarial.py::test_static_policy_refuses[e1_x]") == "test_adversarial"
    assert work_unit("tests/test_diagnosis.py::test_verdict[03/mask_inverted]") == "test_diagnosis-03"
    assert work_unit("tests/test_cli.py::test_workspace_flow") == "test_cli"
