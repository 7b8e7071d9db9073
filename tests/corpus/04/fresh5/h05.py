# expect: scale_wrong_dim
# also: out_proj_missing
# bug-lines: 16, 34
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
        self.scale = d_out ** -0.5
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        b, t, _ = x.shape
        shape = (b, t, self.num_heads, self.head_dim)
        q = self.W_query(x).view(shape).transpose(1, 2)
        k = self.W_key(x).view(shape).transpose(1, 2)
        v = self.W_value(x).view(shape).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * self.scale
        scores = scores.masked_fill(self.mask[:t, :t], float("-inf"))
        probs = self.dropout(torch.softmax(scores, dim=-1))
        out = (probs @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)
        return out
