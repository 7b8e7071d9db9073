# expect: padding_mask_inverted
# also: heads_not_divisible
# bug-lines: 13, 26
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.shape[1]
        if context_padding_mask is None:
            context_padding_mask = torch.zeros(B, S, dtype=torch.bool, device=x.device)
        attend = context_padding_mask.to(torch.long)
        q = self.W_query(x).reshape(B, T, self.num_heads, -1).transpose(1, 2)
        k = self.W_key(context).reshape(B, S, self.num_heads, -1).transpose(1, 2)
        v = self.W_value(context).reshape(B, S, self.num_heads, -1).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * self.head_dim ** -0.5
        scores = scores.masked_fill(attend[:, None, None, :] == 0, float("-inf"))
        weights = scores.softmax(-1)
        ctx = (weights @ v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(ctx)
