"""Exercise 9: grouped-query attention (GQA).

In multi-head attention every query head has its own keys and values, and at generation time
all of them sit in the KV cache. Grouped-query attention (Llama 2 70B, Llama 3, Mistral) keeps
fewer key/value heads, num_kv_groups of them, each shared by a group of consecutive query heads.
num_kv_groups == num_heads is ordinary multi-head attention; num_kv_groups == 1 is
multi-query attention (MQA). The KV cache shrinks by num_heads / num_kv_groups.

Contract (the grader loads its own weights into your module by parameter name):
    GroupedQueryAttention(d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False)
    head_dim = d_out // num_heads
    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
    self.W_key, self.W_value = nn.Linear(d_in, num_kv_groups * head_dim, bias=qkv_bias)
    self.out_proj = nn.Linear(d_out, d_out)   (with bias)
    d_out not divisible by num_heads, or num_heads not divisible by num_kv_groups, must raise.
    forward(x): (B, T, d_in) -> (B, T, d_out), causal, scores scaled by 1/sqrt(head_dim), no dropout.
    Query head h uses key/value head h // (num_heads // num_kv_groups): heads 0..g-1 share KV head 0,
    the next g heads KV head 1, and so on (as Llama's repeat_kv does).

Shapes along the way (nh = num_heads, nkv = num_kv_groups, g = nh // nkv):
    q (B, nh, T, hs); k, v (B, nkv, T, hs) -> each KV head repeated for its g query heads -> (B, nh, T, hs)
    scores (B, nh, T, T); y (B, nh, T, hs) -> (B, T, d_out) -> out_proj

Check your work with:  grade exercise 9
"""
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        # TODO: raise unless d_out % num_heads == 0 and num_heads % num_kv_groups == 0
        # TODO: W_query (d_in -> d_out); W_key, W_value (d_in -> num_kv_groups * head_dim); out_proj (d_out -> d_out)
        # TODO: register the causal mask as a buffer
        raise NotImplementedError("create the projections and the mask buffer")

    def forward(self, x):
        # TODO: q (B, nh, T, hs); k, v (B, nkv, T, hs)
        # TODO: give every query head its group's KV head: (B, nkv, T, hs) -> (B, nh, T, hs)
        # TODO: causal attention per head, merge heads, out_proj
        raise NotImplementedError("compute grouped-query attention")
