# expect: pass
# held-out: correct; einsum for the scores and a float32 tensor constant for sqrt(d_out), which rounds once.
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
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        scale = torch.sqrt(torch.tensor(self.d_out, dtype=torch.float32))
        scores = torch.einsum("...qd,...kd->...qk", queries, keys) / scale
        weights = scores.softmax(dim=-1)
        return torch.einsum("...qk,...kd->...qd", weights, values)
