# expect: pass
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    """Single-head self-attention with trainable query/key/value projections."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(0)  # (1, T, d_in)

        queries = self.W_query(x)  # (B, T, d_out)
        keys = self.W_key(x)  # (B, T, d_out)
        values = self.W_value(x)  # (B, T, d_out)

        # (B, T, d_out) @ (B, d_out, T) -> (B, T, T)
        scores = torch.bmm(queries, keys.permute(0, 2, 1))
        scores = scores / math.sqrt(self.d_out)

        weights = torch.softmax(scores, dim=-1)  # each query row sums to 1
        out = torch.bmm(weights, values)  # (B, T, d_out)

        if unbatched:
            out = out.squeeze(0)
        return out
