# expect: qkv_bias_ignored
# also: scale_not_sqrt
# bug-lines: 13, 14, 15, 21
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        # projections (no bias, as in the original Transformer)
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x):
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = torch.matmul(q, k.transpose(-2, -1)) / self.d_out
        return torch.matmul(torch.softmax(scores, dim=-1), v)
