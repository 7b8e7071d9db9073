# expect: pass
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(diagonal=1).bool(), persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        split = (b, t, self.num_heads, self.head_dim)
        q = self.W_query(x).view(split).transpose(1, 2)
        k = self.W_key(x).view(split).transpose(1, 2)
        v = self.W_value(x).view(split).transpose(1, 2)
        # scale the queries first, by 1/sqrt(head_dim) computed with rsqrt
        q = q * torch.rsqrt(torch.tensor(float(self.head_dim), dtype=q.dtype, device=q.device))
        att = torch.matmul(q, k.transpose(-1, -2))
        att.masked_fill_(self.mask[:t, :t], float("-inf"))
        att = self.dropout(torch.softmax(att, dim=-1))
        y = torch.matmul(att, v).transpose(1, 2).contiguous().view(b, t, self.d_out)
        return self.out_proj(y)
