# expect: cross_causal_mask
# bug-lines: 32
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out ({d_out}) must be a multiple of num_heads ({num_heads})")
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
        H, D = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, H, D).permute(0, 2, 1, 3)
        k = self.W_key(context).view(B, S, H, D).permute(0, 2, 1, 3)
        v = self.W_value(context).view(B, S, H, D).permute(0, 2, 1, 3)

        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D)
        # decoder attention: no peeking ahead
        blocked = torch.triu(torch.ones(T, S, dtype=torch.bool, device=x.device), diagonal=1)
        if context_padding_mask is not None:
            blocked = blocked | context_padding_mask.view(B, 1, 1, S)
        scores = scores.masked_fill(blocked, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        out = torch.matmul(attn, v).permute(0, 2, 1, 3).reshape(B, T, self.d_out)
        return self.out_proj(out)
