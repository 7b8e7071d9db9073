# expect: wrong_output
# bug-lines: 37
import math

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    """Multi-head causal self-attention, written with einsum so every axis has a name."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"cannot split d_out={d_out} into {num_heads} heads")
        self.n_heads = num_heads
        self.d_head = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("blocked", torch.ones(context_length, context_length).triu(1).bool(), persistent=False)

    def _project(self, layer, x):
        # (b, t, d_out) -> (b, t, heads, d_head); einsum below does the "transpose"
        return layer(x).unflatten(-1, (self.n_heads, self.d_head))

    def forward(self, x):
        t = x.size(1)
        q = self._project(self.W_query, x)
        k = self._project(self.W_key, x)
        v = self._project(self.W_value, x)
        logits = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.d_head)
        logits = logits.masked_fill(self.blocked[:t, :t], float("-inf"))
        probs = self.drop(logits.softmax(dim=-1))
        mixed = torch.einsum("bhqk,bkhd->bqhd", probs, k)
        return self.out_proj(mixed.flatten(-2))
