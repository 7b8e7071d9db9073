# expect: mask_not_sliced
# bug-lines: 21
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.attn_drop = nn.Dropout(dropout)
        causal = torch.ones(context_length, context_length, dtype=torch.bool).triu(1)
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, x):
        seq = x.size(-1)
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        s = q @ k.mT / math.sqrt(self.d_out)
        s = s.masked_fill(self.causal[:seq, :seq], float("-inf"))
        a = self.attn_drop(torch.softmax(s, dim=-1))
        return a @ v
