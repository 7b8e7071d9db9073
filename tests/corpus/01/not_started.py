# expect: not_started
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        # TODO: scores = queries @ keys^T, scaled by sqrt(d_out) -> (..., T, T)
        # TODO: softmax over the keys, then weight the values  -> (..., T, d_out)
        raise NotImplementedError("compute self-attention")
