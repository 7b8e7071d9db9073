"""Attention weights of a submission and of the reference, for the heat maps of a report.

Runs while the sandbox is alive. Modules get the structural probe of the hidden suites (one-hot
values, identity output projection: the output spells out each head's weights); the attention
function returns its weights itself, so it gets queries and keys under a causal-style mask.
"""
from __future__ import annotations


def attention_weights(harness) -> dict | None:
    """{"submission", "reference": [head][query][key], "blocked": [query][key], "queries", "keys"}, or None.

    None when the submission cannot produce weights of the right shape on these inputs (it
    raised, timed out, or returned something else): the report then shows no heat map.
    """
    import torch

    from grader.suites.cases import probe_params, read_weights

    ex = harness.exercise
    try:
        if ex.kind == "function":
            c = ex.config
            q = harness.randn(c["L"], c["d_k"], salt=700)
            k = harness.randn(c["S"], c["d_k"], salt=701)
            v = harness.randn(c["S"], c["d_v"], salt=702)
            blocked = torch.ones(c["L"], c["S"], dtype=torch.bool).triu(diagonal=1 + c["S"] - c["L"])
            (_, got), _ = harness.run(None, [q, k, v], {"mask": blocked}, n_outputs=2)
            (_, want), _ = harness.ref_run(None, [q, k, v], {"mask": blocked})
            got, want = got[None], want[None]  # one "head"
        else:
            params, x = probe_params(ex, harness.weights(ex.probe))
            (out,), _ = harness.run(ex.probe, [x[None]], params=params)
            (ref,), _ = harness.ref_run(ex.probe, [x[None]], params=params)
            got, want = read_weights(ex, out[0])[0], read_weights(ex, ref[0])[0]  # (heads, T, T)
            T = got.shape[-1]
            blocked = (torch.ones(T, T, dtype=torch.bool).triu(diagonal=1) if ex.has("causal")
                       else torch.zeros(T, T, dtype=torch.bool))
    except Exception:  # the submission's failure is already in the verdict; no picture then
        return None
    if got.shape != want.shape or got.dim() != 3:
        return None
    return {
        "submission": got.tolist(),
        "reference": want.tolist(),
        "blocked": blocked.tolist(),
        "queries": [f"q{i}" for i in range(got.shape[-2])],
        "keys": [f"k{j}" for j in range(got.shape[-1])],
    }
