# expect: pass
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads or num_heads % num_kv_groups:
            raise ValueError(
                f"need d_out % num_heads == 0 and num_heads % num_kv_groups == 0, "
                f"got {d_out}, {num_heads}, {num_kv_groups}"
            )
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        kv_dim = num_kv_groups * self.head_dim
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, kv_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, kv_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("keep", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)))

    def forward(self, x):
        T = x.size(1)
        hd = self.head_dim
        per_group = self.num_heads // self.num_kv_groups
        q_all = self.W_query(x)
        k_all = self.W_key(x)
        v_all = self.W_value(x)
        keep = self.keep[:T, :T]

        heads = []
        for h in range(self.num_heads):
            g = h // per_group  # the KV head this query head reads from
            q = q_all[..., h * hd:(h + 1) * hd]
            k = k_all[..., g * hd:(g + 1) * hd]
            v = v_all[..., g * hd:(g + 1) * hd]
            s = q @ k.transpose(1, 2) / math.sqrt(hd)
            s = s.masked_fill(~keep, float("-inf"))
            heads.append(torch.softmax(s, dim=-1) @ v)
        return self.out_proj(torch.cat(heads, dim=-1))
