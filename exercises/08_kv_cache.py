"""Exercise 8: decoding with a KV cache.

A decoder generates one token at a time. The keys and values of the tokens it has already seen
do not change, so instead of recomputing them at every step it keeps them: the KV cache. Each
call gets only the new token(s) and the cache, and returns the new output and the grown cache.
Decoding token by token must give exactly what one causal forward pass over the whole
sequence gives.

Contract (the grader loads its own weights into your module by parameter name):
    KVCacheAttention(d_in, d_out, context_length, num_heads, qkv_bias=False)
    self.W_query, self.W_key, self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
    self.out_proj = nn.Linear(d_out, d_out)   (with bias); d_out not divisible by num_heads raises.
    forward(x, k_cache=None, v_cache=None) -> (y, k_cache, v_cache)
        x: (B, T, d_in), the new tokens; they sit at positions P .. P+T-1, where P = k_cache.size(2)
           (P = 0 without a cache).
        k_cache, v_cache: (B, num_heads, P, head_dim), keys and values of the earlier tokens, heads split.
        y: (B, T, d_out); the returned caches are (B, num_heads, P+T, head_dim): the old cache, then the new tokens.
    Causal over the whole sequence: the new token at position P+i attends to positions 0 .. P+i,
    cached or new. P + T <= context_length. Scores scaled by 1/sqrt(head_dim). No dropout.

Shapes along the way (T new tokens, P cached):
    q, k, v (B, nh, T, hs); k, v after the cache (B, nh, P+T, hs); scores (B, nh, T, P+T);
    mask rows P .. P+T-1, columns 0 .. P+T-1.

Check your work with:  grade exercise 8
"""
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        # TODO: check that d_out is divisible by num_heads (raise if not)
        # TODO: W_query, W_key, W_value (d_in -> d_out), out_proj (d_out -> d_out)
        # TODO: register the (context_length, context_length) causal mask as a buffer
        raise NotImplementedError("create the layers and the mask buffer")

    def forward(self, x, k_cache=None, v_cache=None):
        # TODO: project the new tokens and split heads: q, k, v (B, nh, T, hs)
        # TODO: with a cache, put the cached keys/values before the new ones (along the tokens) -> (B, nh, P+T, hs)
        # TODO: scores (B, nh, T, P+T); mask the future with the mask rows of the new tokens' positions
        # TODO: softmax, @ v, merge heads, out_proj; return (y, k, v) with k, v the grown cache
        raise NotImplementedError("compute attention with a KV cache")
