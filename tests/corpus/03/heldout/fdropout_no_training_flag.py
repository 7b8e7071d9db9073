# expect: dropout_in_eval
# held-out: calls F.dropout(att, self.drop_p) without training=self.training, so dropout also runs in eval mode.
# bug-lines: 28
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.drop_p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        T = x.shape[-2]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.d_out)
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        att = F.softmax(att, dim=-1)
        att = F.dropout(att, self.drop_p)
        return att @ v
