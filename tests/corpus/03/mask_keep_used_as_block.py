# expect: mask_inverted
# bug-lines: 22
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.scale = 1 / math.sqrt(d_out)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        T = x.size(-2)
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.mT * self.scale
        hidden = torch.ones(T, T, dtype=torch.bool, device=x.device).tril(diagonal=1)
        scores = torch.where(hidden, torch.finfo(scores.dtype).min, scores)
        return self.dropout(torch.softmax(scores, dim=-1)) @ v
