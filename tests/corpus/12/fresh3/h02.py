# expect: cross_kv_from_queries
# bug-lines: 27
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        b, t, _ = x.shape
        src = x  # the sequence the keys/values are read from
        q = self._heads(self.W_query(x))
        k = self._heads(self.W_key(src))
        v = self._heads(self.W_value(src))
        att = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.head_dim)
        if context_padding_mask is not None:
            att = att.masked_fill(context_padding_mask[:, None, None, :], float("-inf"))
        att = att.softmax(dim=-1)
        y = torch.einsum("bhts,bhsd->bhtd", att, v)
        return self.out_proj(y.transpose(1, 2).reshape(b, t, self.d_out))
