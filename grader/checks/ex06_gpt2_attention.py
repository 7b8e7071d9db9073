"""Exercise 6 (GPT-2 attention): the flash path, F.scaled_dot_product_attention, must agree with the manual path.

The generic suites run the manual path (config flash=False) and sweep flash=True through the
numerics; these checks hold the flash path to everything else: causality, dropout only in
training, gradients, another device, and agreement with the manual path on the same weights.
The diagnosis probes the manual path as any module, then the token-split probe, then the flash path.
"""
import torch

from grader.diagnosis.diagnoses import make
from grader.diagnosis.behaviour import attempt, close, crash_or, evidence, match, module_rules, report
from grader.diagnosis.variants import module_bugs, module_forward, wrong_dims
from grader.harness import compare, expect, unravel
from grader.probes import expect_dropped_weights, input_shapes, probe_params, read_weights
from grader.suites import ON_DEVICE, check


def _flash(config: dict, flash: bool = True) -> dict:
    return {**config, "flash": flash}


@check("numerics")
def test_flash_and_manual_paths_agree(kit, ex):
    """flash=True and flash=False give the same output (and the reference's) on the same weights, float64 and float32."""
    init = ex.config
    params = kit.weights(init)
    shape = input_shapes(ex, init)[1]
    x = kit.randn(*shape, salt=11)
    want, _ = kit.ref_run(init, [x], params=params)
    outs = {}
    for flash in (False, True):
        got, _ = kit.run(_flash(init, flash), [x], params=params)
        outs[flash] = got[0]
        compare(got[0], want[0], f"{'flash' if flash else 'manual'} path output for input {shape}")
    compare(outs[True], outs[False], "flash path vs manual path")
    got, _ = kit.run(_flash(init), [x.float()], params=params, dtype=torch.float32)
    compare(got[0], want[0], "flash path float32 output", dtype=torch.float32)


@check("numerics")
def test_flash_gradients_match_reference(kit, ex):
    """Backward through the flash path gives the reference's gradients for the input and every parameter."""
    init = _flash(ex.config)
    params = kit.weights(init)
    shape = input_shapes(ex, init)[0]
    x = kit.randn(*shape, salt=12)
    gout = kit.randn(*shape[:-1], ex.dim("output", init), salt=13)
    _, got = kit.run(init, [x], params=params, grad_out=[gout])
    _, want = kit.ref_run(init, [x], params=params, grad_out=[gout])
    for name, g in want.items():
        what = "input" if name == "arg0" else name.removeprefix("param.")
        expect(name in got, f"flash path: no gradient reached {what}: is the output detached from it?", "no_gradient")
        compare(got[name], g, f"flash path gradient of {what}", token_dim=None)


@check("masking")
def test_flash_future_tokens_do_not_leak(kit, ex):
    """On the flash path too, changing token j leaves the outputs at every earlier token unchanged."""
    init = _flash(ex.config)
    params = kit.weights(init)
    T = ex.dim("context", init)
    x = kit.randn(2, T, ex.dim("input", init), salt=14)
    base, _ = kit.run(init, [x], params=params)
    for j in range(T - 1, 0, -1):
        x2 = x.clone()
        x2[:, j] = kit.randn(2, ex.dim("input", init), salt=60 + j) * 3
        out, _ = kit.run(init, [x2], params=params)
        delta = (out[0][:, :j] - base[0][:, :j]).abs().amax(dim=(0, 2))
        if delta.max() > 1e-9:
            i = int(delta.argmax())
            expect(False, f"flash path: changing token {j} changed the output at token {i} by {delta[i].item():.3g}: "
                          "a token can see the future (is_causal=True?)", "future_token_leak")


@check("masking")
def test_flash_attention_weights_match(kit, ex):
    """Read through one-hot values, the flash path's attention weights are causal and equal the reference's."""
    init = _flash(ex.probe)
    params, x = probe_params(ex, kit.weights(init))
    got, _ = kit.run(init, [x[None]], params=params)
    want, _ = kit.ref_run(_flash(ex.probe, False), [x[None]], params=params)
    (w, sums), (w_ref, _) = read_weights(ex, got[0]), read_weights(ex, want[0])
    T = w.shape[-1]
    leak = w.masked_fill(~torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1), 0).abs()
    if leak.max() > 1e-12:
        *_, i, j = unravel(int(leak.argmax()), leak.shape)
        expect(False, f"flash path: query {i} puts weight {leak.max().item():.3g} on future key {j}", "future_weight")
    compare(sums, torch.ones_like(sums), "flash path: sum of each query's attention weights", token_dim=-1)
    compare(w, w_ref, "flash path attention weights (batch, head, query, key)", token_dim=-2)


@check("dropout", evidence="dropout_in_eval")
def test_flash_eval_mode_is_dropout_free(kit, ex):
    """With dropout=0.5 in eval mode the flash path is deterministic and equals the dropout-free reference."""
    init = {**_flash(ex.config), ex.dims["dropout"]: 0.5}
    params = kit.weights(init)
    x = kit.randn(2, ex.dim("context", init), ex.dim("input", init), salt=15)
    first, _ = kit.run(init, [x], params=params, seed=1)
    second, _ = kit.run(init, [x], params=params, seed=2)
    compare(second[0], first[0], "flash path: two eval-mode runs")
    want, _ = kit.ref_run(init, [x], params=params)
    compare(first[0], want[0], "flash path: eval-mode output with dropout=0.5 (dropout_p must be 0.0 in eval mode)")


@check("dropout", evidence={"nothing_dropped": "dropout_missing", "*": "dropout_misplaced"})
def test_flash_training_drops_attention_weights(kit, ex):
    """In training mode the flash path drops attention weights: each is 0 or scaled by 1/(1-p), nothing else changes."""
    init = _flash(ex.probe)
    p = ex.dim("dropout", init)
    params, x = probe_params(ex, kit.weights(init))
    got, _ = kit.run(init, [x.expand(16, *x.shape).clone()], params=params, train=True, seed=3)
    want, _ = kit.ref_run(_flash(ex.probe, False), [x[None]], params=params)
    (w, sums), (w_ref, _) = read_weights(ex, got[0]), read_weights(ex, want[0])
    expect_dropped_weights(w, w_ref, sums, p, where="flash path: ", apply_hint="pass dropout_p when training")


@check("device", evidence=ON_DEVICE)
def test_flash_runs_on_another_device(kit, ex):
    """The flash path runs on a second device (cuda:0, emulated where no GPU is), for fewer tokens than block_size too,
    and gives what it gives on the CPU (code that takes another path when x.is_cuda is checked there)."""
    init = _flash(ex.config)
    params = kit.weights(init)
    for shape in input_shapes(ex, init)[:2]:
        x = kit.randn(*shape)
        (got,), _ = kit.run(init, [x], params=params, device="emulated")
        (cpu,), _ = kit.run(init, [x], params=params)
        compare(got, cpu, f"flash path on the device, input {shape} (against your own output on the CPU)")


# -- diagnosis ----------------------------------------------------------------------------------------------
def diagnose(ex, kit, verdict) -> list:
    """The manual path (config flash=False) as any module, then the token-split probe, then the flash path."""
    found = module_rules(ex, kit, verdict)
    if found and found[0].id in ("wrong_output", "crash", "runtime_error"):
        return _qkv_split_tokens(ex, kit) or found
    if any(d.id not in ("wrong_output", "heads_not_divisible") for d in found):  # a missing check comes after behaviour
        return found
    return found + _flash_rules(ex, kit, verdict)


def _qkv_split_tokens(ex, kit) -> list:
    """c_attn's output split along the tokens (split(n_embd, dim=1), chunk(3, dim=1)) runs only when the
    tokens divide evenly: try T = 3·n_embd, where both forms do, and match the variants there."""
    n = ex.dim("input", ex.config)
    init = {**ex.config, ex.dims["context"]: 3 * n}
    params = kit.weights(init)
    x = kit.randn(2, 3 * n, n, salt=76)
    got, err = attempt(lambda: kit.run(init, [x], params=params)[0])
    if err is not None:
        return []
    right = n // (ex.dim("heads", init) or 1)
    matches = match(ex, [(x, got)], lambda a, b, wd: [module_forward(ex, init, params, a, b, wd)],
                    module_bugs(ex, init), wrong_dims(ex, init), right)
    return report(ex, matches, right, f"it fails for {ex.dim('context', ex.config)} tokens; with {3 * n} tokens ")


def _flash_rules(ex, kit, verdict) -> list:
    """The flash path against the variants: a missing is_causal is the mask_missing variant."""
    init = _flash(ex.config)
    params = kit.weights(init)
    x = kit.randn(2, ex.dim("context", init), ex.dim("input", init), salt=77)
    right = ex.dim("output", init) // (ex.dim("heads", init) or 1)
    flash_failures = [t for t in verdict.failures() if t.own or (t.init or {}).get("flash")]
    got, err = attempt(lambda: kit.run(init, [x], params=params)[0])
    if err is not None:
        return [crash_or(err, "flash_paths_disagree", f"with flash=True: {err}")]
    if not close(got[0], module_forward(ex, init, params, x)):
        matches = match(ex, [(x, got)], lambda a, b, wd: [module_forward(ex, init, params, a, b, wd)],
                        module_bugs(ex, init), wrong_dims(ex, init), right)
        found = []
        for bugs, wd in matches:
            if bugs == {"mask_missing"}:
                found.append(make("flash_not_causal", "with flash=True your output equals the reference computed "
                                                      "with no causal mask; with flash=False it is right"))
            elif bugs == {"scale_not_sqrt"}:  # 1/√hs by hand, then again inside the fused kernel
                found.append(make("flash_scaled_twice", "with flash=True your output equals the reference with the scores "
                                                        "divided by head_size instead of √head_size; with flash=False it "
                                                        "is right"))
            else:
                found += report(ex, [(bugs, wd)], right, "with flash=True (flash=False is right) ")
        return found or [make("flash_paths_disagree", *(f"{t.name}: {t.message}" for t in flash_failures[:2]))]
    found = evidence(verdict, own=True)
    if not found and flash_failures:
        found.append(make("flash_paths_disagree", *(f"{t.name}: {t.message}" for t in flash_failures[:2])))
    return found
