# expect: cross_causal_mask
# bug-lines: 31
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
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
        nh, hs = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hs).transpose(1, 2)
        k = self.W_key(context).view(B, S, nh, hs).transpose(1, 2)
        v = self.W_value(context).view(B, S, nh, hs).transpose(1, 2)

        att = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(hs)
        blocked = torch.triu(torch.ones(T, S, dtype=torch.bool, device=x.device), diagonal=1)
        if context_padding_mask is not None:
            blocked = blocked | context_padding_mask[:, None, None, :]
        att = att.masked_fill(blocked, float("-inf"))
        att = att.softmax(dim=-1)
        y = torch.einsum("bhts,bhsd->bhtd", att, v)
        y = y.transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(y)
