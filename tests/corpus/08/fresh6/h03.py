# expect: kv_cache_mask_offset
# bug-lines: 29
import math
import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1).bool())

    def forward(self, x, k_cache=None, v_cache=None):
        b, t, _ = x.shape
        h, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(b, t, h, hd).transpose(1, 2)
        k = self.W_key(x).view(b, t, h, hd).transpose(1, 2)
        v = self.W_value(x).view(b, t, h, hd).transpose(1, 2)
        if k_cache is not None:
            k = torch.cat((k_cache, k), dim=2)
            v = torch.cat((v_cache, v), dim=2)
        causal = self.mask[:t, :t]

        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        att = att.masked_fill(causal, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, self.d_out)
        return self.out_proj(y), k, v
