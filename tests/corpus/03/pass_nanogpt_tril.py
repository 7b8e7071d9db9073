# expect: pass
import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalAttention(nn.Module):
    """nanoGPT-style: a lower-triangular 'bias' buffer, blocked where it is 0."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.attn_dropout = nn.Dropout(dropout)
        self.register_buffer(
            "bias", torch.tril(torch.ones(context_length, context_length)).view(1, context_length, context_length)
        )

    def forward(self, x):
        B, T, C = x.size()
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        return y
