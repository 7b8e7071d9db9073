# expect: pass
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.n_head = num_heads
        self.d_out = d_out
        self.p = dropout
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        allowed = torch.tril(torch.ones(context_length, context_length, dtype=torch.bool))
        self.register_buffer("allowed", allowed, persistent=False)

    def forward(self, x):
        B, T, _ = x.shape
        H = self.n_head
        q = self.W_query(x).reshape(B, T, H, -1).permute(0, 2, 1, 3)
        k = self.W_key(x).reshape(B, T, H, -1).permute(0, 2, 1, 3)
        v = self.W_value(x).reshape(B, T, H, -1).permute(0, 2, 1, 3)
        scale = q.shape[-1] ** -0.5
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * scale
        scores = scores.masked_fill(~self.allowed[:T, :T], torch.finfo(scores.dtype).min)
        w = F.dropout(F.softmax(scores, dim=-1), p=self.p, training=self.training)
        y = torch.einsum("bhqk,bhkd->bqhd", w, v).reshape(B, T, self.d_out)
        return self.out_proj(y)
