# expect: dropout_misplaced
# bug-lines: 28, 30
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalAttention(nn.Module):
    """Masked self-attention.  Regularisation: dropout right before the output."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.drop = nn.Dropout(dropout)
        ar = torch.arange(context_length)
        self.register_buffer("is_future", ar.unsqueeze(0) > ar.unsqueeze(1))

    def forward(self, x):
        n = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.einsum("bid,bjd->bij", q, k) * (self.d_out ** -0.5)
        scores = scores.masked_fill(self.is_future[:n, :n], -math.inf)
        probs = F.softmax(scores, dim=-1)
        ctx = torch.einsum("bij,bjd->bid", probs, v)
        return self.drop(ctx)
