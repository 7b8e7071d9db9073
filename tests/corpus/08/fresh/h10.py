# expect: kv_cache_order
# also: no_scaling
# bug-lines: 29,30
import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())

    def forward(self, x, k_cache=None, v_cache=None):
        B, T, _ = x.shape
        nh, hd = self.num_heads, self.head_dim
        q = self.W_query(x).view(B, T, nh, hd).transpose(1, 2)
        k = self.W_key(x).view(B, T, nh, hd).transpose(1, 2)
        v = self.W_value(x).view(B, T, nh, hd).transpose(1, 2)
        P = 0 if k_cache is None else k_cache.shape[2]
        if P:
            k, v = torch.cat((k, k_cache), 2), torch.cat((v, v_cache), 2)
        att = q @ k.transpose(-2, -1)
        att = att.masked_fill(self.mask[P:P + T, :P + T], float("-inf"))
        att = att.softmax(dim=-1)
        out = (att @ v).transpose(1, 2).contiguous().view(B, T, self.d_out)
        return self.out_proj(out), k, v
