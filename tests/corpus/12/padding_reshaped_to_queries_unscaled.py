# expect: no_scaling
# also: runtime_error
# bug-lines: 30, 32
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) must be divisible by num_heads ({num_heads})")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)  # queries from the decoder side
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)  # keys and values from the encoder side
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.size(1)
        nh, hs = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs); stage: queries
        k = self.W_key(context).view(B, S, nh, hs).transpose(1, 2)  # (B, nh, S, hs); stage: keys
        v = self.W_value(context).view(B, S, nh, hs).transpose(1, 2)  # (B, nh, S, hs); stage: values
        att = q @ k.transpose(-2, -1)  # (B, nh, T, S): every query against every context token; stage: scores, scaled_scores
        if context_padding_mask is not None:
            att = att.masked_fill(context_padding_mask.reshape(B, 1, 1, T), float("-inf"))  # padded keys, all queries; stage: masked_scores
        att = torch.softmax(att, dim=-1)  # stage: weights
        y = att @ v  # (B, nh, T, S) x (B, nh, S, hs) -> (B, nh, T, hs); stage: context
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_out)  # (B, T, d_out); stage: merged
        return self.out_proj(y)  # stage: output
