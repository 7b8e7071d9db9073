# expect: scale_wrong_dim
# bug-lines: 15
import math
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.inv_temperature = 1.0 / math.sqrt(self.W_query.in_features)

    def forward(self, x):
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)

        attn_scores = queries @ keys.transpose(-2, -1)
        attn_scores = attn_scores * self.inv_temperature
        attn_weights = torch.softmax(attn_scores, dim=-1)

        context = attn_weights @ values
        return context
