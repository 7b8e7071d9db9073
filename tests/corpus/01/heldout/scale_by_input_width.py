# expect: scale_wrong_dim
# held-out: scales by sqrt(x.shape[-1]) (d_in, the input width) instead of the key size d_out.
# bug-lines: 16, 18
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        d = x.shape[-1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        w = torch.softmax(q @ k.transpose(-2, -1) / d ** 0.5, dim=-1)
        return w @ v
