# expect: mask_after_softmax
# held-out: takes the softmax over all keys and only then multiplies the weights by the lower-triangular keep mask.
# bug-lines: 24, 25
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
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("keep", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        weights = torch.softmax(scores, dim=-1)
        weights = weights * self.keep[:T, :T]
        weights = self.dropout(weights)
        return weights @ v
