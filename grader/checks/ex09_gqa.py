"""Exercise 9 (gqa): grouped-query attention, num_kv_groups key/value heads shared by consecutive query heads.

The variants of grouped key/value heads are generic (grader/diagnosis/variants.py, dims.kv_heads).
"""
import torch

from grader.diagnosis.diagnoses import make
from grader.diagnosis.behaviour import attempt, close, failed, module_rules
from grader.diagnosis.variants import module_forward
from grader.harness import compare, expect
from grader.probes import input_shapes, probe_params, read_weights
from grader.results import Status
from grader.suites import check


@check("api")
def test_rejects_heads_not_divisible_by_groups(kit, ex):
    """Construction fails when num_heads is not divisible by num_kv_groups."""
    init = {**ex.config, ex.dims["heads"]: 6, ex.dims["kv_heads"]: 4, ex.dims["output"]: 18}
    expect(kit.construct_raises(init) is not None,
           f"{ex.entry}({', '.join(f'{k}={v}' for k, v in init.items())}) should raise: 6 query heads cannot be split "
           "into 4 equal groups", "construct_should_raise")


def _ends(ex):
    heads = ex.dim("heads")
    return [("multi-head attention (num_kv_groups = num_heads)", {**ex.config, ex.dims["kv_heads"]: heads}),
            ("multi-query attention (num_kv_groups = 1)", {**ex.config, ex.dims["kv_heads"]: 1})]


@check("numerics")
def test_both_ends_mha_and_mqa(kit, ex):
    """num_kv_groups = num_heads is multi-head attention and num_kv_groups = 1 is multi-query attention: both match."""
    for what, init in _ends(ex):
        params = kit.weights(init)
        x = kit.randn(*input_shapes(ex, init)[1], salt=21)
        got, _ = kit.run(init, [x], params=params)
        want, _ = kit.ref_run(init, [x], params=params)
        compare(got[0], want[0], f"output of {what}")


@check("masking", evidence="gqa_group_mapping")
def test_query_heads_share_kv_heads_in_consecutive_groups(kit, ex):
    """With every query head given the same queries, heads of one group attend alike: head h uses KV head h // group_size."""
    init = ex.probe
    nh, nkv = ex.dim("heads", init), ex.dim("kv_heads", init)
    g = nh // nkv
    params, x = probe_params(ex, kit.weights(init, salt=5))
    wq = params[f"{ex.roles['q']}.weight"].clone()
    hs = wq.shape[0] // nh
    wq[:] = wq[:hs].repeat(nh, 1)  # every query head asks the same question
    params[f"{ex.roles['q']}.weight"] = wq
    got, _ = kit.run(init, [x[None]], params=params)
    want, _ = kit.ref_run(init, [x[None]], params=params)
    w, _ = read_weights(ex, got[0])  # (1, nh, T, T)
    w_ref, _ = read_weights(ex, want[0])
    groups = [w_ref[0, j * g] for j in range(nkv)]  # what each KV head's keys give
    for h in range(nh):
        used = [j for j in range(nkv) if torch.allclose(w[0, h], groups[j], atol=1e-7)]
        if used != [h // g]:
            seen = f"KV head {used[0]}" if used else "no KV head's keys"
            expect(False, f"query head {h} attends like {seen}; with {nh} query heads and {nkv} KV heads it must use "
                          f"KV head {h // g} = {h} // {g} (consecutive heads share: repeat_interleave, not repeat)",
                   "value_mismatch")
    compare(w, w_ref, "attention weights (batch, head, query, key)", token_dim=-2)


# -- diagnosis ----------------------------------------------------------------------------------------------
def diagnose(ex, kit, verdict) -> list:
    """As exercise 4 (the variants know the KV groups), then what only shows when KV heads are shared."""
    shapes = failed(verdict, "parameter_shapes")
    if shapes:  # the right names with the wrong shapes: usually W_key/W_value as wide as W_query
        return [make("api_mismatch", t.message) for t in shapes]
    found = module_rules(ex, kit, verdict)
    if found and found[0].id not in ("wrong_output", "crash", "runtime_error", "view_noncontiguous"):
        return found
    init = ex.config
    nh = ex.dim("heads", init)
    x = kit.randn(2, ex.dim("context", init), ex.dim("input", init), salt=77)
    _, err = attempt(lambda: kit.run(init, [x], params=kit.weights(init)))
    mha = {**init, ex.dims["kv_heads"]: nh}
    params = kit.weights(mha)
    got, err2 = attempt(lambda: kit.run(mha, [x], params=params)[0])
    mha_right = err2 is None and close(got[0], module_forward(ex, mha, params, x))
    if err is not None and mha_right:
        return [make("gqa_kv_heads_wrong", f"with num_kv_groups = num_heads = {nh} (multi-head attention) the output "
                                           f"is right; with {ex.dim('kv_heads', init)} KV heads: {err}")]
    for t in verdict.failures():  # a pairing of heads is all that differs only if multi-head attention is right
        if "gqa_group_mapping" in t.evidence and t.status is Status.FAILED and mha_right:
            return [make("gqa_group_mapping", t.message)]
    return found
