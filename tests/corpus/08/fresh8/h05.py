# expect: kv_cache_not_appended
# bug-lines: 43
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.n_head = num_heads
        self.d_head = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        causal = torch.tril(torch.ones(context_length, context_length, dtype=torch.bool))
        self.register_buffer("allowed", causal)

    def heads(self, t):
        B, T, C = t.size()
        return t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, C = x.size()
        q, k, v = self.heads(self.W_query(x)), self.heads(self.W_key(x)), self.heads(self.W_value(x))

        if k_cache is None:
            keys, vals = k, v
        else:
            keys = torch.cat([k_cache, k], dim=2)
            vals = torch.cat([v_cache, v], dim=2)
        P = keys.size(2) - T

        att = (q @ keys.transpose(-2, -1)) * (1.0 / math.sqrt(self.d_head))
        att = att.masked_fill(~self.allowed[P:P + T, :P + T], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ vals).transpose(1, 2).contiguous().view(B, T, self.n_head * self.d_head)
        return self.out_proj(y), k, v
