"""The diagnosis variants: with no mistake they equal each reference; each mistake changes the output."""
import pytest
import torch

from grader.catalog import load_catalog
from grader.diagnosis.variants import attend, module_bugs, module_forward, wrong_dims
from grader.harness import Harness

MODULES = [e for e in load_catalog().exercises if e.kind == "module"]


@pytest.mark.parametrize("ex", MODULES, ids=lambda e: e.slug)
def test_variant_without_mistakes_is_the_reference(ex):
    kit = Harness(ex, None)
    init = ex.config
    params = kit.weights(init)
    x = kit.randn(2, ex.dim("context", init) or 6, ex.dim("input", init))
    want, _ = kit.ref_run(init, [x], params=params)
    assert torch.allclose(module_forward(ex, init, params, x), want[0], atol=1e-12)


@pytest.mark.parametrize("ex", MODULES, ids=lambda e: e.slug)
def test_every_mistake_changes_the_output(ex):
    kit = Harness(ex, None)
    init = ex.config
    params = kit.weights(init)
    x = kit.randn(2, ex.dim("context", init) or 6, ex.dim("input", init))
    right = module_forward(ex, init, params, x)
    for bug in module_bugs(ex, init):
        for wd in (wrong_dims(ex, init) if bug == "scale_wrong_dim" else [None]):
            wrong = module_forward(ex, init, params, x, frozenset({bug}), wd)
            assert not torch.allclose(wrong, right, atol=1e-6, equal_nan=True), bug


def test_function_variant_is_the_reference():
    ex = load_catalog().get(2)
    kit = Harness(ex, None)
    q, k, v = kit.randn(2, 5, 6), kit.randn(2, 7, 6, salt=1), kit.randn(2, 7, 3, salt=2)
    mask = torch.rand(5, 7, generator=kit.generator(3)) < 0.4
    mask[:, 0] = False
    want, _ = kit.ref_run(None, [q, k, v], {"mask": mask})
    got = attend(q, k, v, blocked=mask)
    assert torch.allclose(got[0], want[0]) and torch.allclose(got[1], want[1])
