# expect: pass
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        b, T, _ = x.shape
        S = context.shape[1]
        queries = self.W_query(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(context).view(b, S, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(context).view(b, S, self.num_heads, self.head_dim).transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3) / math.sqrt(self.head_dim)   # (b, nh, T, S)
        if context_padding_mask is not None:
            attn_scores = attn_scores.masked_fill(context_padding_mask.view(b, 1, 1, S), float("-inf"))
        attn_weights = torch.softmax(attn_scores, dim=-1)

        context_vec = (attn_weights @ values).transpose(1, 2).contiguous().view(b, T, self.d_out)
        return self.out_proj(context_vec)
