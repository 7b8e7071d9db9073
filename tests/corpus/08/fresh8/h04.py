# expect: scale_wrong_dim
# also: kv_cache_order
# bug-lines: 30, 31, 36
import torch
import torch.nn as nn


class KVCacheAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out % num_heads != 0")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, k_cache=None, v_cache=None):
        b, n, _ = x.shape
        split = lambda t: t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)
        queries = split(self.W_query(x))
        keys = split(self.W_key(x))
        values = split(self.W_value(x))

        if k_cache is not None:
            keys = torch.cat([keys, k_cache], dim=2)
            values = torch.cat([values, v_cache], dim=2)
        total = keys.shape[2]
        start = total - n

        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores = attn_scores / self.d_out ** 0.5
        mask_bool = self.mask.bool()[start:total, :total]
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores, dim=-1)

        context = (attn_weights @ values).transpose(1, 2).contiguous().view(b, n, self.d_out)
        return self.out_proj(context), keys, values
