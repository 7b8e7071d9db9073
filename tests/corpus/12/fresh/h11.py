# expect: pass
import math

import torch
import torch.nn as nn


def split_heads(t, num_heads):
    # (B, N, d_out) -> (B, num_heads, N, head_dim)
    B, N, D = t.shape
    return t.view(B, N, num_heads, D // num_heads).transpose(1, 2)


def merge_heads(t):
    # (B, num_heads, N, head_dim) -> (B, N, num_heads * head_dim)
    B, H, N, hd = t.shape
    return t.transpose(1, 2).reshape(B, N, H * hd)


class CrossAttention(nn.Module):
    """Decoder queries attend to a padded encoder output."""

    def __init__(self, d_in, d_context, d_out, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("num_heads must divide d_out")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)  # decoder side
        self.W_key = nn.Linear(d_context, d_out, bias=qkv_bias)  # encoder side
        self.W_value = nn.Linear(d_context, d_out, bias=qkv_bias)  # encoder side
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x, context, context_padding_mask=None):
        q = split_heads(self.W_query(x), self.num_heads)  # (B, nh, T, hs)
        k = split_heads(self.W_key(context), self.num_heads)  # (B, nh, S, hs)
        v = split_heads(self.W_value(context), self.num_heads)  # (B, nh, S, hs)

        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)  # (B, nh, T, S)
        if context_padding_mask is not None:
            padded = context_padding_mask[:, None, None, :]  # (B, 1, 1, S): same for every head and query
            scores = torch.where(padded, torch.full_like(scores, float("-inf")), scores)

        weights = torch.softmax(scores, dim=-1)  # over the context tokens
        return self.out_proj(merge_heads(torch.matmul(weights, v)))
