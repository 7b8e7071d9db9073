# expect: pass
# held-out: correct; no buffer, builds the causal mask from absolute positions (arange(P, P+T) vs arange(P+T)) on x's device.
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.d_out = d_out
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def _split(self, t, B, T):
        return t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        q = self._split(self.W_query(x), B, T)
        k = self._split(self.W_key(x), B, T)
        v = self._split(self.W_value(x), B, T)
        P = 0 if k_cache is None else k_cache.shape[2]
        if k_cache is not None:
            k = torch.cat((k_cache, k), dim=2)
            v = torch.cat((v_cache, v), dim=2)
        q_pos = torch.arange(P, P + T, device=x.device)
        k_pos = torch.arange(P + T, device=x.device)
        future = k_pos[None, :] > q_pos[:, None]
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(future, float("-inf"))
        y = torch.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(y), k, v
