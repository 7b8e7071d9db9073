# expect: heads_not_divisible
# bug-lines: 13
import math

import torch
import torch.nn as nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.group_size = num_heads // num_kv_groups
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length)) == 0)

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        xq = self.W_query(x).view(bsz, seqlen, self.num_heads, self.head_dim)
        xk = self.W_key(x).view(bsz, seqlen, self.num_kv_groups, self.head_dim)
        xv = self.W_value(x).view(bsz, seqlen, self.num_kv_groups, self.head_dim)

        # llama-style repeat_kv on the (bsz, seqlen, n_kv, head_dim) layout
        xk = xk[:, :, :, None, :].expand(bsz, seqlen, self.num_kv_groups, self.group_size, self.head_dim)
        xv = xv[:, :, :, None, :].expand(bsz, seqlen, self.num_kv_groups, self.group_size, self.head_dim)
        xk = xk.reshape(bsz, seqlen, self.num_heads, self.head_dim)
        xv = xv.reshape(bsz, seqlen, self.num_heads, self.head_dim)

        q, k, v = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:seqlen, :seqlen], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.out_proj(out)
