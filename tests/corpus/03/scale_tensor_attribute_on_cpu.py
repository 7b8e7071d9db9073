# expect: tensor_on_cpu
# bug-lines: 18
import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    """The mask is a buffer and follows the module; the scale is a plain tensor attribute, made once on the CPU."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        future = torch.ones(context_length, context_length, dtype=torch.bool).triu(diagonal=1)
        self.register_buffer("future", future, persistent=False)
        self.inv_sqrt_d = torch.full((1, 1, 1), d_out, dtype=torch.float64).rsqrt()

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = torch.bmm(q, k.transpose(1, 2)) * self.inv_sqrt_d.to(x.dtype)
        scores = scores.masked_fill(self.future[:T, :T], -torch.inf)
        weights = self.dropout(scores.softmax(dim=-1))
        return torch.bmm(weights, v)
