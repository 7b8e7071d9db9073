# expect: pass
"""Encoder-decoder cross-attention with einsum and an additive padding bias."""
import torch
import torch.nn as nn


class CrossAttention(nn.Module):
    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, f"num_heads={num_heads} does not divide d_out={d_out}"
        self.h = num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def split_heads(self, t):
        b, n, c = t.shape
        return t.reshape(b, n, self.h, c // self.h).permute(0, 2, 1, 3)

    def forward(self, x, context, context_padding_mask=None):
        q = self.split_heads(self.W_query(x))
        k = self.split_heads(self.W_key(context))
        v = self.split_heads(self.W_value(context))
        att = torch.einsum("bhtd,bhsd->bhts", q, k) * (q.shape[-1] ** -0.5)
        if context_padding_mask is not None:
            bias = torch.zeros(context_padding_mask.shape, dtype=att.dtype, device=att.device)
            bias = bias.masked_fill(context_padding_mask, float("-inf"))
            att = att + bias[:, None, None, :]
        att = att.softmax(dim=-1)
        y = torch.einsum("bhts,bhsd->bhtd", att, v)
        b, h, t, hd = y.shape
        return self.out_proj(y.permute(0, 2, 1, 3).reshape(b, t, h * hd))
