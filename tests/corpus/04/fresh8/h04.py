# expect: heads_merge_wrong
# also: out_proj_missing
# bug-lines: 31, 32
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out, self.num_heads = d_out, num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("tri", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x):
        b, n, _ = x.shape
        H, hd = self.num_heads, self.head_dim
        Q = self.W_query(x).view(b, n, H, hd).transpose(1, 2)
        K = self.W_key(x).view(b, n, H, hd).transpose(1, 2)
        V = self.W_value(x).view(b, n, H, hd).transpose(1, 2)
        att = torch.matmul(Q, K.transpose(-2, -1)) * hd ** -0.5
        att = att.masked_fill(self.tri[:n, :n] == 0, float("-inf"))
        att = self.dropout(att.softmax(dim=-1))
        out = torch.matmul(att, V)          # (b, H, n, hd)
        out = out.reshape(b, n, self.d_out)
        return out
