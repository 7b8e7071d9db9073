# expect: pass
"""Causal attention with a keep-mask (lower triangle = visible) and functional dropout."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.p_drop = dropout
        for name in ("W_query", "W_key", "W_value"):
            setattr(self, name, nn.Linear(d_in, d_out, bias=qkv_bias))
        visible = torch.tril(torch.ones(context_length, context_length, dtype=torch.bool))
        self.register_buffer("visible", visible, persistent=False)

    def forward(self, x):
        T = x.size(1)
        q = self.W_query(x) / math.sqrt(self.d_out)
        k = self.W_key(x)
        v = self.W_value(x)
        logits = torch.einsum("btd,bsd->bts", q, k)
        logits = torch.where(self.visible[:T, :T], logits, float("-inf"))
        probs = F.softmax(logits, dim=-1)
        probs = F.dropout(probs, p=self.p_drop, training=self.training)
        return torch.einsum("bts,bsd->btd", probs, v)
