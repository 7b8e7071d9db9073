# expect: scale_wrong_dim
# source: karpathy/ng-video-lecture/gpt.py, class Head, as of commit 3fdc1ea ("rename v2 to gpt hah", 2023-01-17);
#   fixed on 2023-01-25 in 988848a "scale by head size" (C**-0.5 -> k.shape[-1]**-0.5)
# license: MIT
# changes: class Head(head_size) reading globals n_embd/block_size/dropout -> CausalAttention(d_in, d_out,
#   context_length, dropout, qkv_bias) (contract signature; the globals become the arguments);
#   key/query/value -> W_key/W_query/W_value (contract names), bias=False -> bias=qkv_bias. Computation as written.
# bug-lines: 31
import torch
import torch.nn as nn
from torch.nn import functional as F


class CausalAttention(nn.Module):
    """ one head of self-attention """

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer('tril', torch.tril(torch.ones(context_length, context_length)))

        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B,T,C = x.shape
        k = self.W_key(x)   # (B,T,C)
        q = self.W_query(x) # (B,T,C)
        # compute attention scores ("affinities")
        wei = q @ k.transpose(-2,-1) * C**-0.5 # (B, T, C) @ (B, C, T) -> (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf')) # (B, T, T)
        wei = F.softmax(wei, dim=-1) # (B, T, T)
        wei = self.dropout(wei)
        # perform the weighted aggregation of the values
        v = self.W_value(x) # (B,T,C)
        out = wei @ v # (B, T, T) @ (B, T, C) -> (B, T, C)
        return out
