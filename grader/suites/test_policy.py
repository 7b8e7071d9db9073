from grader.suites import check
from grader.harness import expect


@check("policy")
def test_uses_only_allowed_imports_and_apis(kit):
    """The file parses, imports only allowed modules and uses no forbidden API or escape hatch."""
    expect(not kit.blocked, kit.blocked or "", "policy_blocked")
