# expect: pass
import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.p = dropout
        self.scale = d_out ** -0.5
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        allowed = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("causal_mask", allowed, persistent=False)

    def forward(self, x):
        T = x.shape[1]
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = torch.einsum("btd,bsd->bts", q, k) * self.scale
        neg = torch.finfo(scores.dtype).min
        scores = torch.where(self.causal_mask[:T, :T], scores, torch.full_like(scores, neg))
        weights = F.softmax(scores, dim=-1)
        weights = F.dropout(weights, p=self.p, training=self.training)
        return torch.einsum("bts,bsd->btd", weights, v)
