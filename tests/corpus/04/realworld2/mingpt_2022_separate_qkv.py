# expect: runtime_error
# source: karpathy/minGPT/mingpt/model.py at commit 3ed14b2 (2022-03-27, before the fused c_attn refactor), class CausalSelfAttention (https://github.com/karpathy/minGPT/blob/3ed14b2cec0dfdad3f4b2831f2b4a86d11aef150/mingpt/model.py)
# license: MIT (Copyright (c) 2020 Andrej Karpathy)
# changes: class renamed MultiHeadAttention; constructor (config) -> the contract's
#          (d_in, d_out, context_length, dropout, num_heads, qkv_bias=False): config.n_embd -> d_in (inputs) / d_out
#          (projections), config.n_head -> num_heads, config.block_size -> context_length, attn_pdrop = resid_pdrop =
#          dropout; key/query/value/proj renamed W_key/W_query/W_value/out_proj, the first three given
#          bias=qkv_bias (were bias=True); the divisibility assert now checks d_out. The forward is the author's,
#          including C taken from x (the author's n_embd is both the input and the output width) and resid_drop.
# bug-lines: 40, 41, 42, 50
import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        # key, query, value projections for all heads
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        # regularization
        self.attn_drop = nn.Dropout(dropout)
        self.resid_drop = nn.Dropout(dropout)
        # output projection
        self.out_proj = nn.Linear(d_out, d_out)
        # causal mask to ensure that attention is only applied to the left in the input sequence
        self.register_buffer("mask", torch.tril(torch.ones(context_length, context_length))
                                     .view(1, 1, context_length, context_length))
        self.n_head = num_heads

    def forward(self, x):
        B, T, C = x.size() # batch size, sequence length, embedding dimensionality (n_embd)

        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        k = self.W_key(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        q = self.W_query(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)
        v = self.W_value(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2) # (B, nh, T, hs)

        # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:,:,:T,:T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        att = self.attn_drop(att)
        y = att @ v # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C) # re-assemble all head outputs side by side

        # output projection
        y = self.resid_drop(self.out_proj(y))
        return y
