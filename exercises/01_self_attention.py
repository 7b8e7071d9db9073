"""Exercise 1: single-head self-attention with trainable projections.

Contract (the grader loads its own weights into your module by parameter name):
    SelfAttention(d_in, d_out, qkv_bias=False)
    self.W_query, self.W_key, self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
    forward(x): x is (tokens, d_in) or (batch, tokens, d_in)
                returns (tokens, d_out) or (batch, tokens, d_out)
    Scores are scaled by sqrt(d_out).

Check your work with:  grade exercise 1
"""
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        # TODO: create the three projections W_query, W_key, W_value (nn.Linear, d_in -> d_out).
        raise NotImplementedError("create W_query, W_key and W_value")

    def forward(self, x):
        # TODO: project x to queries, keys and values        -> (..., T, d_out) each
        # TODO: scores = queries @ keys^T, scaled by sqrt(d_out) -> (..., T, T)
        # TODO: softmax over the keys, then weight the values  -> (..., T, d_out)
        raise NotImplementedError("compute self-attention")
