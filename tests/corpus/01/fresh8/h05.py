# expect: softmax_wrong_dim
# bug-lines: 21
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
        # (tokens, tokens) for one sentence: row i = how much token i looks at each token
        omega = queries @ keys.transpose(-2, -1)
        alpha = torch.nn.functional.softmax(omega * self.d_out ** -0.5, dim=1)
        return alpha @ values
