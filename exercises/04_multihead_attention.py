"""Exercise 4: multi-head causal attention by splitting heads.

Contract:
    MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)
    self.W_query, self.W_key, self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
    self.out_proj = nn.Linear(d_out, d_out)   (with bias)
    head_dim = d_out // num_heads; d_out not divisible by num_heads must raise an exception.
    forward(x): (batch, tokens, d_in) -> (batch, tokens, d_out), causal, dropout on the weights.

Shapes along the way:
    (b, T, d_out) -view-> (b, T, num_heads, head_dim) -transpose(1, 2)-> (b, num_heads, T, head_dim)
    scores (b, num_heads, T, T); context (b, num_heads, T, head_dim) -> back to (b, T, d_out)

Check your work with:  grade exercise 4
"""
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # TODO: check that d_out is divisible by num_heads (raise if not)
        # TODO: W_query, W_key, W_value (d_in -> d_out), out_proj (d_out -> d_out), dropout
        # TODO: register the causal mask as a buffer
        raise NotImplementedError("create the layers and the mask buffer")

    def forward(self, x):
        # TODO: project, then split heads: (b, T, d_out) -> (b, num_heads, T, head_dim)
        # TODO: causal scores per head, scaled by sqrt(head_dim); softmax; dropout
        # TODO: merge heads back to (b, T, d_out) and apply out_proj
        raise NotImplementedError("compute multi-head attention")
