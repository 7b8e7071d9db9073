"""Behavioural diagnosis: run the submission on probes and find which mistaken variant it equals.

Generic over exercises: module exercises (module(x) -> y) and attention functions are probed here;
an exercise whose module (grader/pack.py) defines diagnose() gets its own rules instead, built from
the helpers below (attempt, close, match, report, failed, evidence, api, module_rules). Failures are
read by their codes (grader/failures.py) and declared evidence, never by test names or messages.
"""
from __future__ import annotations

import torch

from grader.diagnosis.diagnoses import make
from grader.diagnosis.variants import (attend, candidates, describe, head_size, mistakes_of, module_bugs,
                                       module_forward, wrong_dims)
from grader.numerics import close  # a helper of the checks' own rules, as the docstring says

def delta(got: torch.Tensor, want: torch.Tensor) -> float:
    return (got - want).abs().nan_to_num(0.0).max().item() if got.shape == want.shape else float("inf")


class Problem(str):
    """What a probe raised: its text (a str, for evidence lines) and its failure code."""

    code: str = ""
    line: int | None = None  # the submission's line that raised, when the worker reported it

    @classmethod
    def of(cls, exc: BaseException) -> "Problem":
        from grader.failures import code_of

        p = cls(str(exc))
        p.code = code_of(exc)
        p.line = getattr(exc, "line", None)
        return p


def attempt(fn):
    """Run a probe; return (result, Problem or None). Never raises for submission behaviour."""
    from grader.failures import Mismatch
    from grader.sandbox import SubmissionError, WorkerGone

    try:
        return fn(), None
    except (SubmissionError, WorkerGone, Mismatch) as exc:
        return None, Problem.of(exc)


RAISED = ("raised_exception", "size_mismatch", "dtype_overflow")  # the submission raised: the cause to report


def crash_or(err: Problem, other: str = "wrong_output", text: str | None = None):
    """crash when the probe ended the worker, runtime_error when the submission raised (the cause, not its
    symptoms), else the given diagnosis."""
    if err.code == "worker_exit":
        return make("crash", text if text is not None else err)
    if other == "wrong_output" and err.code in RAISED:
        return make("runtime_error", f"your code raised {err}", text)
    if other == "wrong_output" and err.code == "shape_mismatch":  # it returned: the shape is what is known to be wrong
        return make("output_shape", str(err) if text is None or str(err) in text else f"{err} ({text})")
    return make(other, text if text is not None else err)


def raised_applying_mask(kit, err: Problem) -> bool:
    """The line that raised applies a mask (masked_fill, where, an added mask buffer); unknown lines count as such."""
    from grader.diagnosis.localize.source import applies_mask

    sandbox = getattr(kit, "sandbox", None)
    if err.line is None or sandbox is None:
        return True
    return applies_mask(sandbox.text.decode("utf-8", "replace"), err.line)


def failed(verdict, *codes: str):
    """Failed tests whose failure code is one of codes."""
    return [t for t in verdict.failures() if t.code in codes]


def evidence(verdict, *, own: bool | None = None) -> list:
    """Diagnoses the failing checks declared themselves evidence for (own: only the exercise module's, or only generic),
    the named mistakes first, in the order of the forward (pipeline_position). Called once the probes ran right: a
    check whose call raised and declares no named mistake shows an exception raised only for some allowed inputs
    (another rank, a cache passed): runtime_error, with its line, after the mistakes the checks named (a design
    mistake seen where the code runs comes before an exception elsewhere), before the catch-all."""
    found, raised = [], []
    for t in verdict.failures():
        if own is not None and t.own != own:
            continue
        if t.code in RAISED[:2] and set(t.evidence) <= {"wrong_output"}:
            raised.append(make("runtime_error", t.message))
        found += [make(d, t.message) for d in t.evidence]
    named = sorted((d for d in found if d.id != "wrong_output"), key=lambda d: pipeline_position(d.id))
    return named + raised + [d for d in found if d.id == "wrong_output"]


def match(ex, probes, variant_fn, bug_list, wrong: list[int], right: int, tol: tuple[float, float] | None = None):
    """probes: list of (args, submission outputs). Return [(bugs, wrong_dim)] whose variant equals every probe
    (to tol: an exercise whose checks admit a coarser precision matches its variants as coarsely)."""
    matches = []
    for bugs in candidates(bug_list, exclusive=mistakes_of(ex).exclusive):
        for wd in (wrong if "scale_wrong_dim" in bugs else [None]):
            ok = True
            for args, got in probes:
                want = variant_fn(args, bugs, wd)
                if not all(close(g, w, tol) for g, w in zip(got, want)):
                    ok = False
                    break
            if ok:
                matches.append((bugs, wd))
        if matches:
            return matches  # fewest mistakes that explain everything
    return matches


# Where in the forward a mistake sits, by the words of its (our own) bug name: of two independent mistakes the
# one earlier in the computation is listed first (README, Diagnosis: the ordering rule). RoPE's angles
# (frequencies, base, positions) are computed before the pairs are formed, and the pairs before they are turned.
# The mask step holds everything about the mask: how it is built, sliced, combined, filled and where it lives.
SOFTMAX = ("softmax", "online", "tiled", "rows")
MASK = ("mask", "padding", "causal", "diagonal", "combine", "fill")
MERGE = ("merge",)
PAIRS = ("rope_pair", "rope_inter")
STEPS = (("qkv", "split", "kv_heads", "gqa", "cross_kv"), ("rope_freq", "rope_base", "rope_positions", "rope_angle"), PAIRS,
         ("rope",), ("scal",), MASK, SOFTMAX, ("dropout",), MERGE, ("out_proj",), ("dtype",))


def pipeline_position(bug: str) -> int:
    if "rows" in bug or "rescale" in bug:  # what a query with no key left gets (masked_rows_*), the online softmax's
        return STEPS.index(SOFTMAX)         # running sums: decided in the softmax, whatever other words they hold
    return next((i for i, words in enumerate(STEPS) if any(w in bug for w in words)), STEPS.index(SOFTMAX))


def raised_at(step: tuple, raised: list, shown: list, *, wider: bool) -> list:
    """An exception that some inputs raise (raised), placed at the step of the forward where it raises, among the
    mistakes the inputs that run show (shown): those at an earlier step come first, those at a later one after it.
    At the same step, the one more inputs show comes first (wider: what runs shows its mistake on more inputs than
    raise, e.g. every dtype against bfloat16 only)."""
    at = STEPS.index(step)
    before = [d for d in shown if pipeline_position(d.id) < at or (wider and pipeline_position(d.id) == at)]
    return before + raised + [d for d in shown if d not in before]


ON_ANOTHER_DEVICE = ("mask_device", "tensor_on_cpu")


def on_another_device(verdict) -> list:
    """What the device checks declared for a failure seen only on the second device (a mask or another tensor made
    on the CPU): a mistake of its own, next to the values the CPU runs show."""
    return [make(d, t.message) for t in verdict.failures() for d in t.evidence if d in ON_ANOTHER_DEVICE][:1]


def with_device(shown: list, device: list) -> list:
    """A mask left on the CPU sits at the mask step among the mistakes the CPU runs show (a mistake after the mask,
    in the softmax, comes after it); a tensor whose step is not known (tensor_on_cpu), after them: only the device
    shows it."""
    if not device or any(d.id == device[0].id for d in shown):
        return shown
    if device[0].id == "mask_device":
        return raised_at(MASK, device, shown, wider=True)
    return shown + device


def report(ex, matches, right, prefix: str = "") -> list:
    mistakes = mistakes_of(ex)

    def order(b):
        return pipeline_position(b), b

    out = []
    for bugs, wd in matches:
        line = f"{prefix}your output equals the reference computed {describe(bugs, wd, right, mistakes.describe, order)}"
        for bug in sorted(bugs, key=order):  # the earliest step first: the cause
            out.append(make(mistakes.aliases.get(bug, bug), line))
    return out


def behavioural(ex, harness, verdict) -> list:
    from grader.pack import exercise_module

    em = exercise_module(ex)
    rules = em.diagnose if em is not None and em.diagnose is not None else \
        module_rules if ex.kind == "module" else function_rules
    harness.dtype_changes = []  # an output of another dtype is cast back, so its values are diagnosed too
    try:
        found = rules(ex, harness, verdict)
    finally:
        changes, harness.dtype_changes = harness.dtype_changes, None
    if not changes:
        return found
    # The output's dtype is the last step of the forward: what the values show comes first.
    causes = [d for d in found if d.id not in ("dtype_not_kept", "wrong_output")]
    return causes + [make("dtype_not_kept", changes[0])]


def bias_only(ex, kit) -> bool:
    """Whether the parameters differ from the contract only in the q/k/v biases (qkv_bias ignored): the names
    both have are of the contract's shapes (the shape check never ran, the names failed first)."""
    from grader.probes import init_cases

    biases = {f"{ex.roles[r]}.bias" for r in "qkv" if r in ex.roles}
    for _, init in init_cases(ex):
        info, err = attempt(lambda: kit.describe(init))
        if err is not None:
            return False
        got, want = info.get("params", {}), kit.weights(init)
        if not set(got) ^ set(want) <= biases:
            return False
        if any(tuple(got[k]) != tuple(want[k].shape) for k in set(got) & set(want)):
            return False
    return True


def api(ex, kit, verdict) -> tuple[list, bool]:
    """Contract diagnoses from the api checks; True when the parameters are too wrong to probe further."""
    found = [make("api_mismatch", t.message) for t in failed(verdict, "signature_mismatch")]
    found += [make("heads_not_divisible", t.message) for t in failed(verdict, "construct_should_raise")]
    params_failed = failed(verdict, "parameter_names", "parameter_shapes")
    if not params_failed:
        return found, False
    only_bias = not failed(verdict, "parameter_shapes") and bias_only(ex, kit)  # same names, other shapes: a layout
    if not only_bias and not failed(verdict, "parameter_shapes") and out_proj_dropped(ex, kit):
        return found + [make("out_proj_missing", t.message) for t in params_failed], True
    found += [make("qkv_bias_ignored" if only_bias else "api_mismatch", t.message) for t in params_failed]
    return found, not only_bias


def out_proj_dropped(ex, kit) -> bool:
    """Whether the only parameters missing, in the configurations where any are, are the output projection's (a
    module that skips it for one head): nothing else is missing or extra anywhere."""
    from grader.probes import init_cases

    if "o" not in ex.roles:
        return False
    own = {f"{ex.roles['o']}.weight", f"{ex.roles['o']}.bias"}
    dropped = False
    for _, init in init_cases(ex):
        info, err = attempt(lambda: kit.describe(init))
        if err is not None:
            return False
        got, want = set(info.get("params", {})), set(kit.weights(init))
        if got - want or (want - got and want - got != own & want):  # a bias alone missing is another layout
            return False
        dropped = dropped or bool(want - got)
    return dropped


# .T or transpose(0, 1) on a batch moves the batch axis even for a batch of one; code that only assumes a batch
# size (a view to a fixed shape) runs right for one and raises for two: that exception is the cause, with its line
ONE_OF_A_BATCH = "unbatched input and a batch of 1 give the right output; a batch of 2 raises"


def module_rules(ex, kit, verdict) -> list:
    found, stop = api(ex, kit, verdict)
    if stop:
        return found
    init = ex.config
    params = kit.weights(init)
    T = ex.dim("context", init) or 6
    x = kit.randn(2, T, ex.dim("input", init), salt=77)
    right = head_size(ex, init)

    def variants_matching(x):
        got, err = attempt(lambda: kit.run(init, [x], params=params)[0])
        if err is not None:
            return None, err
        return module_matches(ex, init, params, x, got), None

    got, err = attempt(lambda: kit.run(init, [x], params=params)[0])
    if err is not None:
        if err.code == "view_noncontiguous":
            return found + noncontiguous_view(ex, err, sweep_runs(ex, kit))
        sized = mask_sized_by(ex, kit, init, params, err, T)
        if sized:
            return found + [make("mask_not_sliced", sized)]
        heads = ex.dim("heads", init) or 1
        if heads > 1:  # a split or merge mixing up heads and tokens often only runs when T == heads
            matches, _ = variants_matching(kit.randn(2, heads, ex.dim("input", init), salt=79))
            if matches:
                return found + report(ex, matches, right, f"it fails for {T} tokens ({err}); with {heads} tokens ")
        if ex.has("unbatched"):
            got2, err2 = attempt(lambda: kit.run(init, [x[0]], params=params)[0])
            if err2 is None and close(got2[0], module_forward(ex, init, params, x[0])):
                one, err1 = attempt(lambda: kit.run(init, [x[:1]], params=params)[0])
                if err1 is None and close(one[0], module_forward(ex, init, params, x[:1])):
                    return found + [crash_or(err, text=ONE_OF_A_BATCH)]
                return found + [make("batched_transpose", f"2-D input works, but a batch of 2 fails: {err}")]
        if any(d.id != "heads_not_divisible" for d in found):
            return found
        # a missing divisibility check counts after what the behaviour shows: the exception every call raises first
        return [crash_or(err)] + swept_mistakes(ex, sweep_runs(ex, kit), "", "where it runs: with {id}, ") + found
    want = module_forward(ex, init, params, x)
    if not close(got[0], want):
        matches = module_matches(ex, init, params, x, got)
        if matches:
            kept = confirmed(ex, matches, ("base", init, params, x, got), sweep_runs(ex, kit))
            if ex.has("unbatched"):
                _, err2 = attempt(lambda: kit.run(init, [x[0]], params=params)[0])
                if err2 is not None and err2.code in RAISED:  # written for batches only: the exception first
                    return found + [crash_or(err2, text="a batch of 2 runs; the 2-D input (T, d_in) the contract allows "
                                                        "raises")] + report(ex, kept, right, "with a batch ")
            return found + report(ex, kept, right)
        if ex.has("unbatched"):
            got2, err2 = attempt(lambda: kit.run(init, [x[0]], params=params)[0])
            if err2 is None and close(got2[0], module_forward(ex, init, params, x[0])):
                return found + [make("batched_transpose", f"2-D input matches the reference, a batch of 2 does not "
                                                        f"(max |Δ| = {delta(got[0], want):.3g})")]
        return found
    # The base case is right: the failures are about other shapes, devices or modes.
    if ex.dims.get("context"):
        short = kit.randn(2, max(T - 3, 2), ex.dim("input", init), salt=78)
        _, err = attempt(lambda: kit.run(init, [short], params=params))
        if err is not None:  # the meta-device and dropout probes use short sequences too: same cause
            what = f"{T} tokens work, but {short.shape[1]} tokens fail"
            if err.code in RAISED and raised_applying_mask(kit, err):
                return found + [make("mask_not_sliced", f"{what}: {err}")]
            return found + [crash_or(err, text=what)]  # another step tied to the context length: its own line
    if ex.has("unbatched"):
        _, err = attempt(lambda: kit.run(init, [x[0]], params=params))
        if err is not None:  # what raises only for one input shape is reported as the exception it is, with its line
            found.append(crash_or(err, text="a batch of 2 works; only the 2-D input (T, d_in) fails"))
    if not found:
        found += swept_mistakes(ex, sweep_runs(ex, kit))
    return found + evidence(verdict, own=False)


def noncontiguous_view(ex, err: Problem, runs) -> list:
    """A view that raises at the head merge: a mistake the configurations that run (one head) show earlier in the
    forward (a mask, a scale) comes first, along the data flow; what they show after the merge comes after it."""
    return raised_at(MERGE, [make("view_noncontiguous", err)], swept_mistakes(ex, runs, "", "where it runs: with {id}, "),
                     wider=False)  # the view raises in every configuration with several heads, what runs has one


def mask_sized_by(ex, kit, init, params, err: Problem, T: int) -> str | None:
    """A causal mask cut to another size than the tokens (the features, the full context): the line applying it
    raises for T tokens, and as many tokens as that size give the right output."""
    if not ex.has("causal") or err.code not in RAISED or err.line is None or not raised_applying_mask(kit, err):
        return None
    limit = ex.dim("context", init) or T
    for n in sorted({ex.dim("context", init), ex.dim("input", init), ex.dim("output", init)} - {T, None}):
        if n > limit:
            continue
        xn = kit.randn(2, n, ex.dim("input", init), salt=76)
        got, err_n = attempt(lambda: kit.run(init, [xn], params=params)[0])
        if err_n is None and close(got[0], module_forward(ex, init, params, xn)):
            return f"{T} tokens fail where the mask is applied ({err}); {n} tokens give the right output: the mask is cut to {n}, not to the tokens"
    return None


def function_rules(ex, kit, verdict) -> list:
    c = ex.config

    def variants_of(probes, prefix: str = "") -> list:
        bug_list = ["no_scaling", "scale_not_sqrt", "scale_wrong_dim", "softmax_wrong_dim",
                    "mask_missing", "mask_inverted", "mask_zero_fill", "mask_after_softmax"]
        sizes = sorted({c["d_v"], *(n for n in (scaled_by(a, got) for a, got in probes[:1]) if n and n != c["d_k"])})
        matches = match(ex, probes, lambda a, b, wd: list(attend(*a[:3], blocked=a[3], bugs=b, wrong_dim=wd)),
                        bug_list, sizes, c["d_k"])
        return report(ex, matches, c["d_k"], prefix)

    def also_shown(probes, prefix: str) -> list:
        """After an exception some calls raise: the mistakes the calls that ran show (a design mistake, listed second)."""
        if not probes or all(all(close(g, w) for g, w in zip(got, attend(*a[:3], blocked=a[3]))) for a, got in probes):
            return []
        return variants_of(probes, prefix)

    q, k, v = kit.randn(2, c["L"], c["d_k"], salt=80), kit.randn(2, c["S"], c["d_k"], salt=81), kit.randn(2, c["S"], c["d_v"], salt=82)
    mask = torch.rand(c["L"], c["S"], generator=kit.generator(83)) < 0.4
    mask[:, 0] = False
    found = [make("api_mismatch", t.message) for t in failed(verdict, "signature_mismatch")]
    probes = []
    for kwargs in ({}, {"mask": mask}):
        got, err = attempt(lambda: kit.run(None, [q, k, v], kwargs, n_outputs=2)[0])
        if err is not None and err.code == "output_count":
            return found + [make("api_mismatch", f"{err}: the contract returns (output, weights)")]
        if err is not None and err.code == "shape_mismatch":
            raw, _ = attempt(lambda: kit.run(None, [q, k, v], kwargs, n_outputs=2, check_shapes=False)[0])
            want = attend(q, k, v, blocked=kwargs.get("mask"))
            if raw and [tuple(t.shape) for t in raw] == [tuple(w.shape) for w in reversed(want)]:
                return found + [make("api_mismatch", "the function returns (weights, output); the contract is (output, weights)")]
        if err is not None and probes:  # the same batch ran without a mask: the exception is in the mask's handling
            return found + raised_at(MASK, [crash_or(err, text="without a mask the call returns; with a mask it does not")],
                                     also_shown(probes, "without a mask "), wider=False)
        if err is not None:
            got2, err2 = attempt(lambda: kit.run(None, [q[0], k[0], v[0]], kwargs, n_outputs=2)[0])
            if err2 is None and all(close(g, w) for g, w in zip(got2, attend(q[0], k[0], v[0], blocked=kwargs.get("mask")))):
                one, err1 = attempt(lambda: kit.run(None, [q[:1], k[:1], v[:1]], kwargs, n_outputs=2)[0])
                if err1 is None and all(close(g, w) for g, w in zip(one, attend(q[:1], k[:1], v[:1], blocked=kwargs.get("mask")))):
                    return found + [crash_or(err, text=ONE_OF_A_BATCH)]
                return found + [make("batched_transpose", f"unbatched inputs work, batched ones fail: {err}")]
            masked, err_m = attempt(lambda: kit.run(None, [q, k, v], {"mask": mask}, n_outputs=2)[0])
            if err_m is None:  # only mask=None raises: the exception is in the mask's handling, after the scale
                return found + raised_at(MASK, [crash_or(err)], also_shown([((q, k, v, mask), masked)], "with a mask "),
                                         wider=False)
            return found + [crash_or(err)]
        probes.append(((q, k, v, kwargs.get("mask")), got))
    if all(all(close(g, w) for g, w in zip(got, attend(*a[:3], blocked=a[3]))) for a, got in probes):
        return found + evidence(verdict, own=False)
    for n, shaped in ((2, (q[0], k[0], v[0])), (4, (q[:, None], k[:, None], v[:, None]))):
        _, err = attempt(lambda: kit.run(None, list(shaped), {}, n_outputs=2)[0])
        if err is not None and err.code in RAISED:  # written for one rank: the exception is the cause, values second
            return found + [make("runtime_error", f"your code raised {err}",
                                 f"3-D inputs run; {n}-D inputs, which the contract allows, raise")] + \
                variants_of(probes, "with 3-D inputs ")
    return found + variants_of(probes)


def scaled_by(args, got) -> int | None:
    """The whole size n whose 1/√n the returned weights show (log w_i - log w_j = (s_i - s_j)/√n along a row's kept
    keys): a scale taken from a size no contract dimension has (a constant d_k = 64 set at the module's top); None
    when the weights show no such size (another mistake, or no scale at all)."""
    q, k, _, blocked = args
    if len(got) < 2 or got[1].shape[-2:] != (q.size(-2), k.size(-2)):
        return None
    s = (q @ k.transpose(-2, -1)).double()
    keep = torch.ones_like(s, dtype=torch.bool) if blocked is None else ~blocked.expand_as(s)
    logw = got[1].double().clamp_min(1e-300).log()
    n_kept = keep.sum(-1, keepdim=True).clamp_min(1)
    centre = lambda t: (t - (t * keep).sum(-1, keepdim=True) / n_kept) * keep  # noqa: E731
    sc, lc = centre(s), centre(logw)
    denom = (sc * sc).sum()
    if not torch.isfinite(lc).all() or denom <= 0:
        return None
    a = ((lc * sc).sum() / denom).item()
    if a <= 0:
        return None
    n = 1.0 / (a * a)
    return round(n) if 1 <= n <= 65536 and abs(n - round(n)) < 1e-3 * n else None


def module_matches(ex, init, params, x, got) -> list:
    """The module variants (mistakes, wrong size) whose output for x is the submission's, got."""
    return match(ex, [(x, got)], lambda a, b, wd: [module_forward(ex, init, params, a, b, wd)],
                 module_bugs(ex, init), wrong_dims(ex, init, x.shape[-2]), head_size(ex, init))


def sweep_runs(ex, kit, **run) -> list:
    """(configuration id, init, params, x, outputs) for each sweep configuration the submission runs in (run: how
    it is called, for a module that returns more than its output)."""
    from grader.probes import init_cases

    runs = []
    for id, init in init_cases(ex)[1:]:
        params = kit.weights(init)
        x = kit.randn(2, ex.dim("context", init) or 6, ex.dim("input", init), salt=77)
        got, err = attempt(lambda: kit.run(init, [x], params=params, **run)[0])
        if err is None:
            runs.append((id, init, params, x, got))
    return runs


def explains(ex, run, bugs) -> int | None | bool:
    """The wrong size (None if the mistakes scale by none) with which the variant with these mistakes gives the
    submission's output in this run, else False. A size is a role: its number changes with the configuration, and
    may be the right one in some."""
    _, init, params, x, got = run
    for wd in ([*wrong_dims(ex, init, x.shape[-2]), head_size(ex, init)] if "scale_wrong_dim" in bugs else [None]):
        if close(got[0], module_forward(ex, init, params, x, bugs, wd)):
            return wd
    return False


def confirmed(ex, matches, base, runs) -> list:
    """The variants that explain the base run (matches: the first found) and every other configuration the
    submission runs in: a size equal to the head size in one configuration (GQA's group width) tells itself apart
    in another. The matches when no variant explains every run."""
    if all(all(explains(ex, run, bugs) is not False for run in runs) for bugs, _ in matches):
        return matches
    for bugs in candidates(module_bugs(ex, base[1]), exclusive=mistakes_of(ex).exclusive):
        wd = explains(ex, base, bugs)
        if wd is not False and all(explains(ex, run, bugs) is not False for run in runs):
            return [(bugs, wd)]
    return matches


def swept_mistakes(ex, runs, base="the base configuration is right; ", prefix="with {id}, ") -> list:
    """The base configuration runs right (or raises: then these are listed after its exception), another does not:
    the variants that explain the first configuration that differs and every other one."""
    for i, run in enumerate(runs):
        id, init, params, x, got = run
        if close(got[0], module_forward(ex, init, params, x)):
            continue
        kept = confirmed(ex, module_matches(ex, init, params, x, got), run, runs[:i] + runs[i + 1:])
        if kept and all(explains(ex, other, kept[0][0]) is not False for other in runs):
            return report(ex, kept, head_size(ex, init), base + prefix.format(id=id))
        return []
    return []
