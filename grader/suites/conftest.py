"""Fixtures shared by the hidden suites. The runner puts the Harness in config.stash."""
import pytest

from grader.suites.cases import init_cases

HARNESS = pytest.StashKey()


@pytest.fixture
def kit(request):
    return request.config.stash[HARNESS]


@pytest.fixture
def ex(kit):
    return kit.exercise


@pytest.fixture(autouse=True)
def _not_blocked(request, kit):
    name = request.node.name
    if kit.blocked and name != "test_uses_only_allowed_imports_and_apis":
        pytest.skip(f"not run: {kit.blocked}")
    if kit.load_error is not None and name not in ("test_uses_only_allowed_imports_and_apis", "test_file_imports_without_error"):
        pytest.skip("not run: the file does not import")


def pytest_generate_tests(metafunc):
    if "init" in metafunc.fixturenames:
        cases = init_cases(metafunc.config.stash[HARNESS].exercise)
        metafunc.parametrize("init", [c for _, c in cases], ids=[i for i, _ in cases])
