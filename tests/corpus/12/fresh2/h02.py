# expect: pass
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    """Decoder-to-encoder attention. Queries: decoder tokens. Keys/values: encoder output."""

    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} not divisible by num_heads={num_heads}")
        self.h = num_heads
        self.dk = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        q = self.W_query(x).unflatten(-1, (self.h, self.dk))          # (B, T, h, dk)
        k = self.W_key(context).unflatten(-1, (self.h, self.dk))      # (B, S, h, dk)
        v = self.W_value(context).unflatten(-1, (self.h, self.dk))
        scores = torch.einsum("bthd,bshd->bhts", q, k) * (1.0 / math.sqrt(self.dk))
        if context_padding_mask is not None:
            pad = context_padding_mask[:, None, None, :]
            scores = scores.masked_fill(pad, torch.finfo(scores.dtype).min)
        probs = scores.softmax(dim=-1)
        out = torch.einsum("bhts,bshd->bthd", probs, v).flatten(-2)
        return self.out_proj(out)
