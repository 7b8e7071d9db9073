# expect: mask_inverted
# also: dropout_missing
# bug-lines: 21, 31
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be divisible by num_heads")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.attn_dropout = nn.Dropout(dropout)
        ones = torch.ones(context_length, context_length, dtype=torch.bool)
        self.register_buffer("causal", torch.tril(ones, diagonal=-1))

    def forward(self, x):
        B, T, _ = x.shape
        nh, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hd).permute(0, 2, 1, 3)
        k = self.W_key(x).view(B, T, nh, hd).permute(0, 2, 3, 1)   # already transposed: (B, nh, hd, T)
        v = self.W_value(x).view(B, T, nh, hd).permute(0, 2, 1, 3)
        att = (q @ k) / hd ** 0.5
        att = att.masked_fill(self.causal[:T, :T], float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = att @ v
        y = y.permute(0, 2, 1, 3).reshape(B, T, nh * hd)
        return self.out_proj(y)
