# expect: mask_device
# bug-lines: 17
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
        self.masks = {"causal": torch.ones(context_length, context_length).triu(1).bool()}

    def forward(self, x):
        _, T, _ = x.shape
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d_out)
        scores = scores.masked_fill(self.masks["causal"][:T, :T], -float("inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return torch.matmul(weights, v)
