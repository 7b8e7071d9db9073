"""Exercise 2: one decoding step of grouped-query attention (GQA) against a KV cache.

Contract:
    gqa_decode_step(q, k_cache, v_cache) -> output
    q (B, H, 1, d): the new token's queries; k_cache, v_cache (B, G, S, d), H divisible by G.
    Query head h uses KV group h // (H // G). Scores q·k / sqrt(d), softmax over the S cached
    positions (no mask); output (B, H, 1, d) in the inputs' dtype.

Check your work with:  grade exercise 2 FILE --pack window-pack
"""
import math

import torch


def gqa_decode_step(q, k_cache, v_cache):
    # TODO: n = H // G query heads per KV group; give each query head its group's keys and values
    # TODO: scores (B, H, 1, S) scaled by 1/sqrt(d), softmax over the cached positions
    # TODO: weights @ values -> (B, H, 1, d)
    raise NotImplementedError("compute one grouped-query attention decode step")
