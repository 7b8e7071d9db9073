# expect: pass
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.attn_dropout = nn.Dropout(p=dropout)
        idx = torch.arange(context_length)
        future = idx[None, :] > idx[:, None]  # key index after query index
        self.register_buffer("future", future, persistent=False)

    def _scores(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        return q @ k.transpose(-2, -1) / math.sqrt(self.d_out)

    def forward(self, x):
        _, T, _ = x.shape
        s = self._scores(x)
        s = torch.where(self.future[:T, :T], torch.full_like(s, float("-inf")), s)
        w = self.attn_dropout(torch.softmax(s, dim=-1))
        return w @ self.W_value(x)
