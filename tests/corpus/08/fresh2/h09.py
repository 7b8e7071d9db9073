# expect: kv_cache_mask_offset
# bug-lines: 34
import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.n_head = num_heads
        self.n_embd = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("bias", torch.tril(torch.ones(context_length, context_length))
                             .view(1, 1, context_length, context_length))

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.size()
        C = self.n_embd
        q = self.W_query(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if k_cache is not None:
            k = torch.cat((k_cache, k), dim=-2)
            v = torch.cat((v_cache, v), dim=-2)

        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.out_proj(y), k, v
