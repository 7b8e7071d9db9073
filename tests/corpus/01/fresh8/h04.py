# expect: scale_wrong_dim
# also: qkv_bias_ignored
# bug-lines: 15, 25
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_in = d_in
        self.d_out = d_out
        make = lambda: nn.Linear(d_in, d_out, bias=False)
        self.W_query = make()
        self.W_key = make()
        self.W_value = make()

    def forward(self, x):
        Q = self.W_query(x)
        K = self.W_key(x)
        V = self.W_value(x)
        S = Q @ K.transpose(-1, -2)
        S = S / math.sqrt(self.d_in)
        A = torch.softmax(S, dim=-1)
        return A @ V
