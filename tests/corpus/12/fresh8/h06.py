# expect: padding_mask_inverted
# bug-lines: 31
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("heads must divide d_out")
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
        q = self.W_query(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(context).view(B, S, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(context).view(B, S, self.num_heads, self.head_dim).transpose(1, 2)

        scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.head_dim)
        if context_padding_mask is not None:
            keep = context_padding_mask[:, None, None, :]
            scores = torch.where(keep, scores, torch.full_like(scores, float("-inf")))
        attn = torch.softmax(scores, dim=-1)
        out = torch.einsum("bhts,bhsd->bhtd", attn, v)
        return self.out_proj(out.transpose(1, 2).reshape(B, T, self.d_out))
