"""Reference solution for exercise 1: single-head self-attention."""
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        assert x.dim() in (2, 3), f"expected (T, d_in) or (B, T, d_in), got {tuple(x.shape)}"
        q = self.W_query(x)  # (..., T, d_out); stage: queries
        k = self.W_key(x)  # (..., T, d_out); stage: keys
        v = self.W_value(x)  # (..., T, d_out); stage: values
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)  # (..., T, T); stage: scores, scaled_scores
        att = torch.softmax(att, dim=-1)  # stage: weights
        return att @ v  # (..., T, d_out); stage: output
