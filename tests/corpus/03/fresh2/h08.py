# expect: dropout_in_eval
# bug-lines: 28
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.dropout_rate = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer("tri", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        T = x.shape[-2]
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        w = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(k.shape[-1]))
        w = w.masked_fill(self.tri[:T, :T] == 0, float("-inf"))
        w = F.softmax(w, dim=-1)
        w = F.dropout(w, p=self.dropout_rate)
        return w @ v
