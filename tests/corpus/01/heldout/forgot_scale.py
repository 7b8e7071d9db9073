# expect: no_scaling
# held-out: bmm-free version with matmul and a helper, but the scores go into the softmax unscaled.
# bug-lines: 9, 10
import torch
import torch.nn as nn


def attend(q, k, v):
    scores = torch.matmul(q, k.transpose(-2, -1))
    return torch.matmul(torch.softmax(scores, dim=-1), v)


class SelfAttention(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return attend(self.W_query(x), self.W_key(x), self.W_value(x))
