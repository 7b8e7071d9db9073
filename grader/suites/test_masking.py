import torch

from grader.suites import check, needs
from grader.probes import probe_params, read_weights
from grader.harness import compare, expect, unravel


@check("masking")
@needs("causal")
def test_future_tokens_do_not_leak(kit, ex):
    """Changing token j leaves the outputs at every earlier token unchanged."""
    init = ex.config
    params = kit.weights(init)
    T = ex.dim("context", init)
    x = kit.randn(2, T, ex.dim("input", init))
    changed = {}
    for j in range(T - 1, 0, -1):
        changed[j] = x.clone()
        changed[j][:, j] = kit.randn(2, ex.dim("input", init), salt=50 + j) * 3
    results = kit.runs([kit.call(init, [x], params=params)] + [kit.call(init, [x2], params=params) for x2 in changed.values()])
    base, _ = next(results)
    for j, (out, _) in zip(changed, results):
        delta = (out[0][:, :j] - base[0][:, :j]).abs().amax(dim=(0, 2))  # per earlier token
        if delta.max() > 1e-9:
            i = int(delta.argmax())
            expect(False, f"changing token {j} changed the output at token {i} by {delta[i].item():.3g}: "
                          "a token can see the future", "future_token_leak")


def _probe(kit, ex, *, train=False, batch=1, seed=0):
    params, x = probe_params(ex, kit.weights(ex.probe))
    xb = x.expand(batch, *x.shape).clone()
    got, _ = kit.run(ex.probe, [xb], params=params, train=train, seed=seed)
    want, _ = kit.ref_run({**ex.probe}, [xb[:1]], params=params)
    return read_weights(ex, got[0]), read_weights(ex, want[0])


@check("masking")
@needs("module")
def test_attention_weights_match_reference(kit, ex):
    """Attention weights (read through one-hot values) sum to 1 per query and equal the reference's."""
    (w, sums), (w_ref, _) = _probe(kit, ex)
    compare(sums, torch.ones_like(sums), "sum of each query's attention weights", token_dim=-1)
    compare(w, w_ref, "attention weights (batch, head, query, key)", token_dim=-2)


@check("masking")
@needs("causal")
def test_future_keys_get_zero_weight(kit, ex):
    """Attention weights above the diagonal are exactly zero; a past key the reference weighs is weighed too
    (judged against the reference's own weights, so a sliding window or other sparser causal pattern can use it)."""
    (w, _), (w_ref, _) = _probe(kit, ex)
    T = w.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    leak = w.masked_fill(~future, 0).abs()
    if leak.max() > 1e-12:
        *_, i, j = unravel(int(leak.argmax()), leak.shape)
        expect(False, f"query {i} puts weight {leak.max().item():.3g} on future key {j}", "future_weight")
    dead = (w <= 0) & (w_ref.expand_as(w) > 0) & ~future
    if dead.any():
        *_, i, j = unravel(int(dead.int().argmax()), dead.shape)
        where = "its own position" if i == j else f"key {j}, in its past"
        expect(False, f"query {i} gives {where} weight 0 where the reference does not", "diagonal_blocked")


@check("masking")
@needs("module")
def test_large_inputs_stay_finite_and_match(kit, ex):
    """Large activations (float32) give finite outputs that still match the reference."""
    init = ex.config
    params = kit.weights(init)
    x = kit.randn(2, ex.dim("context", init) or 6, ex.dim("input", init)) * 40
    got, _ = kit.run(init, [x.float()], params=params, dtype=torch.float32)
    expect(bool(torch.isfinite(got[0]).all()), "the output contains NaN or inf for large inputs", "non_finite")
    want, _ = kit.ref_run(init, [x], params=params)
    compare(got[0], want[0], "float32 output for large inputs", dtype=torch.float32)


def _mask(kit, L, S, salt=0):
    g = kit.generator(300 + salt)
    mask = torch.rand(L, S, generator=g) < 0.4
    mask[torch.arange(L), torch.randint(0, S, (L,), generator=g)] = False  # every query keeps a key
    return mask


@check("masking")
@needs("function")
def test_mask_blocks_keys(kit, ex):
    """Keys where the mask is True get weight exactly 0; the rest match the reference."""
    c = ex.config
    q, k, v = kit.randn(2, c["L"], c["d_k"]), kit.randn(2, c["S"], c["d_k"], salt=1), kit.randn(2, c["S"], c["d_v"], salt=2)
    mask = _mask(kit, c["L"], c["S"])
    (out, w), _ = kit.run(None, [q, k, v], {"mask": mask}, n_outputs=2)
    leak = w.masked_fill(~mask, 0).abs()
    if leak.max() > 0:
        *_, i, j = unravel(int(leak.argmax()), leak.shape)
        expect(False, f"query {i} puts weight {leak.max().item():.3g} on key {j}, which the mask blocks (True = blocked)",
               "future_weight")
    want, _ = kit.ref_run(None, [q, k, v], {"mask": mask})
    compare(w, want[1], "masked weights")
    compare(out, want[0], "masked output")


@check("masking")
@needs("function")
def test_mask_broadcasts_over_batch_and_heads(kit, ex):
    """An (L, S) mask broadcasts over batch and heads; a (B, 1, L, S) mask over heads."""
    c = ex.config
    q, k, v = kit.randn(2, 3, c["L"], c["d_k"]), kit.randn(2, 3, c["S"], c["d_k"], salt=1), kit.randn(2, 3, c["S"], c["d_v"], salt=2)
    masks = (_mask(kit, c["L"], c["S"], 1), torch.stack([_mask(kit, c["L"], c["S"], 2), _mask(kit, c["L"], c["S"], 3)])[:, None])
    for mask, ((out, w), _) in zip(masks, kit.runs([kit.call(None, [q, k, v], {"mask": mask}, n_outputs=2) for mask in masks])):
        want, _ = kit.ref_run(None, [q, k, v], {"mask": mask})
        compare(w, want[1], f"weights with a mask of shape {tuple(mask.shape)}")
        compare(out, want[0], f"output with a mask of shape {tuple(mask.shape)}")


@check("masking")
@needs("function")
def test_weights_rows_sum_to_one(kit, ex):
    """Every row of weights (one query) sums to 1, with and without a mask."""
    c = ex.config
    q, k, v = kit.randn(2, c["L"], c["d_k"]), kit.randn(2, c["S"], c["d_k"], salt=1), kit.randn(2, c["S"], c["d_v"], salt=2)
    settings = ({}, {"mask": _mask(kit, c["L"], c["S"], 4)})
    for kwargs, ((_, w), _) in zip(settings, kit.runs([kit.call(None, [q, k, v], kwargs, n_outputs=2) for kwargs in settings])):
        sums = w.sum(-1)
        compare(sums, torch.ones_like(sums), "row sums of weights" + (" with a mask" if kwargs else ""), token_dim=-1)


@check("masking")
@needs("function")
def test_large_scores_stay_finite_and_match(kit, ex):
    """Large scores in float32 with a mask give finite results matching the reference."""
    c = ex.config
    q, k, v = kit.randn(2, c["L"], c["d_k"]) * 30, kit.randn(2, c["S"], c["d_k"], salt=1) * 30, kit.randn(2, c["S"], c["d_v"], salt=2)
    mask = _mask(kit, c["L"], c["S"], 5)
    (out, w), _ = kit.run(None, [q.float(), k.float(), v.float()], {"mask": mask}, dtype=torch.float32, n_outputs=2)
    expect(bool(torch.isfinite(out).all() and torch.isfinite(w).all()), "NaN or inf in the result for large scores",
           "non_finite")
    want, _ = kit.ref_run(None, [q, k, v], {"mask": mask})
    compare(out, want[0], "float32 output for large scores", dtype=torch.float32)
