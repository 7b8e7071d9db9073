# expect: not_started
"""Exercise 7: padding plus causal masks, without NaN, in float16 and bfloat16 too.

A batch holds sequences of different lengths, padded to the same length. The padded positions
are not tokens: no query may attend to them. With left padding (common for generation) and a
causal mask, the first queries of a short sequence have no key left at all; their output must
be 0, not NaN. And the fill value must exist in the input's dtype: -1e9 does not fit in float16.

Contract:
    padded_attention(query, key, value, key_padding_mask=None, causal=False) -> output
    query (B, H, L, d_k), key (B, H, S, d_k), value (B, H, S, d_v); output (B, H, L, d_v),
    in the dtype of the inputs (float64, float32, float16 or bfloat16).
    key_padding_mask: bool (B, S), True = padding (that key does not exist), the convention of
                      torch.nn.MultiheadAttention; None = no padding.
    causal: if True (then L == S), query i may only attend to keys 0..i.
    Scores are scaled by 1/sqrt(d_k). A query with no key left to attend to outputs zeros,
    and gradients stay finite. You may not call torch.nn.functional.scaled_dot_product_attention.

Shapes along the way:
    scores (B, H, L, S); causal mask (L, S); padding mask (B, S) -> (B, 1, 1, S);
    combined "blocked" mask (B, 1, L, S), broadcast over the heads.

Check your work with:  grade exercise 7
"""
import math

import torch


def padded_attention(query, key, value, key_padding_mask=None, causal=False):
    # TODO: scores = query @ key^T / sqrt(d_k)                               -> (B, H, L, S)
    # TODO: blocked = causal mask (L, S) OR padding mask viewed as (B, 1, 1, S) -> (B, 1, L, S)
    # TODO: fill the blocked scores with a value that exists in scores.dtype, then softmax over the keys
    # TODO: rows with every key blocked must give 0 (not NaN, not an average of the values)
    raise NotImplementedError("compute attention with a padding mask")
