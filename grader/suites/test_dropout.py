from grader.suites import check, needs
from grader.probes import expect_dropped_weights, probe_params, read_weights
from grader.harness import compare


@check("dropout", evidence="dropout_in_eval")
@needs("dropout")
def test_eval_mode_is_deterministic_and_dropout_free(kit, ex):
    """With dropout=0.5 in eval mode, outputs are reproducible and equal the dropout-free reference."""
    init = {**ex.config, ex.dims["dropout"]: 0.5}
    params = kit.weights(init)
    x = kit.randn(2, ex.dim("context", init), ex.dim("input", init))
    (first, _), (second, _) = kit.runs([kit.call(init, [x], params=params, seed=1), kit.call(init, [x], params=params, seed=2)])
    compare(second[0], first[0], "two eval-mode runs")
    want, _ = kit.ref_run(init, [x], params=params)
    compare(first[0], want[0], "eval-mode output with dropout=0.5")


@check("dropout", evidence="dropout_misplaced")
@needs("dropout")
def test_training_with_zero_dropout_matches_reference(kit, ex):
    """With dropout=0.0, training mode gives the reference output."""
    init = {**ex.config, ex.dims["dropout"]: 0.0}
    params = kit.weights(init)
    x = kit.randn(2, ex.dim("context", init), ex.dim("input", init))
    got, _ = kit.run(init, [x], params=params, train=True)
    want, _ = kit.ref_run(init, [x], params=params)
    compare(got[0], want[0], "training-mode output with dropout=0.0")


@check("dropout", evidence={"nothing_dropped": "dropout_missing", "*": "dropout_misplaced"})
@needs("dropout")
def test_training_drops_attention_weights(kit, ex):
    """In training mode each attention weight is either dropped (0) or scaled by 1/(1-p), and nothing else changes.

    Read through one-hot values: any RNG draw order passes, dropout anywhere else does not.
    """
    p = ex.dim("dropout", ex.probe)
    params, x = probe_params(ex, kit.weights(ex.probe))
    batch = 16
    got, _ = kit.run(ex.probe, [x.expand(batch, *x.shape).clone()], params=params, train=True, seed=3)
    want, _ = kit.ref_run(ex.probe, [x[None]], params=params)
    w, sums = read_weights(ex, got[0])  # (batch, heads, T, T)
    w_ref, _ = read_weights(ex, want[0])
    expect_dropped_weights(w, w_ref, sums, p, apply_hint="is dropout applied (and only in training)?")
