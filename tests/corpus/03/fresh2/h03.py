# expect: pass
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
        self.attn_drop = nn.Dropout(p=dropout)
        # additive mask: 0 on and below the diagonal, -inf above it
        bias = torch.zeros(context_length, context_length)
        future = torch.ones(context_length, context_length).triu(1).bool()
        bias[future] = float("-inf")
        self.register_buffer("causal_bias", bias)
        self.scale = 1.0 / math.sqrt(d_out)

    def forward(self, x):
        _, seq_len, _ = x.shape
        q = self.W_query(x) * self.scale
        k = self.W_key(x)
        v = self.W_value(x)
        logits = torch.matmul(q, k.transpose(-2, -1))
        logits = logits + self.causal_bias[:seq_len, :seq_len]
        probs = logits.softmax(dim=-1)
        probs = self.attn_drop(probs)
        out = torch.matmul(probs, v)
        return out
