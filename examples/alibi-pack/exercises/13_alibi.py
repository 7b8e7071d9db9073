"""Exercise 13: ALiBi, attention with linear biases (Press et al., 2022), instead of position embeddings.

Contract:
    alibi_attention(query, key, value) -> output
    query, key, value (B, H, T, d); output (B, H, T, d) in the inputs' dtype.
    Causal: query i attends to keys 0..i only. Scores q_i·k_j / sqrt(d) get the bias -m_h * (i - j),
    where head h (0-based) has the slope m_h = 2 ** (-8 * (h + 1) / H).

Check your work with:  grade exercise 13 --pack examples/alibi-pack
"""
import math

import torch


def alibi_attention(query, key, value):
    # TODO: scores (B, H, T, T) scaled by 1/sqrt(d)
    # TODO: the bias -slope_h * (i - j), one slope per head
    # TODO: block the future, softmax over the keys, weights @ value
    raise NotImplementedError("compute causal attention with ALiBi biases")
