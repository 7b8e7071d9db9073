# expect: padding_mask_inverted
# bug-lines: 32
import math

import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        batch, tgt_len, _ = x.shape
        src_len = context.shape[1]
        queries = self.W_query(x).view(batch, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        keys = self.W_key(context).view(batch, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        values = self.W_value(context).view(batch, src_len, self.num_heads, self.head_dim).transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3) / self.head_dim ** 0.5
        if context_padding_mask is not None:
            # src_mask: 1 for real tokens (as in the Annotated Transformer)
            src_mask = context_padding_mask.unsqueeze(1).unsqueeze(2)
            attn_scores = attn_scores.masked_fill(src_mask == 0, float("-inf"))
        attn_weights = torch.softmax(attn_scores, dim=-1)
        context_vec = (attn_weights @ values).transpose(1, 2).contiguous()
        return self.out_proj(context_vec.view(batch, tgt_len, self.d_out))
