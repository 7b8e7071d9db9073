# expect: pass
# held-out: correct; einsum with explicit head axes, torch.where with finfo(dtype).min for padded context columns.
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.h = num_heads
        self.dh = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        S = context.shape[1]
        q = self.W_query(x).view(B, T, self.h, self.dh)
        k = self.W_key(context).view(B, S, self.h, self.dh)
        v = self.W_value(context).view(B, S, self.h, self.dh)
        scores = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(self.dh)
        if context_padding_mask is not None:
            pad = context_padding_mask[:, None, None, :]
            scores = torch.where(pad, torch.finfo(scores.dtype).min, scores)
        w = scores.softmax(dim=-1)
        y = torch.einsum("bhts,bshd->bthd", w, v).reshape(B, T, self.h * self.dh)
        return self.out_proj(y)
