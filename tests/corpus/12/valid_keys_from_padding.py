# expect: padding_mask_inverted
# bug-lines: 29, 31
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
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def heads(self, t):
        return t.unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.size(1)
        q, k, v = self.heads(self.W_query(x)), self.heads(self.W_key(context)), self.heads(self.W_value(context))
        valid = torch.zeros(B, S, device=x.device) if context_padding_mask is None else context_padding_mask.float()
        att = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        att = torch.where(valid[:, None, None, :] > 0, att, torch.full_like(att, float("-inf")))
        y = torch.softmax(att, dim=-1) @ v
        return self.out_proj(y.transpose(1, 2).reshape(B, T, self.d_out))
