# expect: scale_not_sqrt
# also: output_shape
# bug-lines: 27, 31
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
        is_2d = x.dim() == 2
        if is_2d:
            x = x.unsqueeze(0)
        b, num_tokens, _ = x.shape
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)

        norm = float(keys.size(-1))
        scores = torch.bmm(queries, keys.transpose(1, 2)) / norm
        weights = torch.softmax(scores, dim=-1)
        out = torch.bmm(weights, values)
        return out
