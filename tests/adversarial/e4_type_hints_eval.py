# attack: let typing.get_type_hints evaluate a string annotation that walks to os and writes markers -> fail (unsafe_code)
# runtime: fail (no_scaling)
import typing

import torch
import torch.nn as nn

TARGETS = "@TARGETS@".split("|")  # filled in by tests/test_adversarial.py


def probe(x: "[k for k in ().__class__.__base__.__subclasses__() if k.__name__ == '_wrap_close'][0]"):
    return x


WRAP = typing.get_type_hints(probe)["x"]
for target in TARGETS:
    WRAP.__init__.__globals__["system"](f"echo pwned > '{target}' 2>/dev/null")


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads, self.size = num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("future", torch.ones(context_length, context_length).triu(1).bool(), persistent=False)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = (w(x).view(b, n, self.heads, self.size).transpose(1, 2) for w in (self.W_query, self.W_key, self.W_value))
        att = torch.softmax((q @ k.transpose(-2, -1)).masked_fill(self.future[:n, :n], float("-inf")), dim=-1)
        return self.out_proj((att @ v).transpose(1, 2).reshape(b, n, -1))  # no 1/sqrt(head_dim)
