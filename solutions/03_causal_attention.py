"""Reference solution for exercise 3: causal self-attention with dropout."""
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
        mask = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)  # True above the diagonal = future

    def forward(self, x):
        B, T, C = x.shape
        assert T <= self.mask.size(0), f"{T} tokens exceed context_length {self.mask.size(0)}"
        q = self.W_query(x)  # (B, T, d_out); stage: queries
        k = self.W_key(x)  # (B, T, d_out); stage: keys
        v = self.W_value(x)  # (B, T, d_out); stage: values
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_out)  # (B, T, T); stage: scores, scaled_scores
        att = att.masked_fill(self.mask[:T, :T], float("-inf"))  # stage: masked_scores
        att = torch.softmax(att, dim=-1)  # stage: weights
        att = self.dropout(att)  # stage: dropped_weights
        return att @ v  # (B, T, d_out); stage: output
