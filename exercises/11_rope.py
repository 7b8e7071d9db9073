"""Exercise 11: rotary position embeddings (RoPE).

Instead of adding a position vector to the input, RoPE rotates queries and keys: the features
are taken in pairs, and pair i of the token at position p is rotated by the angle p * theta_i,
theta_i = base ** (-2i / d). A rotation by angle a of the query and by b of the key changes
their dot product only through a - b, so after rotation q . k depends only on the relative
position of the two tokens, never on where they sit in the sequence. That is also why a KV cache
can store rotated keys: nothing about them changes when more tokens arrive.

Contract:
    apply_rope(x, positions, base=10000.0) -> rotated x
    x: (..., T, d) with d even, e.g. queries or keys (B, H, T, head_dim); the output has x's shape and dtype.
    positions: (T,) integer tensor, the position of each of the T tokens (0..T-1, or later ones when
               decoding with a cache). base: the frequency base (Llama 2 uses 10000, Llama 3 500000).
    Pairs follow the "half-split" convention of GPT-NeoX and Hugging Face's Llama: pair i is
    (x[..., i], x[..., i + d/2]) for i = 0 .. d/2 - 1, rotated by angle positions[t] * base ** (-2i / d):
        out[..., i]       = x[..., i] * cos - x[..., i + d/2] * sin
        out[..., i + d/2] = x[..., i + d/2] * cos + x[..., i] * sin
    Compute theta and the angles in float32 or float64 (not float16 or bfloat16: at position
    3000 a half-precision angle is off by whole radians). Cast cos and sin to x's dtype at the end.

Shapes along the way:
    theta (d/2,); angles = positions[:, None] * theta[None, :] -> (T, d/2); cos, sin (T, d/2)
    x1 = x[..., :d/2], x2 = x[..., d/2:] -> (..., T, d/2); output = cat([...], dim=-1) -> (..., T, d)

Check your work with:  grade exercise 11
"""
import torch


def apply_rope(x, positions, base=10000.0):
    # TODO: theta_i = base ** (-2i / d) for i = 0 .. d/2 - 1               -> (d/2,)
    # TODO: angles = positions (as floats) times theta, one row per token  -> (T, d/2)
    # TODO: split x into its two halves and rotate each pair (x1, x2) by its angle, on x's device
    # TODO: return the two rotated halves concatenated, in x's dtype       -> (..., T, d)
    raise NotImplementedError("rotate the feature pairs by position-dependent angles")
