# expect: mask_zero_fill
# also: dropout_misplaced
# bug-lines: 26, 29
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
        num_tokens = x.shape[1]
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        scores = queries @ keys.transpose(1, 2) / math.sqrt(self.d_out)
        scores = scores * self.keep[:num_tokens, :num_tokens]
        weights = torch.softmax(scores, dim=-1)
        context = weights @ values
        return self.dropout(context)
