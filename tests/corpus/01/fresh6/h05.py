# expect: softmax_wrong_dim
# also: output_shape
# bug-lines: 26, 28
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
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(0)  # work on a batch of one
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.d_out)
        attn = torch.softmax(scores, dim=1)
        ctx = torch.bmm(attn, v)
        return ctx.squeeze(0)
