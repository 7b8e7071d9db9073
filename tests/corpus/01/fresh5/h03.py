# expect: runtime_error
# bug-lines: 18
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        for name in ("W_query", "W_key", "W_value"):
            setattr(self, name, nn.Linear(d_in, d_out, bias=qkv_bias))

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        k_t = k.transpose(1, 2)
        w = torch.softmax(torch.matmul(q, k_t) / self.d_out ** 0.5, dim=-1)
        return torch.matmul(w, v)
