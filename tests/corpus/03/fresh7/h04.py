# expect: dropout_in_eval
# bug-lines: 26
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.drop_rate = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        causal = torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
        self.register_buffer("causal_mask", causal)

    def _attend(self, q, k, v):
        T = q.shape[-2]
        scores = q @ k.transpose(-2, -1)
        scores = scores.masked_fill(self.causal_mask[:T, :T], float("-inf"))
        weights = torch.softmax(scores / math.sqrt(k.shape[-1]), dim=-1)
        weights = F.dropout(weights, self.drop_rate)
        return weights @ v

    def forward(self, x):
        return self._attend(self.W_query(x), self.W_key(x), self.W_value(x))
