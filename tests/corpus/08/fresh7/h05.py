# expect: mask_diagonal
# also: view_noncontiguous
# bug-lines: 22, 41
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out % num_heads != 0")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        blocked = torch.triu(torch.ones(context_length, context_length), diagonal=0)
        self.register_buffer("mask", blocked.bool())

    def forward(self, x, k_cache=None, v_cache=None):
        batch, new_tokens, _ = x.shape

        def heads(t):
            return t.view(batch, new_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        q, k, v = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        if k_cache is not None:
            k = torch.cat([k_cache, k], dim=-2)
            v = torch.cat([v_cache, v], dim=-2)
        seen = k.shape[-2]
        first = seen - new_tokens

        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[first:seen, :seen], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        ctx = (probs @ v).transpose(1, 2).view(batch, new_tokens, self.d_out)
        return self.out_proj(ctx), k, v
