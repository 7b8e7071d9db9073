# expect: scale_wrong_dim
# also: heads_not_divisible
# bug-lines: 13, 31
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.n_heads = num_heads
        self.d_head = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        q = self.W_query(x).reshape(B, T, self.n_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).reshape(B, T, self.n_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).reshape(B, T, self.n_heads, self.d_head).transpose(1, 2)
        if k_cache is not None:
            k = torch.cat([k_cache, k], dim=2)
            v = torch.cat([v_cache, v], dim=2)
        P = k.size(2) - T
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_out)
        scores = scores.masked_fill(self.tril[P:P + T, :P + T] == 0, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(out), k, v
