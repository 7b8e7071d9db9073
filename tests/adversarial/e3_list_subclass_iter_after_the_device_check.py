# attack: a CPU mask (mask_device) used only in a list subclass's __iter__, after the emulated device's check -> fail (runtime_error)
# Invariant: a call's outputs are taken, by exact type, inside the emulated device (found by the eighth session's red team).
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
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("unused", torch.zeros(context_length, context_length, dtype=torch.bool), persistent=False)

    def attend(self, x):
        B, T, C = x.shape
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        att = att.masked_fill(mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        att = self.dropout(att)
        return att @ v

    def forward(self, x):
        return Later([self, x])


class Later(list):
    def __iter__(self):
        yield self[0].attend(self[1])
