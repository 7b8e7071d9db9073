"""Checks shared by exercises whose call differs from module(x) -> tensor (kind "custom_module")."""
from grader.suites import check, needs
from grader.suites.test_api import expect_contract_parameters


@check("api")
@needs("custom_module")
def test_custom_module_parameters_named_as_contract(kit, ex, init):
    """Parameters have the contract's names and shapes (masks and caches are not parameters)."""
    expect_contract_parameters(kit, init)
