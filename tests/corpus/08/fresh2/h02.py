# expect: pass
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    """Decoder attention with a KV cache. The causal mask is built from positions on the fly."""

    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out ({d_out}) not divisible by num_heads ({num_heads})")
        self.nh = num_heads
        self.hs = d_out // num_heads
        self.d_out = d_out
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        q = self.W_query(x).unflatten(-1, (self.nh, self.hs)).transpose(1, 2)
        k = self.W_key(x).unflatten(-1, (self.nh, self.hs)).transpose(1, 2)
        v = self.W_value(x).unflatten(-1, (self.nh, self.hs)).transpose(1, 2)
        P = 0 if k_cache is None else k_cache.size(2)
        if k_cache is not None:
            k = torch.cat((k_cache, k), dim=2)
            v = torch.cat((v_cache, v), dim=2)

        q_pos = torch.arange(P, P + T, device=x.device)
        k_pos = torch.arange(P + T, device=x.device)
        future = k_pos[None, :] > q_pos[:, None]                     # (T, P+T)

        s = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.hs)
        s = s.masked_fill(future, float("-inf"))
        a = torch.softmax(s, dim=-1)
        y = torch.einsum("bhts,bhsd->bhtd", a, v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(y), k, v
