# expect: pass
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    """Builds everything on the GPU when there is one: layers with device=, and the mask as a plain attribute there."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias, device=device)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias, device=device)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias, device=device)
        self.dropout = nn.Dropout(dropout)
        self.mask = torch.ones(context_length, context_length, dtype=torch.bool, device=device).triu(1)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))
        return self.dropout(torch.softmax(att, dim=-1)) @ v
