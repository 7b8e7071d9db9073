# expect: pass
import math

import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{d_out} is not a multiple of {num_heads}")
        self.d_out = d_out
        self.H = num_heads
        self.D = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        pos = torch.arange(context_length)
        self.register_buffer("future", pos[None, :] > pos[:, None])  # [query_pos, key_pos]

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        heads = lambda t: t.reshape(B, T, self.H, self.D).permute(0, 2, 1, 3)
        q, k, v = heads(self.W_query(x)), heads(self.W_key(x)), heads(self.W_value(x))
        if k_cache is not None and v_cache is not None:
            k = torch.cat((k_cache, k), dim=2)
            v = torch.cat((v_cache, v), dim=2)
        total = k.shape[2]
        start = total - T  # position of the first new token
        s = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.D)
        s = s.masked_fill(self.future[start:total, :total], float("-inf"))
        a = torch.softmax(s, dim=-1)
        y = torch.einsum("bhts,bhsd->bhtd", a, v)
        y = y.permute(0, 2, 1, 3).reshape(B, T, self.d_out)
        return self.out_proj(y), k, v
