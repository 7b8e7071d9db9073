# expect: cross_causal_mask
# also: scale_wrong_dim
# bug-lines: 30, 31
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.size(1)
        q = self.W_query(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(context).view(B, S, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(context).view(B, S, self.num_heads, self.head_dim).transpose(1, 2)

        scores = q @ k.transpose(2, 3) / math.sqrt(self.d_out)
        blocked = torch.ones(T, S, dtype=torch.bool, device=x.device).triu(1)
        if context_padding_mask is not None:
            blocked = blocked | context_padding_mask[:, None, None, :]
        scores = scores.masked_fill(blocked, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        weights = torch.nan_to_num(weights)
        y = (weights @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y)
