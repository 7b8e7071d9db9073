"""Hidden suites: pytest files run in the trusted grader against a sandboxed submission.

Generic over exercises, driven by metadata: each test carries @check(category) and, where it
applies only to some exercises, @needs(feature or kind); the runner keeps the tests whose needs
the exercise's metadata meets. An exercise's own checks live in its module (grader/pack.py) and
run through test_exercise_module.py.

@check(category, evidence=...) also declares which diagnoses a failure of the test is evidence
for: one diagnosis id, or {failure code: diagnosis id} with "*" for any other code
(grader/failures.py lists the codes).
"""
import pytest


def check(category: str, evidence: str | dict | None = None):
    return pytest.mark.check(category, evidence=evidence)


def needs(*features: str):
    return pytest.mark.needs(*features)


# What a failure of a device check is evidence for: a CPU tensor that is a mask (boolean, or zeros and -inf) names
# the mask's device; any other CPU tensor (a scale, frequencies, positions) is named as such; an exception raised
# only on the device is reported as the cause it is.
ON_DEVICE = {"mask_device_mismatch": "mask_device", "device_mismatch": "tensor_on_cpu", "raised_exception": "runtime_error"}
