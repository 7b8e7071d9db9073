# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.p_drop = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        # lower triangle = positions a token is allowed to look at
        allowed = torch.tril(torch.ones(context_length, context_length, dtype=torch.bool))
        self.register_buffer("allowed", allowed, persistent=False)

    def attention_weights(self, q, k):
        T = q.size(1)
        logits = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(self.d_out)
        logits = logits.masked_fill(~self.allowed[:T, :T], float("-inf"))
        return F.softmax(logits, dim=-1)

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        w = self.attention_weights(q, k)
        w = F.dropout(w, p=self.p_drop, training=self.training)
        return torch.einsum("bts,bsd->btd", w, v)
