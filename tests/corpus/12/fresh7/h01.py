# expect: pass
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} must be divisible by num_heads={num_heads}")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def _split_heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        b, num_tokens, _ = x.shape
        q = self._split_heads(self.W_query(x))
        k = self._split_heads(self.W_key(context))
        v = self._split_heads(self.W_value(context))

        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if context_padding_mask is not None:
            scores = scores.masked_fill(context_padding_mask[:, None, None, :], float("-inf"))
        weights = torch.softmax(scores, dim=-1)

        out = (weights @ v).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(out)
