# expect: mask_diagonal
# also: dropout_in_eval
# bug-lines: 19, 28
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        past = torch.tril(torch.ones(context_length, context_length), diagonal=-1)
        self.register_buffer("blocked", past == 0)

    def forward(self, x):
        n = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        att = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(k.shape[-1])
        att = att.masked_fill(self.blocked[:n, :n], float("-inf"))
        att = F.softmax(att, dim=-1)
        att = F.dropout(att, p=self.p)
        return torch.einsum("bts,bsd->btd", att, v)
