# expect: dropout_in_eval
# bug-lines: 28
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.drop_rate = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        mask = torch.full((context_length, context_length), float("-inf")).triu(1)
        self.register_buffer("additive_mask", mask)

    def forward(self, x):
        batch, tokens, _ = x.shape
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = q @ k.transpose(1, 2) * (1.0 / math.sqrt(self.d_out))
        scores = scores + self.additive_mask[:tokens, :tokens]
        weights = scores.softmax(dim=-1)
        weights = nn.Dropout(self.drop_rate)(weights)
        return weights @ v
