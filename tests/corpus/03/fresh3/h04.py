# expect: dropout_misplaced
# bug-lines: 33
import math

import torch
import torch.nn as nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.drop = nn.Dropout(p=dropout)
        self.register_buffer(
            "mask",
            torch.ones(context_length, context_length, dtype=torch.bool).triu(1),
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)

        att = torch.einsum("btd,bsd->bts", q, k) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:num_tokens, :num_tokens], float("-inf"))
        att = torch.softmax(att, dim=-1)

        out = torch.einsum("bts,bsd->btd", att, v)
        out = self.drop(out)
        return out
