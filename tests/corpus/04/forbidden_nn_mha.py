# expect: forbidden_api
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.inner = nn.MultiheadAttention(d_out, num_heads, dropout=dropout, batch_first=True)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        y, _ = self.inner(q, k, v, attn_mask=self.mask[:T, :T], need_weights=False)
        return self.out_proj(y)
