# expect: qkv_bias_ignored
# also: softmax_wrong_dim
# bug-lines: 14, 15, 16, 23
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x):
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(-2, -1) / math.sqrt(self.d_out)
        attn_weights = torch.softmax(attn_scores, dim=1)
        return attn_weights @ values
