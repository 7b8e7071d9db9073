# expect: pass
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def repeat_kv(t, n_rep):
    # (B, nkv, T, hs) -> (B, nkv * n_rep, T, hs), each KV head repeated n_rep times in a row
    if n_rep == 1:
        return t
    B, nkv, T, hs = t.shape
    return t[:, :, None, :, :].expand(B, nkv, n_rep, T, hs).reshape(B, nkv * n_rep, T, hs)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be divisible by num_heads")
        if num_heads % num_kv_groups:
            raise ValueError("num_heads must be divisible by num_kv_groups")
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.n_rep = num_heads // num_kv_groups
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("causal_mask", torch.full((context_length, context_length), float("-inf")).triu(1))

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        xq = self.W_query(x).view(bsz, seqlen, self.num_heads, self.head_dim).transpose(1, 2)
        xk = self.W_key(x).view(bsz, seqlen, self.num_kv_groups, self.head_dim).transpose(1, 2)
        xv = self.W_value(x).view(bsz, seqlen, self.num_kv_groups, self.head_dim).transpose(1, 2)
        keys = repeat_kv(xk, self.n_rep)
        values = repeat_kv(xv, self.n_rep)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + self.causal_mask[:seqlen, :seqlen]
        scores = F.softmax(scores, dim=-1)
        output = torch.matmul(scores, values)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.out_proj(output)
