# expect: runtime_error
# also: no_scaling
# bug-lines: 16, 20
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        batch, tokens, _ = x.shape
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        weights = torch.softmax(torch.bmm(q, k.transpose(1, 2)), dim=-1)
        return torch.bmm(weights, v).view(batch, tokens, -1)
