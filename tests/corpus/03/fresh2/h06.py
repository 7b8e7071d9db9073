# expect: mask_diagonal
# bug-lines: 18
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
        self.drop = nn.Dropout(dropout)
        # True above (and on) the diagonal: a token must not look at itself or ahead
        self.register_buffer("future", torch.ones(context_length, context_length).triu().bool())

    def forward(self, x):
        n = x.shape[1]
        Q, K, V = self.W_query(x), self.W_key(x), self.W_value(x)
        S = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(K.size(-1))
        S = S.masked_fill(self.future[:n, :n], float("-inf"))
        A = self.drop(torch.softmax(S, dim=-1))
        return torch.matmul(A, V)
