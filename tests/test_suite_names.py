"""Test names say what they check (issue 14, item 10): a name that promises a property fails only for it."""
from grader.catalog import load_catalog
from grader.runner import grade
from tests.conftest import CORPUS


def test_no_scaling_fails_no_test_named_after_row_sums():
    # without the 1/sqrt(d) scaling each row of weights still sums to 1: a test named so must not fail
    v = grade(exercise=load_catalog().get(1), path=CORPUS / "01" / "no_scaling.py", warm=True)
    failing = {t.name: t.message for t in v.failures()}
    assert "attention_weights_match_reference" in failing
    for name, message in failing.items():
        assert "sum_to_one" not in name or "sum" in message, (name, message)


def test_generic_checks_name_their_property():
    names = {t.name for t in grade(exercise=load_catalog().get(2), path=CORPUS / "02" / "mask_inverted.py",
                                   warm=True).tests}
    assert {"uses_only_allowed_imports_and_apis", "file_imports_without_error", "entry_point_has_contract_signature",
            "mask_broadcasts_over_batch_and_heads", "large_scores_stay_finite_and_match"} <= names
