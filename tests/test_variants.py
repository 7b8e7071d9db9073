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


def test_two_mistakes_are_named_along_the_data_flow():
    """Of two mistakes that together explain the output, the earlier step comes first: RoPE's angles (frequencies,
    base, positions) before the rotation that applies them; the scale before the mask; the split before the merge."""
    from grader.diagnosis.behaviour import pipeline_position

    assert pipeline_position("rope_freq_no_2") < pipeline_position("rope_direction")
    assert pipeline_position("rope_base_ignored") < pipeline_position("rope_interleaved")
    assert pipeline_position("rope_positions_ignored") < pipeline_position("rope_direction")
    assert pipeline_position("rope_angle_precision") < pipeline_position("rope_direction")
    assert pipeline_position("no_scaling") < pipeline_position("mask_missing") < pipeline_position("softmax_wrong_dim")
    assert pipeline_position("heads_split_wrong") < pipeline_position("heads_merge_wrong")
    assert pipeline_position("mask_device") < pipeline_position("dropout_in_eval") < pipeline_position("dtype_not_kept")
    # the fill value is the mask's; the running sums and what rows with no key get are the softmax's
    assert pipeline_position("fp16_fill_overflow") < pipeline_position("masked_rows_not_zero")
    assert pipeline_position("scale_not_sqrt") < pipeline_position("online_softmax_no_rescale")
    assert pipeline_position("mask_device") < pipeline_position("online_softmax_no_rescale")
    assert pipeline_position("rope_interleaved") < pipeline_position("rope_direction")


def test_an_exception_is_placed_at_the_step_where_it_raises():
    """raised_at: mistakes at an earlier step come before the exception, later ones after it; at the same step the
    one more inputs show first (wider), else the exception."""
    from grader.diagnosis.behaviour import MASK, MERGE, PAIRS, raised_at, with_device
    from grader.diagnosis.diagnoses import make

    err, scale, soft, merge = (make(i) for i in ("runtime_error", "no_scaling", "softmax_wrong_dim", "heads_merge_wrong"))
    ids = lambda found: [d.id for d in found]  # noqa: E731
    assert ids(raised_at(MASK, [err], [scale, soft], wider=False)) == ["no_scaling", "runtime_error", "softmax_wrong_dim"]
    assert ids(raised_at(MASK, [err], [soft], wider=False)) == ["runtime_error", "softmax_wrong_dim"]
    assert ids(raised_at(MERGE, [err], [merge], wider=False)) == ["runtime_error", "heads_merge_wrong"]
    assert ids(raised_at(MERGE, [err], [merge], wider=True)) == ["heads_merge_wrong", "runtime_error"]
    pairing, direction = make("rope_pairing"), make("rope_direction")
    assert ids(raised_at(PAIRS, [err], [direction], wider=True)) == ["runtime_error", "rope_direction"]
    assert ids(raised_at(PAIRS, [err], [pairing], wider=True)) == ["rope_pairing", "runtime_error"]
    rescale, cpu = make("online_softmax_no_rescale"), make("tensor_on_cpu")
    assert ids(with_device([rescale], [make("mask_device")])) == ["mask_device", "online_softmax_no_rescale"]
    assert ids(with_device([rescale], [cpu])) == ["online_softmax_no_rescale", "tensor_on_cpu"]
    assert ids(with_device([make("mask_missing")], [make("mask_device")])) == ["mask_missing", "mask_device"]


def test_a_scale_by_a_size_no_contract_dimension_has_is_read_from_the_weights():
    """scaled_by: the weights' log-ratios give the whole size n of a 1/√n scale (a constant 64), with or without a
    mask; weights of another mistake (a softmax over the queries) give none."""
    from grader.diagnosis.behaviour import scaled_by

    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(2, 5, 6, generator=g, dtype=torch.float64), torch.randn(2, 7, 6, generator=g, dtype=torch.float64), \
        torch.randn(2, 7, 3, generator=g, dtype=torch.float64)
    mask = torch.rand(5, 7, generator=g) < 0.4
    mask[:, 0] = False
    for blocked in (None, mask):
        got = attend(q, k, v, blocked=blocked, bugs={"scale_wrong_dim"}, wrong_dim=64)
        assert scaled_by((q, k, v, blocked), got) == 64
        assert scaled_by((q, k, v, blocked), attend(q, k, v, blocked=blocked)) == 6
        assert scaled_by((q, k, v, blocked), attend(q, k, v, blocked=blocked, bugs={"softmax_wrong_dim"})) is None


def test_an_exception_after_right_probes_is_runtime_error_and_named_evidence_follows_the_forward():
    """evidence() runs once the probes were right: a check whose call raised and that declares no other mistake
    is the exception raised only for some inputs (runtime_error, with its message), named after what the checks
    named (mask_device, dropout_in_eval: ordered along the forward), the catch-all last."""
    from types import SimpleNamespace

    from grader.diagnosis.behaviour import evidence
    from grader.results import Status, TestResult

    tests = [TestResult("eval", "dropout", Status.FAILED, "two runs differ", code="value_mismatch",
                        evidence=("dropout_in_eval",)),
             TestResult("shapes", "shape", Status.ERROR, "your code raised IndexError at line 7: out of range", line=7,
                        code="raised_exception", evidence=("wrong_output",)),
             TestResult("device", "device", Status.ERROR, "mask on cpu", code="mask_device_mismatch",
                        evidence=("mask_device",)),
             TestResult("sizes", "numerics", Status.ERROR, "size", code="size_mismatch", evidence=("mask_not_sliced",))]
    verdict = SimpleNamespace(failures=lambda: tests)
    ids = [d.id for d in evidence(verdict)]
    assert ids == ["mask_device", "mask_not_sliced", "dropout_in_eval", "runtime_error", "wrong_output"]


def test_a_query_block_left_out_gives_fewer_rows_of_the_right_values():
    """Exercise 10's variant for a query loop that stops at the last full block: the rows it computes are right."""
    from grader.pack import exercise_module

    ex = load_catalog().get(10)
    tiled = exercise_module(ex).diagnose.__globals__["tiled_attend"]
    kit = Harness(ex, None)
    q, k, v = kit.randn(2, 2, 13, 6), kit.randn(2, 2, 13, 6, salt=1), kit.randn(2, 2, 13, 5, salt=2)
    right = tiled(q, k, v, block_size=4)
    short = tiled(q, k, v, block_size=4, bugs=frozenset({"tiled_query_remainder_dropped"}))
    assert short.shape == (2, 2, 12, 5) and torch.allclose(short, right[..., :12, :])
    assert tiled(q[..., :3, :], k, v, block_size=4, bugs=frozenset({"tiled_query_remainder_dropped"})).shape == (2, 2, 0, 5)


def test_rope_pair_angles_recover_any_frequencies():
    """Exercise 11's angle reading: the angle each half-split pair turned by, position × frequency for frequencies no
    variant models; None when the pairs are others (their lengths change)."""
    from grader.pack import exercise_module

    ex = load_catalog().get(11)
    found = exercise_module(ex).diagnose.__globals__
    rope_variant, pair_angles = found["rope_variant"], found["pair_angles"]
    x, pos = Harness(ex, None).randn(2, 5, 8), torch.arange(5)
    freq = torch.tensor([0.7, 0.3, 0.05, 0.01], dtype=torch.float64)
    angles = pos[:, None].double() * freq
    x1, x2 = x[..., :4], x[..., 4:]
    out = torch.cat([x1 * angles.cos() - x2 * angles.sin(), x2 * angles.cos() + x1 * angles.sin()], dim=-1)
    assert torch.allclose(pair_angles(x, out), angles.expand(2, 5, 4))
    assert pair_angles(x, rope_variant(x, pos, bugs=frozenset({"rope_interleaved"}))) is None


def test_an_exception_before_a_timeout_is_named_first():
    """A call that raised before a later one ran out of time: the exception is the cause (runtime_error, with what it
    said), the timeout after it; a timeout that came first stands alone."""
    from grader.diagnosis import raised_before_timeout
    from grader.results import Status, TestResult

    raised = TestResult("output_shapes", "shape", Status.ERROR, "your code raised RuntimeError at line 48: size",
                        code="size_mismatch")
    timed_out = TestResult("long_sequence", "numerics", Status.TIMEOUT, "stuck at line 40", code="timeout")
    found = raised_before_timeout([raised, timed_out])
    assert [d.id for d in found] == ["runtime_error"] and "line 48" in found[0].evidence[0]
    assert raised_before_timeout([timed_out, raised]) == []
    wrong = TestResult("matches_reference", "numerics", Status.FAILED, "differs", code="value_mismatch")
    assert raised_before_timeout([wrong, timed_out]) == []


def gqa_runs(scale_of):
    """GQA's configurations run as a variant that scales the scores by scale_of(init) (a size) instead of √head_dim."""
    from grader.probes import init_cases

    ex = load_catalog().get(9)
    kit = Harness(ex, None)
    runs = []
    for id, init in init_cases(ex):
        params = kit.weights(init)
        x = kit.randn(2, ex.dim("context", init), ex.dim("input", init), salt=77)
        got = module_forward(ex, init, params, x, frozenset({"scale_wrong_dim"}), scale_of(init))
        runs.append((id, init, params, x, [got]))
    return ex, runs


def test_a_scale_by_the_gqa_group_width_is_the_wrong_dimension():
    """The group width equals the head size in GQA's base configuration (3 = 18 / 6 heads, 6 / 2 KV heads): a
    scale by √group is right there and named from the configurations where it differs; a division by the group
    (9 in the base, where the head size's division is the same) is named scale_wrong_dim, not scale_not_sqrt."""
    from grader.diagnosis.behaviour import confirmed, swept_mistakes

    ex, runs = gqa_runs(lambda init: init["num_heads"] // init["num_kv_groups"])
    assert [d.id for d in swept_mistakes(ex, runs[1:])] == ["scale_wrong_dim"]
    ex, runs = gqa_runs(lambda init: (init["num_heads"] // init["num_kv_groups"]) ** 2)
    base, *others = runs
    kept = confirmed(ex, [(frozenset({"scale_not_sqrt"}), None)], base, others)
    assert kept == [(frozenset({"scale_wrong_dim"}), 9)]
    assert confirmed(ex, kept, base, others) == kept


def test_the_token_count_is_a_wrong_size_to_scale_by():
    """A scale by √T (the sequence length) is scale_wrong_dim: the input's token count is a candidate when given."""
    ex = load_catalog().get(4)
    init = ex.config
    assert 9 not in wrong_dims(ex, init) and 9 in wrong_dims(ex, init, tokens=9)
    assert wrong_dims(ex, init, tokens=4) == wrong_dims(ex, init)  # the right size (head_dim 4) is never wrong


def test_a_half_fixed_split_lines_up_only_when_the_tokens_equal_the_heads():
    """Exercise 5's split fixed for the queries (and keys) only: the values kept as (b, T, heads, head_dim) are read
    as (b, heads, T, head_dim), which runs only when T == heads; for other T the variant matches nothing (NaN)."""
    ex = load_catalog().get(5)
    kit = Harness(ex, None)
    init = ex.config
    nh, hs = init["num_heads"], init["hidden_size"] // init["num_heads"]
    params = kit.weights(init)
    x = kit.randn(2, nh, init["hidden_size"])
    q, k, v = (x @ params[f"w_{r}.weight"].T + params[f"w_{r}.bias"] for r in "qkv")
    q, k = (t.view(2, nh, nh, hs).transpose(1, 2) for t in (q, k))
    w = torch.softmax(q @ k.transpose(-2, -1) / hs ** 0.5, dim=-1)
    y = (w @ v.view(2, nh, nh, hs)).transpose(1, 2).reshape(2, nh, -1) @ params["w_o.weight"].T + params["w_o.bias"]
    assert torch.allclose(module_forward(ex, init, params, x, frozenset({"heads_split_values_kept"})), y)
    longer = kit.randn(2, nh + 3, init["hidden_size"])
    assert module_forward(ex, init, params, longer, frozenset({"heads_split_values_kept"})).isnan().all()


def test_the_keep_mask_with_the_next_token_used_as_the_blocked_one_is_an_inverted_mask():
    """torch.tril(ones, diagonal=1) filled with -inf blocks the past, the token and the next one (the last two rows
    have no key left): a form of mask_inverted that neither ~triu(1) nor the strict past equals."""
    from grader.diagnosis.variants import ALIASES

    kit = Harness(load_catalog().get(3), None)
    q, k, v = kit.randn(5, 4), kit.randn(5, 4, salt=1), kit.randn(5, 3, salt=2)
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
    _, w = attend(q, k, v, blocked=causal, bugs=frozenset({"mask_inverted_shifted"}))
    blocked = torch.ones(5, 5, dtype=torch.bool).tril(diagonal=1)
    assert torch.equal(w[:3] == 0, blocked[:3]) and w[3:].isnan().all()
    assert ALIASES["mask_inverted_shifted"] == "mask_inverted"


def test_an_output_projection_left_out_in_one_configuration_is_out_proj_missing():
    """A module that makes no out_proj for one head (vit-pytorch's project_out): the names missing in that
    configuration are the projection's alone, so the mistake is named, not api_mismatch; a bias alone missing, or
    a name the contract does not have, is another layout."""
    from types import SimpleNamespace

    from grader.diagnosis.behaviour import out_proj_dropped

    ex = load_catalog().get(4)
    real = Harness(ex, None)

    def kit(drop):
        def describe(init):
            names = set(real.weights(init))
            return {"params": {n: () for n in (drop(names) if init["num_heads"] == 1 else names)}}
        return SimpleNamespace(describe=describe, weights=real.weights)

    assert out_proj_dropped(ex, kit(lambda names: names - {"out_proj.weight", "out_proj.bias"}))
    assert not out_proj_dropped(ex, kit(lambda names: names - {"out_proj.bias"}))
    assert not out_proj_dropped(ex, kit(lambda names: names - {"W_query.weight"}))
    assert not out_proj_dropped(ex, kit(lambda names: names | {"w_out.weight"}))
    assert not out_proj_dropped(ex, kit(lambda names: names))


def test_heads_never_split_is_one_head_as_wide_as_d_out():
    """Multi-head attention that never splits the heads (num_heads kept, only its head size used for the scale):
    one head of width d_out, causal, still scaled by √head_dim, then the output projection; named heads_split_wrong."""
    from grader.diagnosis.variants import ALIASES

    ex = load_catalog().get(4)
    kit = Harness(ex, None)
    init = ex.config
    params = kit.weights(init)
    T = ex.dim("context", init)
    x = kit.randn(2, T, ex.dim("input", init))
    q, k, v = (x @ params[f"{ex.roles[r]}.weight"].T for r in "qkv")
    hs = ex.dim("output", init) // ex.dim("heads", init)
    scores = (q @ k.transpose(-2, -1) / hs ** 0.5).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    o = ex.roles["o"]
    y = torch.softmax(scores, dim=-1) @ v @ params[f"{o}.weight"].T + params[f"{o}.bias"]
    assert torch.allclose(module_forward(ex, init, params, x, frozenset({"heads_not_split"})), y)
    assert ALIASES["heads_not_split"] == "heads_split_wrong"


def test_cross_attention_with_heads_never_split_is_one_head_as_wide_as_d_out():
    from grader.checks.ex12_cross_attention import cross_bugs, cross_forward, inputs, padding

    ex = load_catalog().get(12)
    kit = Harness(ex, None)
    init = ex.config
    params = kit.weights(init)
    x, context = inputs(kit, ex, init)
    mask = padding([7, 3, 1])
    q = x @ params[f"{ex.roles['q']}.weight"].T
    k, v = (context @ params[f"{ex.roles[r]}.weight"].T for r in "kv")
    hs = ex.dim("output", init) // ex.dim("heads", init)
    w = torch.softmax((q @ k.transpose(-2, -1) / hs ** 0.5).masked_fill(mask[:, None, :], float("-inf")), dim=-1)
    o = ex.roles["o"]
    y = w @ v @ params[f"{o}.weight"].T + params[f"{o}.bias"]
    assert "heads_not_split" in cross_bugs(ex, init)
    assert torch.allclose(cross_forward(ex, init, params, x, context, mask, bugs=frozenset({"heads_not_split"})), y)


def test_a_constant_subtracted_from_every_score_of_a_query_leaves_it_unmasked():
    """An additive mask (scores - 10000 where blocked) rather than a fill: a query whose every key is blocked has all
    its scores shifted alike, so its softmax is the unmasked one (not the uniform average a -1e9 fill gives, not 0)."""
    import math

    from grader.checks.ex07_padding_mask import ALIASES, padded_attend, padding_bugs

    kit = Harness(load_catalog().get(7), None)
    q, k, v = kit.randn(2, 2, 4, 3), kit.randn(2, 2, 5, 3, salt=1), kit.randn(2, 2, 5, 2, salt=2)
    pad = torch.tensor([[False, False, True, True, True], [True] * 5])
    scores = q @ k.transpose(-2, -1) / math.sqrt(3) - 10000.0 * pad[:, None, None, :].double()
    want = torch.softmax(scores, dim=-1) @ v
    got = padded_attend(q, k, v, key_padding_mask=pad, bugs=frozenset({"masked_rows_unmasked"}))
    assert torch.allclose(got, want)
    unmasked = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(3), dim=-1) @ v
    assert torch.allclose(got[1], unmasked[1]) and not torch.allclose(got[1], v[1].mean(-2, keepdim=True).expand_as(got[1]))
    assert ALIASES["masked_rows_unmasked"] == "masked_rows_not_zero"
    assert "masked_rows_unmasked" in padding_bugs(False) and "masked_rows_unmasked" not in padding_bugs(True)
