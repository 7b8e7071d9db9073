"""Fixtures shared by the hidden suites. The runner puts the Harness in config.stash."""
import inspect

import pytest

from grader.pack import exercise_module
from grader.probes import init_cases

HARNESS = pytest.StashKey()


# No fixture here asks for `request`: pytest builds a new fixture definition each time one does (inspecting a
# lambda's signature), several per check, which was a tenth of the suite's own CPU in a grade.
@pytest.fixture(scope="session")  # one grade's (a kept session tears it down after its last check)
def kit(pytestconfig):
    return pytestconfig.stash[HARNESS]


@pytest.fixture(scope="session")
def ex(kit):
    return kit.exercise


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A check of a file that was not run (policy, syntax) or does not import is skipped, saying why, before
    any of its fixtures is set up (as pytest's own skip marks are)."""
    kit, name = item.config.stash[HARNESS], item.name
    if kit.blocked and name != "test_uses_only_allowed_imports_and_apis":
        pytest.skip(f"not run: {kit.blocked}")
    if kit.load_error is not None and name not in ("test_uses_only_allowed_imports_and_apis", "test_file_imports_without_error"):
        pytest.skip("not run: the file does not import")


def own_checks(ex) -> list:
    """The test_* functions of the exercise's own module, in their order in the file."""
    if ex.module_path is None:
        return []
    return [fn for _, fn in exercise_module(ex).checks]


def _own_params(ex) -> list:
    params = []
    for fn in own_checks(ex):
        name = fn.__name__.removeprefix("test_")
        marks = getattr(fn, "pytestmark", [])
        if "init" in inspect.signature(fn).parameters:
            params += [pytest.param((fn, init), id=f"{name}[{i}]", marks=marks) for i, init in init_cases(ex)]
        else:
            params.append(pytest.param((fn, None), id=name, marks=marks))
    return params


def pytest_generate_tests(metafunc):
    ex = metafunc.config.stash[HARNESS].exercise
    if "init" in metafunc.fixturenames:
        cases = init_cases(ex)
        metafunc.parametrize("init", [c for _, c in cases], ids=[i for i, _ in cases])
    if "own" in metafunc.fixturenames:
        metafunc.parametrize("own", _own_params(ex))
