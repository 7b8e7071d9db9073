# expect: pass
# source: karpathy/ng-video-lecture/gpt.py, class Head (HEAD 4c8e902, after 988848a "scale by head size")
# license: MIT
# changes: class Head(head_size) reading globals n_embd/block_size/dropout -> CausalAttention(d_in, d_out,
#   context_length, dropout, qkv_bias) (contract signature); key/query/value -> W_key/W_query/W_value,
#   bias=False -> bias=qkv_bias. Computation as written.
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
        # input of size (batch, time-step, channels)
        # output of size (batch, time-step, head size)
        B,T,C = x.shape
        k = self.W_key(x)   # (B,T,hs)
        q = self.W_query(x) # (B,T,hs)
        # compute attention scores ("affinities")
        wei = q @ k.transpose(-2,-1) * k.shape[-1]**-0.5 # (B, T, hs) @ (B, hs, T) -> (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf')) # (B, T, T)
        wei = F.softmax(wei, dim=-1) # (B, T, T)
        wei = self.dropout(wei)
        # perform the weighted aggregation of the values
        v = self.W_value(x) # (B,T,hs)
        out = wei @ v # (B, T, T) @ (B, T, hs) -> (B, T, hs)
        return out
