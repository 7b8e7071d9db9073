# expect: mask_not_sliced
"""Exercise 1 reference: sliding-window causal multi-head attention."""
import math

import torch
import torch.nn as nn


class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, window, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        if window < 1:
            raise ValueError("window must be at least 1")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.window = window
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        pos = torch.arange(context_length)
        dist = pos[:, None] - pos[None, :]
        self.register_buffer("mask", (dist < 0) | (dist >= window))

    def forward(self, x):
        B, T, _ = x.shape
        H, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, H, hd).transpose(1, 2)
        k = self.W_key(x).view(B, T, H, hd).transpose(1, 2)
        v = self.W_value(x).view(B, T, H, hd).transpose(1, 2)
        scores = q @ k.transpose(-2, -1)
        scores = scores / math.sqrt(hd)
        scores = scores.masked_fill(self.mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        context = (weights @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(context)
