# expect: pass
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    """Causal multi-head attention that can be fed a prompt, then one token at a time."""

    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads has to divide d_out")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        allowed = torch.tril(torch.ones(context_length, context_length)).bool()
        self.register_buffer("allowed", allowed)

    def _heads(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def _merge(self, t):
        B, _, T, _ = t.shape
        return t.permute(0, 2, 1, 3).reshape(B, T, self.num_heads * self.head_dim)

    def forward(self, x, k_cache=None, v_cache=None):
        T = x.shape[1]
        q = self._heads(self.W_query(x))
        k_new = self._heads(self.W_key(x))
        v_new = self._heads(self.W_value(x))

        past = 0 if k_cache is None else k_cache.shape[2]
        keys = k_new if k_cache is None else torch.cat((k_cache, k_new), dim=2)
        values = v_new if v_cache is None else torch.cat((v_cache, v_new), dim=2)

        q = q * (1.0 / math.sqrt(self.head_dim))
        att = torch.einsum("bhtd,bhsd->bhts", q, keys)
        visible = self.allowed[past:past + T, :past + T]
        att = att.masked_fill(~visible, torch.finfo(att.dtype).min)
        att = att.softmax(dim=-1)
        out = torch.einsum("bhts,bhsd->bhtd", att, values)
        return self.out_proj(self._merge(out)), keys, values
