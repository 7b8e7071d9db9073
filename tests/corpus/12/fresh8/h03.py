# expect: cross_kv_from_queries
# bug-lines: 29, 30
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out % num_heads != 0")
        self.n_head = num_heads
        self.d_head = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def split(self, t):
        B, N, _ = t.shape
        return t.view(B, N, self.n_head, self.d_head).transpose(1, 2)

    def forward(self, x, context, context_padding_mask=None):
        B, T, _ = x.shape
        q = self.split(self.W_query(x))
        k = self.split(self.W_key(x))
        v = self.split(self.W_value(x))
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d_head)
        if context_padding_mask is not None:
            att = att.masked_fill(context_padding_mask[:, None, None, :], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).contiguous().view(B, T, -1)
        return self.out_proj(y)
