"""Inputs the checks sweep over and the structural probe, derived from the exercise metadata.

Shared by the hidden suites, the diagnosis and the instructor's reports (attention heat maps).
"""
from __future__ import annotations

import torch

from grader.catalog import Exercise
from grader.harness import compare, expect

PROBE_TOKENS = 4


def init_cases(ex: Exercise) -> list[tuple[str, dict]]:
    """(id, constructor arguments): the base configuration, then each sweep override."""
    cases = [("base", dict(ex.config))]
    for override in ex.sweep:
        cases.append(("-".join(f"{k}={v}" for k, v in override.items()), {**ex.config, **override}))
    return cases


def input_shapes(ex: Exercise, init: dict) -> list[tuple[int, ...]]:
    """Batch 2 and 1, tokens full/short/1 (short = fewer than context_length), 2-D where allowed."""
    d_in = ex.dim("input", init)
    ctx = ex.dim("context", init)
    tokens = [ctx, max(ctx - 3, 2), 1] if ctx else [6, 3, 1]
    shapes = [(2, tokens[1], d_in), (2, tokens[0], d_in), (1, tokens[2], d_in), (3, tokens[1], d_in)]
    if ex.has("unbatched"):
        shapes += [(tokens[0], d_in), (1, d_in)]
    return shapes


def output_shape(ex: Exercise, init: dict, x_shape: tuple[int, ...]) -> tuple[int, ...]:
    return (*x_shape[:-1], ex.dim("output", init))


def _one_hot_values(w: torch.Tensor, heads: int, hs: int) -> torch.Tensor:
    """A value projection that copies input features 0..PROBE_TOKENS into the start of every head."""
    out = torch.zeros_like(w)
    for h in range(heads):
        for j in range(PROBE_TOKENS + 1):
            out[h * hs + j, j] = 1.0
    return out


def probe_params(ex: Exercise, weights: dict[str, torch.Tensor]) -> tuple[dict, torch.Tensor]:
    """Weights and input that make each head's output spell out its attention weights.

    Token j's input is one-hot at j plus a 1 at PROBE_TOKENS; the value projection copies those
    PROBE_TOKENS + 1 features into every head, and the output projection is the identity. So
    output[..., i, h*hs + j] is head h's weight of query i on key j, and output[..., i, h*hs + T]
    is that row's sum.
    """
    init = ex.probe
    T = PROBE_TOKENS
    d_in, d_out = ex.dim("input", init), ex.dim("output", init)
    heads = ex.dim("heads", init) or 1
    hs = d_out // heads
    assert d_in >= T + 1 and hs >= T + 1, "probe config too small for the one-hot trick"
    kv_heads = ex.dim("kv_heads", init) or heads  # grouped-query attention: fewer value heads, shared
    params = {}
    for name, w in weights.items():
        role = next((r for r, prefix in ex.roles.items() if name.startswith(prefix + ".")), None)
        if name.endswith(".bias") and role in ("v", "o", "q", "k", "qkv"):
            params[name] = torch.zeros_like(w)
        elif role == "qkv":  # fused (3·d_out, d_in): rows [q; k; v], the value block gets the one-hot copy
            wqkv = w.clone()
            wqkv[2 * d_out :] = _one_hot_values(w[2 * d_out :], heads, hs)
            params[name] = wqkv
        elif role == "v":  # with grouped-query attention there are fewer (shared) value heads
            params[name] = _one_hot_values(w, kv_heads, hs)
        elif role == "o":
            params[name] = torch.eye(d_out, dtype=w.dtype)
        else:
            params[name] = w
    x = torch.zeros(T, d_in, dtype=torch.float64)
    x[torch.arange(T), torch.arange(T)] = 1.0
    x[:, T] = 1.0
    return params, x


def read_weights(ex: Exercise, out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights (..., heads, T, T), row sums (..., heads, T)) from a probe output (..., T, d_out)."""
    init = ex.probe
    T = PROBE_TOKENS
    heads = ex.dim("heads", init) or 1
    hs = ex.dim("output", init) // heads
    blocks = out.unflatten(-1, (heads, hs)).movedim(-2, -3)  # (..., heads, T, hs)
    return blocks[..., :T], blocks[..., T]


def expect_dropped_weights(w: torch.Tensor, w_ref: torch.Tensor, sums: torch.Tensor, p: float, *, where: str = "",
                           apply_hint: str = "is dropout applied?") -> None:
    """Training-mode weights w (batch, heads, T, T), read through one-hot values, against the eval-mode reference
    w_ref: each weight is dropped (0) or scaled by 1/(1-p), nothing else changes, and about p of them are dropped.
    Any RNG draw order passes; dropout anywhere else does not. where prefixes the messages ("flash path: ")."""
    kept = w_ref.expand_as(w) / (1 - p)
    live = kept > 1e-9
    expect(not torch.allclose(w, w_ref.expand_as(w), atol=1e-9),
           f"{where}no attention weight was dropped or rescaled in training mode with p={p}: {apply_hint}", "nothing_dropped")
    is_kept = (w - kept).abs() <= 1e-7 * (1 + kept)
    is_dropped = w.abs() <= 1e-12
    odd = live & ~is_kept & ~is_dropped
    if odd.any():
        b, h, i, j = (int(v) for v in odd.nonzero()[0])  # the first, as argmax; unravel_index's first call costs seconds
        expect(False, f"{where}in training mode with p={p}, query {i} gives key {j} (head {h}) weight "
                      f"{w[b, h, i, j].item():.4g}; the reference's weight there is {w_ref.expand_as(w)[b, h, i, j].item():.4g}, "
                      f"so a kept weight would be {kept[b, h, i, j].item():.4g} (÷ (1 - p)) and a dropped one 0",
               "dropout_misplaced")
    compare(sums, w.sum(-1), f"{where}sum of the dropped weights vs the output's row sum", token_dim=-1)
    frac = (is_dropped & live).sum().item() / max(1, live.sum().item())
    expect(frac > 0.2, f"{where}only {frac:.0%} of the attention weights were dropped with p={p} in training mode: "
                       f"{apply_hint}", "nothing_dropped")
    expect(frac < 0.8, f"{where}{frac:.0%} of the attention weights were dropped with p={p}", "dropout_misplaced")


def attention_weights(harness) -> dict | None:
    """{"submission", "reference": [head][query][key], "blocked": [query][key], "queries", "keys"}, or None.

    None when the submission cannot produce weights of the right shape on these inputs (it
    raised, timed out, or returned something else): the report then shows no heat map.
    """
    import torch

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
