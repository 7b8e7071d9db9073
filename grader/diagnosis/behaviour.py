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


def _module(ex, kit, verdict) -> list:
    found = []
    for t in _failed(verdict, "entry_point") + _failed(verdict, "rejects_heads"):
        found.append(make("api_mismatch", t.message))
    params_failed = _failed(verdict, "parameters_named")
    if params_failed:
        bias_only = _bias_only(ex, kit)
        found += [make("qkv_bias_ignored" if bias_only else "api_mismatch", t.message) for t in params_failed]
        if not bias_only:
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
