"""Behavioural diagnosis: run the submission on probes and find which mistaken variant it equals."""
from __future__ import annotations

import torch

from grader.diagnosis import make
from grader.diagnosis.variants import ALIASES, attend, candidates, describe, module_bugs, module_forward, wrong_dims
from grader.results import Status

EXACT = 1e-7


def _close(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Equal to 1e-7, where the variant's NaNs (rows with every key blocked) match anything:
    a submission that fills with -1e9 or finfo.min instead of -inf differs only there."""
    if got.shape != want.shape:
        return False
    known = ~torch.isnan(want)
    return bool(known.any()) and torch.allclose(got[known], want[known], rtol=EXACT, atol=EXACT, equal_nan=True)


def _delta(got: torch.Tensor, want: torch.Tensor) -> float:
    return (got - want).abs().nan_to_num(0.0).max().item() if got.shape == want.shape else float("inf")


def _try(fn):
    """Run a probe; return (result, error message or None). Never raises for submission behaviour."""
    from grader.sandbox import SubmissionError, WorkerGone
    from grader.suites.harness import Mismatch

    try:
        return fn(), None
    except (SubmissionError, WorkerGone, Mismatch) as exc:
        return None, str(exc)


def _failed(verdict, prefix: str):
    return [t for t in verdict.tests if t.name.startswith(prefix) and t.status not in (Status.PASSED, Status.SKIPPED)]


def _match(probes, variant_fn, bug_list, wrong: list[int], right: int):
    """probes: list of (args, submission outputs). Return [(bugs, wrong_dim)] whose variant equals every probe."""
    matches = []
    for bugs in candidates(bug_list):
        for wd in (wrong if "scale_wrong_dim" in bugs else [None]):
            ok = True
            for args, got in probes:
                want = variant_fn(args, bugs, wd)
                if not all(_close(g, w) for g, w in zip(got, want)):
                    ok = False
                    break
            if ok:
                matches.append((bugs, wd))
        if matches:
            return matches  # fewest mistakes that explain everything
    return matches


def _report(matches, right, prefix: str = "") -> list:
    out = []
    for bugs, wd in matches:
        line = f"{prefix}your output equals the reference computed {describe(bugs, wd, right)}"
        for bug in sorted(bugs, key=lambda b: list(bugs).index(b)):
            out.append(make(ALIASES.get(bug, bug), line))
    return out


def behavioural(ex, harness, verdict) -> list:
    special = next((fn for feature, fn in BY_FEATURE.items() if ex.has(feature)), None)  # exercises 6+
    if special is not None:
        return special(ex, harness, verdict)
    return (_module if ex.kind == "module" else _function)(ex, harness, verdict)


def _bias_only(ex, kit) -> bool:
    """Whether the parameter names differ from the contract only in the q/k/v biases (qkv_bias ignored)."""
    from grader.suites.cases import init_cases

    biases = {f"{ex.roles[r]}.bias" for r in "qkv" if r in ex.roles}
    for _, init in init_cases(ex):
        info, err = _try(lambda: kit.describe(init))
        if err is not None:
            return False
        if not set(info.get("params", {})) ^ set(kit.weights(init)) <= biases:
            return False
    return True


def _api(ex, kit, verdict, params_test: str) -> tuple[list, bool]:
    """Contract diagnoses from the api tests; True when the parameters are too wrong to probe further."""
    found = [make("api_mismatch", t.message) for t in _failed(verdict, "entry_point") + _failed(verdict, "rejects_heads")]
    params_failed = _failed(verdict, params_test)
    if not params_failed:
        return found, False
    bias_only = _bias_only(ex, kit)
    found += [make("qkv_bias_ignored" if bias_only else "api_mismatch", t.message) for t in params_failed]
    return found, not bias_only


def _module(ex, kit, verdict) -> list:
    found, stop = _api(ex, kit, verdict, "parameters_named")
    if stop:
        return found
    init = ex.config
    params = kit.weights(init)
    T = ex.dim("context", init) or 6
    x = kit.randn(2, T, ex.dim("input", init), salt=77)
    right = ex.dim("output", init) // (ex.dim("heads", init) or 1)

    def variants_matching(x):
        got, err = _try(lambda: kit.run(init, [x], params=params)[0])
        if err is not None:
            return None, err
        return _match([(x, got)], lambda a, b, wd: [module_forward(ex, init, params, a, b, wd)],
                      module_bugs(ex, init), wrong_dims(ex, init), right), None

    got, err = _try(lambda: kit.run(init, [x], params=params)[0])
    if err is not None:
        if "view size is not compatible" in err:
            return found + [make("view_noncontiguous", err)]
        heads = ex.dim("heads", init) or 1
        if heads > 1:  # a split or merge mixing up heads and tokens often only runs when T == heads
            matches, _ = variants_matching(kit.randn(2, heads, ex.dim("input", init), salt=79))
            if matches:
                return found + _report(matches, right, f"it fails for {T} tokens ({err}); with {heads} tokens ")
        if ex.has("unbatched"):
            got2, err2 = _try(lambda: kit.run(init, [x[0]], params=params)[0])
            if err2 is None and _close(got2[0], module_forward(ex, init, params, x[0])):
                return found + [make("batched_transpose", f"2-D input works, but a batch of 2 fails: {err}")]
        return found + [make("crash" if "ended the worker" in err else "wrong_output", err)] if not found else found
    want = module_forward(ex, init, params, x)
    if not _close(got[0], want):
        matches = _match([(x, got)], lambda a, b, wd: [module_forward(ex, init, params, a, b, wd)],
                         module_bugs(ex, init), wrong_dims(ex, init), right)
        if matches:
            return found + _report(matches, right)
        if ex.has("unbatched"):
            got2, err2 = _try(lambda: kit.run(init, [x[0]], params=params)[0])
            if err2 is None and _close(got2[0], module_forward(ex, init, params, x[0])):
                return found + [make("batched_transpose", f"2-D input matches the reference, a batch of 2 does not "
                                                        f"(max |Δ| = {_delta(got[0], want):.3g})")]
        return found
    # The base case is right: the failures are about other shapes, devices or modes.
    if ex.dims.get("context"):
        short = kit.randn(2, max(T - 3, 2), ex.dim("input", init), salt=78)
        _, err = _try(lambda: kit.run(init, [short], params=params))
        if err is not None:
            found.append(make("mask_not_sliced", f"{T} tokens work, but {short.shape[1]} tokens fail: {err}"))
            return found  # the meta-device and dropout probes use short sequences too: same cause
    if ex.has("unbatched"):
        _, err = _try(lambda: kit.run(init, [x[0]], params=params))
        if err is not None:
            found.append(make("batched_transpose", f"a batch works, but 2-D input fails: {err}"))
    for t in _failed(verdict, "runs_on_meta"):
        found.append(make("mask_device", t.message))
    for t in _failed(verdict, "eval_mode"):
        found.append(make("dropout_in_eval", t.message))
    for t in _failed(verdict, "training_drops"):
        missing = "no attention weight was dropped" in t.message or t.message.startswith("only")
        found.append(make("dropout_missing" if missing else "dropout_misplaced", t.message))
    for t in _failed(verdict, "training_mode_with_zero"):
        found.append(make("dropout_misplaced", t.message))
    return found


def _function(ex, kit, verdict) -> list:
    c = ex.config
    q, k, v = kit.randn(2, c["L"], c["d_k"], salt=80), kit.randn(2, c["S"], c["d_k"], salt=81), kit.randn(2, c["S"], c["d_v"], salt=82)
    mask = torch.rand(c["L"], c["S"], generator=kit.generator(83)) < 0.4
    mask[:, 0] = False
    found = []
    for t in _failed(verdict, "entry_point"):
        found.append(make("api_mismatch", t.message))
    probes = []
    for kwargs in ({}, {"mask": mask}):
        got, err = _try(lambda: kit.run(None, [q, k, v], kwargs, n_outputs=2)[0])
        if err is not None and "has shape" in err:
            raw, _ = _try(lambda: kit.run(None, [q, k, v], kwargs, n_outputs=2, check_shapes=False)[0])
            want = attend(q, k, v, blocked=kwargs.get("mask"))
            if raw and [tuple(t.shape) for t in raw] == [tuple(w.shape) for w in reversed(want)]:
                return found + [make("api_mismatch", "the function returns (weights, output); the contract is (output, weights)")]
        if err is not None:
            got2, err2 = _try(lambda: kit.run(None, [q[0], k[0], v[0]], kwargs, n_outputs=2)[0])
            if err2 is None and all(_close(g, w) for g, w in zip(got2, attend(q[0], k[0], v[0], blocked=kwargs.get("mask")))):
                return found + [make("batched_transpose", f"unbatched inputs work, batched ones fail: {err}")]
            if "mask" in kwargs:
                return found + [make("wrong_output", f"with a mask: {err}")]
            return found + [make("wrong_output", err)]
        probes.append(((q, k, v, kwargs.get("mask")), got))
    if all(all(_close(g, w) for g, w in zip(got, attend(*a[:3], blocked=a[3]))) for a, got in probes):
        for t in _failed(verdict, "function_runs_on_meta"):
            found.append(make("mask_device", t.message))
        return found
    bug_list = ["no_scaling", "scale_not_sqrt", "scale_wrong_dim", "softmax_wrong_dim",
                "mask_missing", "mask_inverted", "mask_zero_fill", "mask_after_softmax"]
    matches = _match(probes, lambda a, b, wd: list(attend(*a[:3], blocked=a[3], bugs=b, wrong_dim=wd)),
                     bug_list, [c["d_v"]], c["d_k"])
    return found + _report(matches, c["d_k"])


# -- exercise 6: GPT-2 attention, a fused c_attn and a flash path ------------------------------------
def _gpt2(ex, kit, verdict) -> list:
    """The manual path (config flash=False) as for exercise 4, then the token-split probe, then the flash path."""
    found = _module(ex, kit, verdict)
    if found and found[0].id in ("wrong_output", "crash"):
        return _qkv_split_tokens(ex, kit) or found
    if found and found[0].id != "wrong_output":
        return found
    return found + _flash(ex, kit, verdict)


def _qkv_split_tokens(ex, kit) -> list:
    """c_attn's output split along the tokens (split(n_embd, dim=1), chunk(3, dim=1)) runs only when the
    tokens divide evenly: try T = 3·n_embd, where both forms do, and match the variants there."""
    n = ex.dim("input", ex.config)
    init = {**ex.config, ex.dims["context"]: 3 * n}
    params = kit.weights(init)
    x = kit.randn(2, 3 * n, n, salt=76)
    got, err = _try(lambda: kit.run(init, [x], params=params)[0])
    if err is not None:
        return []
    right = n // (ex.dim("heads", init) or 1)
    matches = _match([(x, got)], lambda a, b, wd: [module_forward(ex, init, params, a, b, wd)],
                     module_bugs(ex, init), wrong_dims(ex, init), right)
    return _report(matches, right, f"it fails for {ex.dim('context', ex.config)} tokens; with {3 * n} tokens ")


def _flash(ex, kit, verdict) -> list:
    """The flash path against the variants: a missing is_causal is the mask_missing variant."""
    init = {**ex.config, "flash": True}
    params = kit.weights(init)
    x = kit.randn(2, ex.dim("context", init), ex.dim("input", init), salt=77)
    right = ex.dim("output", init) // (ex.dim("heads", init) or 1)
    flash_failures = [t for t in verdict.failures() if t.name.startswith("flash_") or "flash=True" in t.name]
    got, err = _try(lambda: kit.run(init, [x], params=params)[0])
    if err is not None:
        return [make("crash" if "ended the worker" in err else "flash_paths_disagree", f"with flash=True: {err}")]
    if not _close(got[0], module_forward(ex, init, params, x)):
        matches = _match([(x, got)], lambda a, b, wd: [module_forward(ex, init, params, a, b, wd)],
                         module_bugs(ex, init), wrong_dims(ex, init), right)
        found = []
        for bugs, wd in matches:
            if bugs == {"mask_missing"}:
                found.append(make("flash_not_causal", "with flash=True your output equals the reference computed "
                                                      "with no causal mask; with flash=False it is right"))
            else:
                found += _report([(bugs, wd)], right, "with flash=True (flash=False is right) ")
        return found or [make("flash_paths_disagree", *(f"{t.name}: {t.message}" for t in flash_failures[:2]))]
    found = []
    for t in _failed(verdict, "flash_eval_mode"):
        found.append(make("dropout_in_eval", t.message))
    for t in _failed(verdict, "flash_training_drops"):
        missing = "no attention weight was dropped" in t.message
        found.append(make("dropout_missing" if missing else "dropout_misplaced", t.message))
    for t in _failed(verdict, "flash_runs_on_meta"):
        found.append(make("mask_device", t.message))
    if not found and flash_failures:
        found.append(make("flash_paths_disagree", *(f"{t.name}: {t.message}" for t in flash_failures[:2])))
    return found


# -- exercise 7: padding plus causal masks -------------------------------------------------------------
def _padding(ex, kit, verdict) -> list:
    from grader.diagnosis.variants import padded_attend, padding_bugs
    from grader.suites.test_padding import padding, qkv

    c = ex.config
    found = [make("api_mismatch", t.message) for t in _failed(verdict, "entry_point")]
    S = c["S"]
    settings = [{"key_padding_mask": padding([S, 4, 1], S, left=True), "causal": True},
                {"key_padding_mask": padding([S, 3, 0], S)}]

    def probes_for(B):
        out = []
        for i, kwargs in enumerate(settings):
            args = qkv(kit, c, B=B, salt=90 + 3 * i)
            if B != c["B"]:
                kwargs = {**kwargs, "key_padding_mask": kwargs["key_padding_mask"][:B]}
            got, err = _try(lambda: kit.run(None, args, kwargs)[0])
            if err is not None:
                return None, err
            out.append(((args, kwargs), got))
        return out, None

    probes, err = probes_for(c["B"])
    if err is not None:
        if "has dtype" in err:
            return found + [make("dtype_not_kept", err)]
        if "overflow" in err:
            return found + [make("fp16_fill_overflow", err)]
        if c["H"] > 1 and "must match the size" in err:  # a (B, 1, S) mask lines up with the heads: try B == H
            probes, err2 = probes_for(c["H"])
            if err2 is None:
                matches = _match(probes, lambda a, b, wd: [padded_attend(*a[0], **a[1], bugs=b, wrong_dim=wd)],
                                 padding_bugs(False), [c["d_v"]], c["d_k"])
                if matches:
                    return found + _report(matches, c["d_k"], f"it fails for {c['B']} sequences of {c['H']} heads ({err}); "
                                                              f"with {c['H']} sequences ")
        return found + [make("crash" if "ended the worker" in err else "wrong_output", err)]
    if all(_close(got[0], padded_attend(*a, **kw)) for (a, kw), got in probes):
        for t in _failed(verdict, "padded_gradients"):
            found.append(make("masked_rows_nan_grad" if "NaN" in t.message else "wrong_output", t.message))
        for t in _failed(verdict, "half_precision"):
            if "has dtype" in t.message:
                found.append(make("dtype_not_kept", t.message))
            else:
                found.append(make("fp16_fill_overflow" if ("overflow" in t.message or "NaN" in t.message) else "wrong_output",
                                  t.message))
        for t in _failed(verdict, "padded_matches") + _failed(verdict, "padded_output_shapes"):
            if "has dtype" in t.message:
                found.append(make("dtype_not_kept", t.message))
        for t in _failed(verdict, "padded_runs_on_meta"):
            found.append(make("mask_device", t.message))
        return found
    with_nan = any(bool(torch.isnan(got[0]).any()) for _, got in probes)
    matches = _match(probes, lambda a, b, wd: [padded_attend(*a[0], **a[1], bugs=b, wrong_dim=wd)],
                     padding_bugs(with_nan), [c["d_v"]], c["d_k"])
    return found + _report(matches, c["d_k"])


# -- exercise 8: decoding with a KV cache -----------------------------------------------------------------
def _kv_cache(ex, kit, verdict) -> list:
    """Full forward (exercise 4's variants), then one cached token, then a cached chunk, each from the reference's cache."""
    from dataclasses import replace

    from grader.diagnosis.variants import KV_BUGS, kv_step
    from grader.suites.test_kv_cache import PROMPT

    found, stop = _api(ex, kit, verdict, "custom_module_parameters_named")
    if stop:
        return found
    init = ex.config
    params = kit.weights(init)
    d_in, nh = ex.dim("input", init), ex.dim("heads", init)
    hs = ex.dim("output", init) // nh
    T = ex.dim("context", init)
    x = kit.randn(2, T, d_in, salt=77)
    causal = replace(ex, features=ex.features | {"causal"})  # the full pass is exercise 4's causal attention
    y_full, k_full, v_full = kv_step(ex, init, params, x)
    right = hs

    def run(args):
        return _try(lambda: kit.run(init, args, params=params, n_outputs=3, check_shapes=False)[0])

    got, err = run([x])
    if err is not None:
        if "output tensor(s)" in err:
            return found + [make("api_mismatch", f"forward must return (y, k_cache, v_cache): {err}")]
        if "view size is not compatible" in err:
            return found + [make("view_noncontiguous", err)]
        return found + [make("crash" if "ended the worker" in err else "wrong_output", err)]
    if not _close(got[0], y_full):
        matches = _match([(x, got[:1])], lambda a, b, wd: [module_forward(causal, init, params, a, b, wd)],
                         module_bugs(causal, init), wrong_dims(causal, init), right)
        return found + (_report(matches, right) or [make("wrong_output", f"full forward: y differs from the reference "
                                                                        f"(max |Δ| = {_delta(got[0], y_full):.3g})")])
    want = (2, nh, T, hs)
    if any(tuple(c.shape) != want for c in got[1:]):
        return found + [make("kv_cache_layout", f"without a cache, {T} tokens returned caches of shapes "
                                                f"{[tuple(c.shape) for c in got[1:]]}; expected {want}")]
    if not (_close(got[1], k_full) and _close(got[2], v_full)):
        return found + [make("kv_cache_layout", "without a cache, the returned caches are not the keys and values "
                                                "after the head split")]
    cache = (k_full[:, :, :PROMPT], v_full[:, :, :PROMPT])
    probes = []
    for n in (1, 3):
        new = x[:, PROMPT : PROMPT + n]
        got, err = run([new, *cache])
        if err is not None:
            what = f"with {PROMPT} cached tokens, {n} new token(s) fail: {err}"
            if n > 1 and probes:
                return found + [make("kv_cache_mask_offset", f"one new token works; {what}")]
            return found + [make("kv_cache_layout", what)]
        y, k, v = got
        P = k.shape[2] if k.dim() == 4 else None
        if P in (n, PROMPT) and tuple(k.shape) != (2, nh, PROMPT + n, hs):
            return found + [make("kv_cache_not_appended", f"after {PROMPT} cached and {n} new token(s) the returned "
                                                          f"k_cache holds {P} positions, not {PROMPT + n}")]
        if tuple(k.shape) != (2, nh, PROMPT + n, hs) or tuple(v.shape) != tuple(k.shape):
            return found + [make("kv_cache_layout", f"after {PROMPT} cached and {n} new token(s) the returned caches are "
                                                    f"{tuple(k.shape)} and {tuple(v.shape)}; expected {(2, nh, PROMPT + n, hs)}")]
        _, k_swapped, _ = kv_step(ex, init, params, new, *cache, bugs=frozenset({"kv_cache_order"}))
        if _close(k, k_swapped) and not _close(k, k_full[:, :, : PROMPT + n]):
            return found + [make("kv_cache_order", f"after {PROMPT} cached and {n} new token(s) the returned k_cache "
                                                   "holds the new positions first")]
        probes.append(((new, *cache), [y]))
        if not _close(y, y_full[:, PROMPT : PROMPT + n]):
            matches = _match(probes, lambda a, b, wd: [kv_step(ex, init, params, *a, bugs=b)[0]], list(KV_BUGS), [], right)
            if matches:
                return found + _report(matches, right, f"with {PROMPT} cached and {n} new token(s), ")
            return found + [make("wrong_output", f"with {PROMPT} cached and {n} new token(s), y differs from the full "
                                                 f"forward pass (max |Δ| = {_delta(y, y_full[:, PROMPT:PROMPT + n]):.3g})")]
    for t in _failed(verdict, "cached_step_runs_on_meta"):
        found.append(make("mask_device", t.message))
    return found


# -- exercise 9: grouped-query attention ------------------------------------------------------------------
def _gqa(ex, kit, verdict) -> list:
    """As exercise 4 (the variants know the KV groups), then what only shows when KV heads are shared."""
    shapes = [t for t in _failed(verdict, "parameters_named") if "expected (" in t.message]
    if shapes:  # the right names with the wrong shapes: usually W_key/W_value as wide as W_query
        return [make("api_mismatch", t.message) for t in shapes]
    found = _module(ex, kit, verdict)
    if found and found[0].id not in ("wrong_output", "crash", "view_noncontiguous"):
        return found
    init = ex.config
    nh = ex.dim("heads", init)
    x = kit.randn(2, ex.dim("context", init), ex.dim("input", init), salt=77)
    _, err = _try(lambda: kit.run(init, [x], params=kit.weights(init)))
    if err is not None:
        mha = {**init, ex.dims["kv_heads"]: nh}
        params = kit.weights(mha)
        got, err2 = _try(lambda: kit.run(mha, [x], params=params)[0])
        if err2 is None and _close(got[0], module_forward(ex, mha, params, x)):
            return [make("gqa_kv_heads_wrong", f"with num_kv_groups = num_heads = {nh} (multi-head attention) the output "
                                               f"is right; with {ex.dim('kv_heads', init)} KV heads: {err}")]
    for t in _failed(verdict, "query_heads_share"):
        if t.status is Status.FAILED:
            return [make("gqa_group_mapping", t.message)]
    return found


# -- exercise 10: tiled attention with an online softmax ---------------------------------------------------
def _tiled(ex, kit, verdict) -> list:
    from grader.diagnosis.variants import SCALE_BUGS, TILED_BUGS, tiled_attend
    from grader.suites.test_tiled import cases, qkv

    c = ex.config
    found = [make("api_mismatch", t.message) for t in _failed(verdict, "entry_point")]
    probes = []
    for i, (what, L, S, kwargs) in enumerate(cases(c)[:3]):
        args = qkv(kit, c, L=L, S=S, salt=100 + 10 * i)
        got, err = _try(lambda: kit.run(None, args, kwargs)[0])
        if err is not None:
            if "has dtype" in err:
                return found + [make("dtype_not_kept", err)]
            return found + [make("crash" if "ended the worker" in err else "wrong_output", f"{what}: {err}")]
        probes.append(((args, kwargs), got))
    if all(_close(got[0], tiled_attend(*a, **kw)) for (a, kw), got in probes):
        for t in _failed(verdict, "long_sequence"):
            built = "out of memory" in t.message or "a tiled implementation holds at most" in t.message
            found.append(make("scores_materialised" if t.status is Status.FAILED and built else "wrong_output", t.message))
        for t in _failed(verdict, "tiled_large_scores"):
            found.append(make("online_softmax_overflow" if "NaN or inf" in t.message else "wrong_output", t.message))
        for t in _failed(verdict, "tiled_runs_on_meta"):
            found.append(make("mask_device", t.message))
        for t in _failed(verdict, "tiled_matches") + _failed(verdict, "tiled_causal"):
            found.append(make("wrong_output", t.message))
        return found
    matches = _match(probes, lambda a, b, wd: [tiled_attend(*a[0], **a[1], bugs=b, wrong_dim=wd)],
                     [*TILED_BUGS, *SCALE_BUGS], [c["d_v"]], c["d_k"])
    return found + _report(matches, c["d_k"])


# -- exercise 11: rotary position embeddings ----------------------------------------------------------------
def _rope(ex, kit, verdict) -> list:
    from grader.diagnosis.variants import ROPE_BUGS, rope_variant
    from grader.suites.test_rope import cases

    found = [make("api_mismatch", t.message) for t in _failed(verdict, "entry_point")]
    probes = []
    for i, (what, shape, pos, kwargs) in enumerate(cases(ex.config)[:3]):
        x = kit.randn(*shape, salt=110 + i)
        got, err = _try(lambda: kit.run(None, [x, pos], kwargs, check_shapes=False)[0])
        if err is not None:
            if "has dtype" in err:
                return found + [make("dtype_not_kept", err)]
            return found + [make("crash" if "ended the worker" in err else "wrong_output", f"{what}: {err}")]
        probes.append(((x, pos, kwargs), got))
    if all(_close(got[0], rope_variant(x, pos, **kw)) for (x, pos, kw), got in probes):
        for t in _failed(verdict, "rope_float32") + _failed(verdict, "rope_output_shapes"):
            found.append(make("dtype_not_kept" if "has dtype" in t.message else "wrong_output", t.message))
        for t in _failed(verdict, "rope_runs_on_meta"):
            found.append(make("tensor_on_cpu", t.message))
        for t in _failed(verdict, "rope_matches") + _failed(verdict, "rope_gradients") + _failed(verdict, "dot_product"):
            found.append(make("wrong_output", t.message))
        return found
    matches = _match(probes, lambda a, b, wd: [rope_variant(a[0], a[1], **a[2], bugs=b)], list(ROPE_BUGS), [], 0)
    if matches:
        return found + _report(matches, 0)
    worst = max(_delta(got[0], rope_variant(x, pos, **kw)) for (x, pos, kw), got in probes)
    if worst < 1e-3:  # right up to the rounding of float32 angles (about 2e-4 at position 3000)
        return found + [make("rope_angle_precision", f"your output is within {worst:.2g} of the reference: the error of "
                                                     "angles computed in float32, largest at the largest positions")]
    return found


# -- exercise 12: cross-attention ------------------------------------------------------------------------------
def _cross(ex, kit, verdict) -> list:
    from grader.diagnosis.variants import cross_bugs, cross_forward
    from grader.suites.test_cross import inputs, padding, run

    found = [make("api_mismatch", t.message) for t in _failed(verdict, "entry_point") + _failed(verdict, "rejects_heads")]
    params_failed = _failed(verdict, "custom_module_parameters_named")
    if params_failed:
        bias_only = _bias_only(ex, kit) and not any("expected (" in t.message for t in params_failed)
        found += [make("qkv_bias_ignored" if bias_only else "api_mismatch", t.message) for t in params_failed]
        if not bias_only:
            return found

    def probes_for(init, B=3, T=4):
        params = kit.weights(init)
        x, context = inputs(kit, ex, init, B=B, T_=T, salt=120)
        out = []
        for mask in (None, padding([7, 3, 1][:B])):
            got, err = _try(lambda: run(kit, init, params, x, context, mask)[0])
            if err is not None:
                return None, err
            out.append(((x, context, mask), got))
        return (params, out), None

    init = ex.config
    right = ex.dim("output", init) // (ex.dim("heads", init) or 1)
    wrong = sorted({ex.dim("input", init), ex.dim("context_width", init), ex.dim("output", init)} - {right})
    result, err = probes_for(init)
    if err is not None:
        # shapes that only line up by accident: d_context = d_in (keys from x), T = S (mask on the queries),
        # B = heads (a (B, 1, S) mask lined up with the heads)
        same = {**init, ex.dims["context_width"]: ex.dim("input", init)}
        heads = ex.dim("heads", init) or 1
        for alt, kw, what in [(same, {}, "d_context = d_in"), (init, {"T": 7}, "as many queries as context tokens"),
                              (init, {"B": heads}, f"a batch of {heads} (= heads)")]:
            result2, err2 = probes_for(alt, **kw)
            if err2 is None:
                params, probes = result2
                matches = _match(probes, lambda a, b, wd: [cross_forward(ex, alt, params, *a, bugs=b, wrong_dim=wd)],
                                 cross_bugs(ex, alt), wrong, right)
                if matches:
                    return found + _report(matches, right, f"it fails for the base case ({err}); with {what} ")
        if "view size is not compatible" in err:
            return found + [make("view_noncontiguous", err)]
        return found + [make("crash" if "ended the worker" in err else "wrong_output", err)]
    params, probes = result
    if all(_close(got[0], cross_forward(ex, init, params, *a)) for a, got in probes):
        for t in _failed(verdict, "cross_runs_on_meta"):
            found.append(make("mask_device", t.message))
        return found
    matches = _match(probes, lambda a, b, wd: [cross_forward(ex, init, params, *a, bugs=b, wrong_dim=wd)],
                     cross_bugs(ex, init), wrong, right)
    return found + _report(matches, right)


BY_FEATURE = {"flash_path": _gpt2, "key_padding": _padding, "kv_cache": _kv_cache, "gqa": _gqa, "tiled": _tiled,
              "rope": _rope, "cross": _cross}
