"""Exercise 10: tiled attention with an online softmax.

softmax(Q K^T / sqrt(d_k)) V builds an L x S score matrix: for 16 heads and 2048 tokens in
float32 that is 256 MiB, and it grows with the square of the sequence. FlashAttention never builds
it. It walks over blocks of keys and keeps, for every query, three running quantities: the largest
score seen so far (m), the sum of exp(score - m) (l), and the sum of exp(score - m) * value (acc).
When a new block raises the maximum, what was summed so far is rescaled by exp(m_old - m_new).
At the end, output = acc / l, exactly the softmax result.

Contract:
    tiled_attention(query, key, value, causal=False, block_size=64) -> output
    query (B, H, L, d_k), key (B, H, S, d_k), value (B, H, S, d_v); output (B, H, L, d_v), in the input's dtype.
    Equal to softmax(query @ key^T / sqrt(d_k)) @ value (within floating-point tolerance).
    causal=True (then L == S): query i attends to keys 0..i only.
    Work in blocks of block_size queries and block_size keys: never build a score tensor larger
    than (B, H, block_size, block_size). L and S need not be multiples of block_size.
    The grader runs it on 2 x 8 heads x 2048 tokens (a 256 MiB score matrix) and records the largest tensor.
    You may not call torch.nn.functional.scaled_dot_product_attention.

Shapes along the way (bq, bk <= block_size):
    q block (B, H, bq, d_k); k, v blocks (B, H, bk, d_k | d_v); s (B, H, bq, bk)
    m, l (B, H, bq, 1); acc (B, H, bq, d_v); output rows (B, H, bq, d_v), concatenated along dim 2

Check your work with:  grade exercise 10
"""
import math

import torch


def tiled_attention(query, key, value, causal=False, block_size=64):
    # TODO: for each block of queries: m = -inf, l = 0, acc = 0, shaped (B, H, bq, 1), (B, H, bq, 1), (B, H, bq, d_v)
    # TODO:   for each block of keys: s = q_block @ k_block^T / sqrt(d_k); with causal, mask the keys after each query
    # TODO:     m_new = max(m, max of s over the keys); p = exp(s - m_new); correction = exp(m - m_new)
    # TODO:     l = l * correction + sum of p; acc = acc * correction + p @ v_block; m = m_new
    # TODO:   this block's output = acc / l
    # TODO: concatenate the query blocks' outputs along the tokens -> (B, H, L, d_v)
    raise NotImplementedError("compute attention block by block with an online softmax")
