# expect: pass
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    """Multi-head causal attention that can continue from cached keys and values."""

    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise AssertionError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        )

    def forward(self, x, k_cache=None, v_cache=None):
        batch, new_tokens, _ = x.shape
        # new tokens' queries, keys and values, heads split: (batch, heads, new_tokens, head_dim)
        q = self.W_query(x).view(batch, new_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(batch, new_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(batch, new_tokens, self.num_heads, self.head_dim).transpose(1, 2)

        past = 0 if k_cache is None else k_cache.shape[2]
        if past > 0:
            # old positions first, then the new ones
            k = torch.cat([k_cache, k], dim=2)
            v = torch.cat([v_cache, v], dim=2)

        # rows of the mask for positions past .. past + new_tokens - 1
        blocked = self.mask[past:past + new_tokens, :past + new_tokens]
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(blocked, float("-inf"))
        weights = torch.softmax(scores, dim=-1)

        out = torch.matmul(weights, v)  # (batch, heads, new_tokens, head_dim)
        out = out.transpose(1, 2).reshape(batch, new_tokens, self.d_out)
        return self.out_proj(out), k, v
