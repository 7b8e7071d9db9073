# expect: pass
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be divisible by num_heads")
        self.num_heads, self.head_dim, self.d_out = num_heads, d_out // num_heads, d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), 1))

    def forward(self, x):
        b, t, _ = x.shape
        q = self.W_query(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        scale = torch.sqrt(torch.tensor(self.head_dim, dtype=torch.float32))  # a float32 constant, like many tutorials
        s = (q @ k.transpose(-2, -1)) / scale
        s = s.masked_fill(self.mask[:t, :t], float("-inf"))
        w = torch.softmax(s.float(), dim=-1).to(q.dtype)  # softmax upcast, as Hugging Face does
        w = self.dropout(w)
        y = (w @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)
        return self.out_proj(y)
