# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    """Causal single-head attention; the lower triangle (tril) marks what may be seen."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        allowed = torch.tril(torch.ones(context_length, context_length, dtype=torch.bool))
        self.register_buffer("allowed", allowed, persistent=False)

    def forward(self, x):
        T = x.size(1)
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        att = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(self.d_out)
        att = att.masked_fill(~self.allowed[:T, :T], torch.finfo(att.dtype).min)
        att = F.softmax(att, dim=-1)
        att = F.dropout(att, p=self.p, training=self.training)
        return torch.einsum("bts,bsd->btd", att, v)
