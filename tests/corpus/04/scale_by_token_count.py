# expect: scale_wrong_dim
# bug-lines: 30
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be a multiple of num_heads")
        self.h = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("causal", torch.tril(torch.ones(context_length, context_length)).bool(), persistent=False)

    def heads(self, t):
        b, n, c = t.shape
        return t.view(b, n, self.h, c // self.h).permute(0, 2, 1, 3)

    def forward(self, x):
        b, n, c = x.shape[0], x.shape[1], self.out_proj.in_features
        q = self.heads(self.W_query(x))
        k = self.heads(self.W_key(x))
        v = self.heads(self.W_value(x))
        # the queries are pre-scaled, by the sequence length rather than by the head size
        q = q * n ** -0.5
        att = torch.matmul(q, k.transpose(2, 3))
        att = att.masked_fill(~self.causal[:n, :n], float("-inf"))
        att = self.drop(att.softmax(-1))
        out = torch.matmul(att, v).permute(0, 2, 1, 3).reshape(b, n, c)
        return self.out_proj(out)
