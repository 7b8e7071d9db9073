# expect: heads_split_wrong
# bug-lines: 36
import math

import torch
import torch.nn as nn


def repeat_kv(hidden_states, n_rep):
    """Same as Llama's repeat_kv: (B, nkv, T, hs) -> (B, nkv * n_rep, T, hs)."""
    b, nkv, t, hs = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(b, nkv, n_rep, t, hs)
    return hidden_states.reshape(b, nkv * n_rep, t, hs)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        assert num_heads % num_kv_groups == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x):
        bsz, q_len, _ = x.shape
        query_states = self.W_query(x).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.W_key(x).view(bsz, self.num_kv_groups, q_len, self.head_dim)
        value_states = self.W_value(x).view(bsz, q_len, self.num_kv_groups, self.head_dim).transpose(1, 2)

        n_rep = self.num_heads // self.num_kv_groups
        key_states = repeat_kv(key_states, n_rep)
        value_states = repeat_kv(value_states, n_rep)

        attn = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)
        attn = attn.masked_fill(self.mask[:q_len, :q_len], float("-inf"))
        attn = nn.functional.softmax(attn, dim=-1, dtype=torch.float32).to(query_states.dtype)
        out = torch.matmul(attn, value_states)
        out = out.transpose(1, 2).contiguous().reshape(bsz, q_len, self.d_out)
        return self.out_proj(out)
